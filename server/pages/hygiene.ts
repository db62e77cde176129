/**
 * What every hosted page answers with, and what every form post on one must pass. Pages carry
 * their capability in the URL, so they stay out of caches, search engines, Referer headers and
 * (unless made to be embedded) other sites' frames; their forms are refused from other origins
 * or without the form token the page issued (form-token.ts).
 */
import type { Request, Response } from 'express';
import { FormTokens } from './form-token';

export interface PageHeaderOptions {
  /** The origins that may frame the page (`*` for any); none by default. */
  frameAncestors?: string[];
  /** Origins beyond our own that a form post may end up at (a redirect after it). */
  formAction?: string[];
}

/** The headers of a page no other site may frame, whose forms post to our own origin. */
export const UNFRAMED: PageHeaderOptions = {};

export function setHostedPageHeaders(res: Response, options: PageHeaderOptions = UNFRAMED): void {
  const ancestors = options.frameAncestors?.length ? options.frameAncestors.join(' ') : "'none'";
  res.set({
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
    'X-Robots-Tag': 'noindex',
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': `default-src 'none'; style-src 'self'; img-src 'self'; form-action ${["'self'", ...(options.formAction ?? [])].join(' ')}; base-uri 'none'; frame-ancestors ${ancestors}`,
    ...(options.frameAncestors?.length ? {} : { 'X-Frame-Options': 'DENY' }),
  });
}

export class FormGuard {
  private readonly origin: string;

  constructor(
    private readonly tokens: FormTokens,
    baseUrl: string,
  ) {
    this.origin = new URL(baseUrl).origin;
  }

  /** The value of the hidden `form_token` field of a form of page `pageToken` doing `purpose`. */
  token(purpose: string, pageToken: string): string {
    return this.tokens.issue(purpose, pageToken);
  }

  /**
   * Whether a form post may proceed: sent from a page of our own origin, as far as the browser says
   * (`Sec-Fetch-Site`; and `Origin`, which under the pages' no-referrer policy browsers send as
   * "null"), with the token this page issued for this purpose.
   */
  accepts(req: Request, purpose: string, pageToken: string): boolean {
    const site = req.get('sec-fetch-site');
    if (site !== undefined && site !== 'same-origin') return false;
    const origin = req.get('origin');
    if (origin !== undefined && origin !== 'null' && origin !== this.origin) return false;
    const body = req.body as Record<string, unknown> | undefined;
    return this.tokens.verify(purpose, pageToken, body?.form_token);
  }
}
