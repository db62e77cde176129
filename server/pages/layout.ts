/** The frame of every hosted page: one stylesheet (no inline style or script, so the CSP stays strict), readable on a phone. */
import { RequestHandler, Router } from 'express';
import { html, SafeHtml } from './html';

export const STYLESHEET_PATH = '/assets/pages.css';

/**
 * Amounts (.num) and dates (.date) never wrap; any other cell may break anywhere (an unbroken
 * description would otherwise set the table's width), a .wide column takes the room the amounts
 * leave, and narrow screens get smaller tables (the amount due's row scaled with them) with less
 * padding: a table of long amounts (KWD 12.345, $9,999,999.99) still fits a 390 px phone. A
 * payment's reference is a row of its own (tr.reference) under its payment's, no rule between them.
 */
const STYLESHEET = `
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;max-width:40rem;margin:0 auto;padding:1.5rem 1rem;color:#1f2328;line-height:1.5}
h1{font-size:1.4rem;margin:0 0 .25rem}h2{font-size:1.1rem;margin:0 0 1rem;color:#57606a;font-weight:500}
table{border-collapse:collapse;width:100%;margin:1rem 0}td,th{padding:.5rem .4rem;border-bottom:1px solid #d0d7de;text-align:left;vertical-align:top;overflow-wrap:anywhere}
.num{text-align:right;white-space:nowrap}.date{white-space:nowrap}.wide{width:100%}tfoot th,tfoot td{border-bottom:none}.due td,.due th{font-weight:700;font-size:1.05em}
tr.with-reference td{border-bottom:none;padding-bottom:0}tr.reference td{padding-top:.1rem}
.status{display:inline-block;padding:.2rem .7rem;border-radius:1rem;background:#ddf4ff;color:#0a3069;font-weight:600}
.status[data-status=paid]{background:#dafbe1;color:#116329}.status[data-status=void]{background:#eaeef2;color:#57606a}
.notice{padding:.75rem 1rem;border-radius:.5rem;background:#fff8c5;border:1px solid #d4a72c}
.test-mode{padding:.4rem .75rem;border-radius:.4rem;background:#fbefff;border:1px solid #c297ff;font-size:.9rem}
button{font:inherit;font-weight:600;padding:.75rem 1.25rem;border:0;border-radius:.5rem;background:#1f6feb;color:#fff;cursor:pointer;width:100%}
a.button{display:inline-block;font-weight:600;padding:.75rem 1.25rem;border-radius:.5rem;background:#1f6feb;color:#fff;text-decoration:none;text-align:center;box-sizing:border-box}
button:hover,a.button:hover{background:#1a5fd0}button.secondary{background:#eaeef2;color:#1f2328}button.danger{background:#cf222e}button.danger:hover{background:#a40e26}
form{margin:1.5rem 0}.hint{font-size:.85rem;color:#57606a}.document{white-space:pre-wrap;border:1px solid #d0d7de;border-radius:.5rem;padding:1rem;background:#f6f8fa}
label{display:block;margin:.75rem 0 .25rem;font-weight:600}label.check{display:flex;gap:.5rem;align-items:flex-start;font-weight:400}
label+input+button,label.check+button{margin-top:1rem}
input[type=text],input[type=password]{font:inherit;padding:.6rem;width:100%;box-sizing:border-box;border:1px solid #8c959f;border-radius:.4rem}
input[type=checkbox]{margin-top:.35rem}.error{color:#cf222e;font-weight:600}.signed{padding:.75rem 1rem;border-radius:.5rem;background:#dafbe1;border:1px solid #4ac26b}
a{color:#0969da}footer{margin-top:2rem;font-size:.85rem;color:#57606a}a.download{font-weight:600}
@media (min-width:30rem){button{width:auto}}
@media (max-width:29.99rem){a.button{display:block}body{padding:1rem .75rem}table{font-size:.875rem}td,th{padding:.4rem .2rem}}
`.trim();

/** `refresh`: reload after this many seconds, or go to `url` (a page waiting on something, with no script). */
export function page(title: string, body: SafeHtml, options: { refresh?: { seconds: number; url?: string } } = {}): string {
  const refresh = options.refresh ? `${options.refresh.seconds}${options.refresh.url ? `;url=${options.refresh.url}` : ''}` : null;
  return html`<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
${refresh ? html`<meta http-equiv="refresh" content="${refresh}">` : ''}
<title>${title}</title><link rel="stylesheet" href="${STYLESHEET_PATH}"></head>
<body>${body}</body></html>`.value;
}

/** A form post that did not come from its page (another origin, or a missing or stale form token). */
export function refusedFormPage(): string {
  return page('Please try again', html`<h1>Please try again</h1><p>This form has expired or did not come from this page. Go back, reload the page and try again.</p>`);
}

/** Too many downloads from this address, or too many PDFs being made: the answer carries Retry-After. */
export function tryAgainLaterPage(): string {
  return page('Please try again shortly', html`<h1>Please try again shortly</h1><p>Too many downloads are under way right now. Please try again in a minute.</p>`);
}

const serveStylesheet: RequestHandler = (_req, res) => {
  res.set({ 'Cache-Control': 'public, max-age=3600', 'X-Content-Type-Options': 'nosniff' }).type('text/css').send(STYLESHEET);
};

export function pageAssetRoutes(): Router {
  return Router().get(STYLESHEET_PATH, serveStylesheet);
}
