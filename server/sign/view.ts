/** The signing page (`signing_url`), its embeddable twin (`embed_url`) and the decline page: plain HTML, no scripts. */
import type { ContractParties, SigningPage } from '../contracts/service';
import { ContractView } from '../contracts/schema';
import { UNFRAMED } from '../pages/hygiene';
import { html, SafeHtml } from '../pages/html';
import { page, refusedFormPage, tryAgainLaterPage } from '../pages/layout';
import { PageAnswer } from '../pages/route';
import { contractAmount, hasSignedCopy } from './service';
import type { SignedCopyDownload, SigningForm, SigningOutcome, SigningPageState } from './service';

/** The page at `signing_url` (never framed) and its twin at `embed_url` (framable by the business's embed origins). */
export const SIGNING_VIEWS = ['sign', 'embed'] as const;
export type SigningView = (typeof SIGNING_VIEWS)[number];

const STATUS_LINES: Record<string, string> = {
  pending: 'Awaiting signatures',
  partially_signed: 'Partly signed',
  signed: 'Signed by both parties',
  declined: 'Declined',
};

/** The paths of a token's pages: a view, its decline page, the signed copy. */
const pathsOf = (token: string, view: SigningView) => {
  const base = `/contracts/${encodeURIComponent(token)}`;
  return { page: `${base}/${view}`, decline: `${base}/${view}/decline`, signedCopy: `${base}/pdf` };
};

const kindOf = (contract: ContractView) => (contract.type === 'proposal' ? 'proposal' : 'contract');

/** Who the contract is between, one row each (side by side, a phone would break every line). */
function partiesTable({ business, client }: ContractParties): SafeHtml {
  return html`<table><tbody><tr><th scope="row">Business</th><td><strong>${business}</strong></td></tr>
<tr><th scope="row">Client</th><td><strong>${client.name}</strong>${client.company ? html`<br>${client.company}` : ''}</td></tr></tbody></table>`;
}

function signatureLines(contract: ContractView): SafeHtml {
  return html`${contract.signatures.map(
    (signature) =>
      html`<p class="signed">Signed by ${signature.name} (${signature.party === 'client' ? 'client' : 'the business'}) on ${signature.signed_at.slice(0, 10)} at ${signature.signed_at.slice(11, 16)} UTC</p>`,
  )}`;
}

/** Sign posts the page's form; Decline only opens the decline page (a GET: it changes nothing). */
function signingForms(form: SigningForm, declinePath: string): SafeHtml {
  return html`<form method="post">
<input type="hidden" name="form_token" value="${form.formToken}">
<input type="hidden" name="action" value="sign">
${form.problem ? html`<p class="error" role="alert">${form.problem}</p>` : ''}
<label for="full-name">Full name</label>
<input type="text" id="full-name" name="full_name" autocomplete="name" maxlength="255" value="${form.name ?? ''}">
<label class="check"><input type="checkbox" name="agree" value="yes"> <span>I agree to the terms above and sign them electronically</span></label>
<button type="submit">Sign</button>
</form>
<form method="get" action="${declinePath}">
<button type="submit" class="secondary">Decline</button>
</form>`;
}

/** `form` is absent once the client can no longer act (signed, declined). */
export function signingPage(token: string, view: SigningView, opened: SigningPage, form?: SigningForm): string {
  const { contract, businessName, parties } = opened;
  const paths = pathsOf(token, view);
  const amount = contractAmount(contract);
  const body = html`<h1>${businessName}</h1>
<h2>${contract.type === 'proposal' ? 'Proposal' : 'Contract'}: ${contract.title}</h2>
<p class="status" data-status="${contract.status}">${STATUS_LINES[contract.status] ?? contract.status}</p>
${contract.livemode ? '' : html`<p class="test-mode"><strong>Test mode:</strong> this is a test contract.</p>`}
${partiesTable(parties)}
<div class="document">${contract.body}</div>
${amount ? html`<p>Amount: <strong>${amount}</strong></p>` : ''}
${signatureLines(contract)}
${contract.status === 'declined' ? html`<p class="notice">This ${kindOf(contract)} was declined.</p>` : ''}
${hasSignedCopy(opened) ? html`<p><a class="download" href="${paths.signedCopy}" download>Download signed PDF</a><br><span class="hint">Your copy: the ${kindOf(contract)} text and its signature record.</span></p>` : ''}
${form ? signingForms(form, paths.decline) : ''}
<footer>Sent by ${businessName}</footer>`;
  return page(`${contract.title} — ${businessName}`, body);
}

