/**
 * The one way a hosted page's route is declared, as `route({...})` declares an API route: method,
 * path, the joi schemas of its query and form, and a handler that calls one action of the page's
 * service and returns an answer (a page, a redirect or a file). Handlers never see `req` or `res`.
 *
 * `mountPages` builds the Express routes, every one with the same steps:
 *   the page headers (for a route that sets them first) → its rate limit → parse the form (POST)
 *   → validate the query and the form → handle → answer.
 * A page has no JSON error to show, so its schemas coerce instead of refusing (a `failover`, or a
 * value dropped): a malformed value is read as an absent one, and the page says what is missing.
 */
import { CookieOptions, Request, RequestHandler, Response, Router } from 'express';
import Joi from 'joi';
import type { Logger } from 'pino';
import { parseForm } from './form-body';
import { FormGuard, PageHeaderOptions, setHostedPageHeaders } from './hygiene';

/** The browser's cookies: read from the request, written to the answer as they are set. */
export interface Cookies {
  get(name: string): string | undefined;
  set(name: string, value: string, options: CookieOptions): void;
  clear(name: string, options: CookieOptions): void;
}

/** The forms' tokens (form-token.ts): issued for the forms a page shows, checked on a post where its page says. */
export interface PageForms {
  issue(purpose: string, binding: string): string;
  /** Whether this post came from a page of ours (as far as the browser says) with a token issued for `purpose` and `binding`. */
  accepts(purpose: string, binding: string): boolean;
}

/** What a page's service action may use of the request besides its validated input. */
export interface PageContext {
  /** Where the request came from, for audit records (a signature) and sign-in limits. */
  requester: { ip: string | null; userAgent: string | null };
  forms: PageForms;
  cookies: Cookies;
  /** The request's logger (its lines carry the request id). */
  log: Logger;
}

export interface PageInput<Q, F> extends PageContext {
  /** The path's parameters (`{ token }`). */
  params: Record<string, string>;
  query: Q;
  form: F;
  /** HEAD is how link checkers and mail scanners fetch a GET route: only a GET is a client's visit. */
  method: 'GET' | 'HEAD' | 'POST';
}

/**
 * What a page route answers. `headers`: the hosted-page headers this answer carries, with what the
 * page allows (framing by the business's sites, a form post ending at the app's redirect URI);
 * absent, the answer sets none beyond the route's own.
 */
export type PageAnswer =
  | { html: string; status?: number; headers?: PageHeaderOptions; retryAfterSeconds?: number }
  | { redirect: string; status: 302 | 303; headers?: PageHeaderOptions }
  | { file: { filename: string; content: Buffer; type: 'application/pdf' } };

export interface PageRoute<Q = unknown, F = unknown> {
  method: 'get' | 'post';
  /** An Express path: `/pay/:token`. */
  path: string;
  query?: Joi.ObjectSchema<Q>;
  /** POST: the form's fields (url-encoded). The `form_token` field is read by `forms.accepts`. */
  form?: Joi.ObjectSchema<F>;
  /** The hosted-page headers every answer of the route carries, set before anything runs: a rate limit's or an error's answer carries them too. */
  headers?: PageHeaderOptions;
  /** A limit that answers by itself when exceeded (the page's own "try again" answer). */
  limit?: RequestHandler;
  handle(input: PageInput<Q, F>): Promise<PageAnswer>;
}

/** Declares a page route; `Q` and `F` are inferred from the joi schemas, so the handler's input is typed. */
export function pageRoute<Q = Record<string, never>, F = Record<string, never>>(spec: PageRoute<Q, F>): PageRoute {
  return spec;
}

/** Page schemas coerce (see above); a refusal is a mistake in the schema, not the client's. */
function coerced<T>(schema: Joi.ObjectSchema<T>, value: unknown): T {
  const result = schema.validate(value ?? {}, { convert: true, stripUnknown: true, abortEarly: false });
  if (result.error) throw result.error;
  return result.value;
}

/** The value of cookie `name` in the request, or undefined. */
function cookieOf(req: Request, name: string): string | undefined {
  return (req.get('cookie') ?? '')
    .split(';')
    .map((part) => part.trim())
    .find((part) => part.startsWith(`${name}=`))
    ?.slice(name.length + 1);
}

function inputOf(req: Request, res: Response, spec: PageRoute, forms: FormGuard): PageInput<unknown, unknown> {
  return {
    params: req.params as Record<string, string>,
    query: spec.query ? coerced(spec.query, req.query) : {},
    form: spec.form ? coerced(spec.form, req.body) : {},
    method: req.method as PageInput<unknown, unknown>['method'],
    // Read only by the pages that record it: req.ip parses X-Forwarded-For on every access.
    get requester() {
      return { ip: req.ip ?? null, userAgent: req.get('user-agent') ?? null };
    },
    forms: { issue: (purpose, binding) => forms.token(purpose, binding), accepts: (purpose, binding) => forms.accepts(req, purpose, binding) },
    cookies: {
      get: (name) => cookieOf(req, name),
      set: (name, value, options) => void res.cookie(name, value, options),
      clear: (name, options) => void res.clearCookie(name, options),
    },
    get log() {
      return req.log;
    },
  };
}

function send(res: Response, answer: PageAnswer): void {
  if ('file' in answer) return void res.attachment(answer.file.filename).type(answer.file.type).send(answer.file.content);
  if (answer.headers) setHostedPageHeaders(res, answer.headers);
  if ('redirect' in answer) return void res.redirect(answer.status, answer.redirect);
  res.status(answer.status ?? 200);
  if (answer.retryAfterSeconds !== undefined) res.set('Retry-After', String(answer.retryAfterSeconds));
  res.type('html').send(answer.html);
}

/** The Express routes of these page routes, in their order. */
export function mountPages(routes: PageRoute[], forms: FormGuard): Router {
  const router = Router();
  for (const spec of routes) {
    const steps: RequestHandler[] = [];
    const { headers } = spec;
    if (headers) {
      steps.push((_req, res, next) => {
        setHostedPageHeaders(res, headers);
        next();
      });
    }
    if (spec.limit) steps.push(spec.limit);
    if (spec.method === 'post') steps.push(parseForm);
    router[spec.method](spec.path, ...steps, async (req: Request, res: Response) => send(res, await spec.handle(inputOf(req, res, spec, forms))));
  }
  return router;
}
