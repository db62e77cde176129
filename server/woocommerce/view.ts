/** The connect pages (plain HTML, no scripts) and the CLI's view of a connected store. */
import { html, SafeHtml } from '../pages/html';
import { page, refusedFormPage } from '../pages/layout';
import { PageAnswer } from '../pages/route';
import { WooStoreRow } from './model';
import { ConnectedStore, linkPath, LinkState } from './schema';

export function toConnectedStore(row: WooStoreRow): ConnectedStore {
  return {
    id: row.id,
    business_id: row.business_id,
    livemode: row.livemode,
    store_url: row.store_url,
    consumer_key_ending: row.consumer_key.slice(-7),
    key_permissions: row.key_permissions,
    webhook_id: row.webhook_id,
    connected_at: row.connected_at,
    last_polled_at: row.last_polled_at,
    last_error: row.last_error,
  };
}

/** What the connect page shows besides the link's state: the form's token, and why a typed address was refused. */
export interface ConnectForm {
  formToken: string;
  problem?: string;
  typed?: string;
}

const testModeNote = html`<p class="test-mode"><strong>Test mode:</strong> orders become test invoices, which e-mail nobody and move no money.</p>`;

function storeForm(form: ConnectForm, label: string, button: string): SafeHtml {
  return html`<form method="post">
<input type="hidden" name="form_token" value="${form.formToken}">
${form.problem ? html`<p class="error" role="alert">${form.problem}</p>` : ''}
<label for="store-url">${label}</label>
<input type="text" id="store-url" name="store_url" inputmode="url" autocomplete="url" maxlength="2048" placeholder="https://shop.example.com" value="${form.typed ?? ''}">
<button type="submit"${button === 'Continue' ? '' : html` class="secondary"`}>${button}</button>
</form>`;
}

function connectPage(state: Extract<LinkState, { kind: 'open' }>, form: ConnectForm): string {
  const { link, businessName, authorizeUrl } = state;
  const intro = html`<h1>Connect your WooCommerce store</h1>
<h2>to ${businessName}</h2>
${link.livemode ? '' : testModeNote}`;
  if (!authorizeUrl || !link.store_url) {
    return page(
      `Connect your WooCommerce store — ${businessName}`,
      html`${intro}
<p>Completed orders of your store will become invoices of ${businessName}, with their payments and refunds. Nothing to install: WooCommerce asks you to approve the connection.</p>
${storeForm(form, 'Your store\'s address', 'Continue')}`,
    );
  }
  return page(
    `Connect ${link.store_url} — ${businessName}`,
    html`${intro}
<table><tbody><tr><th scope="row">Store</th><td><strong>${link.store_url}</strong></td></tr></tbody></table>
<ol>
<li>Your store asks you to sign in, as its administrator or shop manager.</li>
<li>WooCommerce asks you to approve <strong>read and write</strong> access for Invoicing.</li>
<li>You come back here. From then on, each completed order becomes an invoice, with its payment and refunds.</li>
</ol>
<p><a class="button" href="${authorizeUrl}">Continue to WooCommerce</a></p>
${link.store_url_fixed ? '' : storeForm(form, 'Not this store? Its address', 'Use this address')}`,
  );
}

function connectedPage(storeUrl: string, businessName: string): string {
  return page(
    `Store connected — ${businessName}`,
    html`<h1>Store connected</h1>
<h2>${storeUrl}</h2>
<p class="signed">${storeUrl} is connected to <strong>${businessName}</strong>.</p>
<p>Each completed order now becomes an invoice, with its payment and refunds; orders a delivery missed are caught up every few minutes.</p>
<p class="hint">You can close this page. To stop, have the store disconnected (<code>invoicing woo disconnect</code>), then revoke its key "Invoicing (…)" in WooCommerce › Settings › Advanced › REST API.</p>`,
  );
}

function deniedPage(token: string, storeUrl: string | null, businessName: string): string {
  return page(
    'Store not connected',
    html`<h1>Store not connected</h1>
<h2>to ${businessName}</h2>
<p class="notice">You did not approve the connection in WooCommerce, so nothing was connected${storeUrl ? html` and ${storeUrl} was not changed` : ''}.</p>
<p><a class="button" href="${linkPath(token)}">Try again</a></p>`,
  );
}

function notReceivedPage(token: string, businessName: string): string {
  return page(
    'Store not connected yet',
    html`<h1>Store not connected yet</h1>
<h2>to ${businessName}</h2>
<p class="notice">WooCommerce says you approved, but the store's keys did not reach us, so nothing was connected.</p>
<p><a class="button" href="${linkPath(token)}">Try again</a></p>`,
  );
}

const unknownLinkPage = () =>
  page('Link not valid', html`<h1>This link is not valid</h1><p>Check that the whole link was copied, or ask for a new one (<code>invoicing woo connect-link</code>).</p>`);
const expiredLinkPage = () =>
  page('Link expired', html`<h1>This link has expired</h1><p>A connect link works for 24 hours, for one store. Ask for a new one (<code>invoicing woo connect-link</code>).</p>`);

/** A link that is not open: unknown, expired or used, or the store it connected. */
function closedLinkAnswer(state: Exclude<LinkState, { kind: 'open' }>): PageAnswer {
  switch (state.kind) {
    case 'unknown':
      return { status: 404, html: unknownLinkPage() };
    case 'expired':
      return { status: 410, html: expiredLinkPage() };
    case 'connected':
      return { html: connectedPage(state.storeUrl, state.businessName) };
  }
}

/** GET and POST of the connect page; `refused`: a post that did not come from the page. */
export function connectAnswer(state: LinkState, form: ConnectForm | 'refused'): PageAnswer {
  if (state.kind !== 'open') return closedLinkAnswer(state);
  if (form === 'refused') return { status: 403, html: refusedFormPage() };
  return { status: form.problem ? 422 : 200, html: connectPage(state, form) };
}

/** WooCommerce's return after the owner approved (`success=1`) or denied (`success=0`). */
export function returnAnswer(token: string, state: LinkState, success: '1' | '0' | null): PageAnswer {
  if (state.kind !== 'open') return closedLinkAnswer(state);
  return { html: success === '0' ? deniedPage(token, state.link.store_url, state.businessName) : notReceivedPage(token, state.businessName) };
}