/** The step between Decline and declining: the page says what it means, and only `Confirm decline` posts. */
export function declinePage(token: string, view: SigningView, { contract, businessName, parties }: SigningPage, form: SigningForm): string {
  const paths = pathsOf(token, view);
  const kind = kindOf(contract);
  const body = html`<h1>${businessName}</h1>
<h2>Decline the ${kind}: ${contract.title}</h2>
${contract.livemode ? '' : html`<p class="test-mode"><strong>Test mode:</strong> this is a test contract.</p>`}
${partiesTable(parties)}
<p class="notice">Once declined, this ${kind} can no longer be signed, by you or by ${parties.business}. Nothing has been declined yet.</p>
<form method="post" action="${paths.page}">
<input type="hidden" name="form_token" value="${form.formToken}">
<input type="hidden" name="action" value="confirm_decline">
<button type="submit" class="danger">Confirm decline</button>
</form>
<p><a href="${paths.page}">Back to the ${kind}</a></p>
<footer>Sent by ${businessName}</footer>`;
  return page(`Decline ${contract.title} — ${businessName}`, body);
}

export function contractNotFoundPage(): string {
  return page('Contract not found', html`<h1>Contract not found</h1><p>This signing link is not valid. Ask the sender for a new one.</p>`);
}

function unsignedPage(): string {
  return page('Not signed yet', html`<h1>Not signed yet</h1><p>The signed PDF is there once you have signed. Go back to the contract to sign it.</p>`);
}

/** A view's headers: framable only as `embed` (by the business's embed origins; any site when it names none). */
const headersOf = (view: SigningView, opened: SigningPageState['opened']) => (view === 'embed' ? { frameAncestors: opened?.embedOrigins ?? ['*'] } : UNFRAMED);

export function signingPageAnswer(token: string, view: SigningView, { opened, form }: SigningPageState, status = 200): PageAnswer {
  const headers = headersOf(view, opened);
  if (!opened) return { status: 404, headers, html: contractNotFoundPage() };
  return { status, headers, html: signingPage(token, view, opened, form) };
}

/** The decline page while the client can still decline; otherwise back to the page, which shows where the contract stands. */
export function declinePageAnswer(token: string, view: SigningView, { opened, form }: SigningPageState): PageAnswer {
  const headers = headersOf(view, opened);
  if (!opened) return { status: 404, headers, html: contractNotFoundPage() };
  if (!form) return { status: 303, headers, redirect: pathsOf(token, view).page };
  return { headers, html: declinePage(token, view, opened, form) };
}

export function signingOutcomeAnswer(token: string, view: SigningView, outcome: SigningOutcome): PageAnswer {
  switch (outcome.kind) {
    case 'refused':
      return { status: 403, headers: UNFRAMED, html: refusedFormPage() };
    case 'not_found':
      return { status: 404, html: contractNotFoundPage() };
    case 'again':
      return signingPageAnswer(token, view, outcome.page, 422);
    case 'confirm_decline':
      return { status: 303, redirect: pathsOf(token, view).decline };
    case 'done':
      return { status: 303, redirect: pathsOf(token, view).page };
  }
}

export function signedCopyAnswer(download: SignedCopyDownload): PageAnswer {
  switch (download.kind) {
    case 'not_found':
      return { status: 404, html: contractNotFoundPage() };
    case 'unsigned':
      return { status: 404, html: unsignedPage() };
    case 'busy':
      return { status: 503, retryAfterSeconds: download.retryAfterSeconds, html: tryAgainLaterPage() };
    case 'file':
      return { file: { filename: download.filename, content: download.content, type: 'application/pdf' } };
  }
}
