/** The signing page (`signing_url`) and its embeddable twin (`embed_url`): plain HTML, no scripts. */
import { ContractView } from '../contracts/schema';
import { formatMoney } from '../invoices/email';
import { toMinor } from '../money/amount';
import { UNFRAMED } from '../pages/hygiene';
import { html, SafeHtml } from '../pages/html';
import { page, refusedFormPage } from '../pages/layout';
import { PageAnswer } from '../pages/route';
import type { SigningForm, SigningOutcome, SigningPageState } from './service';

/** The page at `signing_url` (never framed) and its twin at `embed_url` (framable by the business's embed origins). */
export const SIGNING_VIEWS = ['sign', 'embed'] as const;
export type SigningView = (typeof SIGNING_VIEWS)[number];

const STATUS_LINES: Record<string, string> = {
  pending: 'Awaiting signatures',
  partially_signed: 'Partly signed',
  signed: 'Signed by both parties',
  declined: 'Declined',
};

function signatureLines(contract: ContractView): SafeHtml {
  return html`${contract.signatures.map(
    (signature) =>
      html`<p class="signed">Signed by ${signature.name} (${signature.party === 'client' ? 'client' : 'the business'}) on ${signature.signed_at.slice(0, 10)} at ${signature.signed_at.slice(11, 16)} UTC</p>`,
  )}`;
}

function signingForms(form: SigningForm): SafeHtml {
  return html`<form method="post">
<input type="hidden" name="form_token" value="${form.formToken}">
<input type="hidden" name="action" value="sign">
${form.problem ? html`<p class="error" role="alert">${form.problem}</p>` : ''}
<label for="full-name">Full name</label>
<input type="text" id="full-name" name="full_name" autocomplete="name" maxlength="255" value="${form.name ?? ''}">
<label class="check"><input type="checkbox" name="agree" value="yes"> <span>I agree to the terms above and sign them electronically</span></label>
<button type="submit">Sign</button>
</form>
<form method="post">
<input type="hidden" name="form_token" value="${form.formToken}">
<input type="hidden" name="action" value="decline">
<button type="submit" class="secondary">Decline</button>
</form>`;
}

/** `form` is absent once the client can no longer act (signed, declined). */
export function signingPage(contract: ContractView, businessName: string, form?: SigningForm): string {
  const amount = contract.amount !== null && contract.currency ? formatMoney(toMinor(contract.amount, contract.currency), contract.currency) : null;
  const body = html`<h1>${businessName}</h1>
<h2>${contract.type === 'proposal' ? 'Proposal' : 'Contract'}: ${contract.title}</h2>
<p class="status" data-status="${contract.status}">${STATUS_LINES[contract.status] ?? contract.status}</p>
${contract.livemode ? '' : html`<p class="test-mode"><strong>Test mode:</strong> this is a test contract.</p>`}
<div class="document">${contract.body}</div>
${amount ? html`<p>Amount: <strong>${amount}</strong></p>` : ''}
${signatureLines(contract)}
${contract.status === 'declined' ? html`<p class="notice">This contract was declined.</p>` : ''}
${form ? signingForms(form) : ''}
<footer>Sent by ${businessName}</footer>`;
  return page(`${contract.title} — ${businessName}`, body);
}

export function contractNotFoundPage(): string {
  return page('Contract not found', html`<h1>Contract not found</h1><p>This signing link is not valid. Ask the sender for a new one.</p>`);
}

/** The page, framable only as `embed` (by the business's embed origins; any site when it names none). */
export function signingPageAnswer(view: SigningView, { opened, form }: SigningPageState, status = 200): PageAnswer {
  const headers = view === 'embed' ? { frameAncestors: opened?.embedOrigins ?? ['*'] } : UNFRAMED;
  if (!opened) return { status: 404, headers, html: contractNotFoundPage() };
  return { status, headers, html: signingPage(opened.contract, opened.businessName, form) };
}

export function signingOutcomeAnswer(token: string, view: SigningView, outcome: SigningOutcome): PageAnswer {
  switch (outcome.kind) {
    case 'refused':
      return { status: 403, headers: UNFRAMED, html: refusedFormPage() };
    case 'not_found':
      return { status: 404, html: contractNotFoundPage() };
    case 'again':
      return signingPageAnswer(view, outcome.page, 422);
    case 'done':
      return { status: 303, redirect: `/contracts/${encodeURIComponent(token)}/${view}` };
  }
}
