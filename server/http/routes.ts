/**
 * The one place a partner endpoint is declared: method, path, accepted scopes, request schemas
 * (joi), documented response and handler. `mountRoutes` builds the Express routes from these
 * tables and server/openapi/document.ts builds the OpenAPI paths from the same tables, so a
 * route, its scopes and its request schema are written once.
 *
 * Every route runs the same steps, in this order:
 *   authenticate → rate limit → scope → parse JSON, or read a document route's bytes (the guard's steps)
 *   → validate the `{id}`, the query and the body → claim the Idempotency-Key (POST)
 *   → handle (inside the key's transaction when there is one) → respond.
 * Handlers receive validated input and the services; they never see `req` or `res`.
 */
import { Static, TSchema } from '@sinclair/typebox';
import { Request, Response, Router } from 'express';
import Joi from 'joi';
import { Credential } from '../auth/credential';
import { Scope } from '../auth/scopes';
import { BusinessClocks } from '../db/clocks';
import { BadRequest } from '../errors';
import { Serializer, serializerOf } from '../shapes/component';
import { validateInput, validateQuery } from '../validation';
import { DocumentBody, rawDocumentOf } from './document-body';
import { Guard } from './guard';
import { fingerprintOf, IdempotencyKeys, idempotencyKeyOf } from './idempotency';
import { credentialOf, recordId } from './request';

export type RouteMethod = 'get' | 'post' | 'patch' | 'delete';

export interface RouteInput<B, Q> {
  cred: Credential;
  /** The `{id}` of the path (0 when the path has none). */
  id: number;
  body: B;
  query: Q;
  /** Where the request came from, for audit records (a countersignature). */
  requester: { ip: string | null; userAgent: string | null };
  /** Aborted when the client goes away before its answer: a handler that only waits (a long poll) stops then. */
  gone: AbortSignal;
  /**
   * The credential's Idempotency-Key for this request (POST), when sent: work that calls out
   * (`callsOut`) keys its own records by it, so a retry resumes what a dead process began.
   */
  requestKey?: string;
}

/** A JSON success response: its shape (server/shapes) documents it, types the handler's result and writes it. */
export interface JsonResponse<S extends TSchema = TSchema> {
  status: 200 | 201;
  description: string;
  schema: S;
}

export type FileMediaType = 'application/pdf' | 'application/xml';

/** A GET's file download: the handler returns a FileBody of this media type, or of one of these (naming its `type`). */
export interface FileResponse {
  status: 200;
  description: string;
  file: FileMediaType | readonly FileMediaType[];
}

type AnyResponse = JsonResponse | FileResponse;

/** What the handler of a route with response `R` resolves to. */
export type ResponseBody<R> = R extends JsonResponse<infer S> ? Static<S> : FileBody;

/**
 * A route whose handler reads body `B` and query `Q`, answers `R` and calls the services `S`: what its
 * resource's table names (`{ clients: ClientService }`), not the whole Services of server/services.ts,
 * which is built above every resource.
 */
export interface RouteSpec<B, Q, R extends AnyResponse = AnyResponse, S = never> {
  method: RouteMethod;
  /** The OpenAPI path template below the API prefix: `/clients/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** Any one of these suffices; [] admits any valid credential. */
  scopes: Scope[];
  /** What the path's `{id}` names, for its 404 ("Client not found"). */
  record?: string;
  query?: Joi.ObjectSchema<Q>;
  /** POST and PATCH: the body. Without one, a POST takes no fields (an empty object or nothing). */
  body?: Joi.ObjectSchema<B>;
  /**
   * POST: the body is a document of these media types, read as its bytes (`documentBody(…)`: the
   * handler gets a RawDocument) with a limit of its own, instead of a JSON object. An
   * Idempotency-Key's fingerprint is then over its bytes once any Content-Encoding is undone.
   */
  document?: DocumentBody<B>;
  /**
   * The success response: JSON of the shape `schema` (its OpenAPI component, and the serializer
   * that writes it), or (GET only) a `file` of that media type, which the handler returns as a FileBody.
   */
  response: R;
  /** Error responses beyond the ones every authenticated route has: status → a response component's name. */
  errors?: Record<string, string>;
  /**
   * The handler calls a third party (a payment gateway), or works a while outside the database (reads
   * an uploaded document on a worker thread), between transactions of its own, so no network call or
   * long wait happens inside one: an Idempotency-Key's work then runs outside the key's transaction,
   * and its response is stored once the work has finished.
   */
  callsOut?: true;
  /**
   * The response reports what happened after the work committed (`/send`'s `email.status`, from the
   * first attempt an afterCommit hook makes): under an Idempotency-Key the response is made once
   * those hooks have run and stored then, once. This reads that response back from what the commit
   * left, for a retry of a request that died in between: the work is not done again.
   */
  afterCommitOutcome?(input: RouteInput<B, Q>, services: S): Promise<unknown>;
  handle(input: RouteInput<B, Q>, services: S): Promise<ResponseBody<R>>;
}

/** A route of any table; `S`, the services its handler calls (none by default: a reader that does not handle it). */
export type Route<S = never> = RouteSpec<unknown, unknown, AnyResponse, S>;

/** What a route with a `file` response returns: sent as a download under `filename`. */
export interface FileBody {
  filename: string;
  content: Buffer;
  /** Its media type, when the route answers with more than one. */
  type?: FileMediaType;
}

/**
 * The `route` of a table whose handlers call the services `S`: `const route = routeUsing<{ clients:
 * ClientService }>()`. A route declares what it reads: `B` and `Q` are inferred from the joi schemas,
 * so the handler's input is typed, and `R` from the response, so its result is checked against the
 * response's shape. server/partner-api.ts checks that the Services satisfy every table's `S`.
 */
export function routeUsing<S>() {
  return <B = Record<string, never>, Q = Record<string, never>, R extends AnyResponse = AnyResponse>(spec: RouteSpec<B, Q, R, S>): Route<S> => spec;
}

/** A body that must be empty: actions such as `/send` take no fields, and any field sent is a 422. */
export const noFields = Joi.object<Record<string, never>>({});

export function bodySchemaOf(spec: Route): Joi.ObjectSchema | undefined {
  if (spec.document) return undefined;
  if (spec.body) return spec.body;
  return spec.method === 'post' ? noFields : undefined;
}

/** `/clients/{id}` → `/clients/:id`. */
const expressPath = (template: string) => template.replace(/\{(\w+)\}/g, ':$1');

function jsonObject(req: Request): unknown {
  const raw: unknown = req.body ?? {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new BadRequest('The request body must be a JSON object');
  return raw;
}

/**
 * The request's path below the API prefix it came in on (`/clients/12`), as Express matched it
 * (ignoring case): one request sent to either prefix is the same request to an Idempotency-Key.
 */
function pathBelow(prefixes: readonly string[], path: string): string {
  const lower = path.toLowerCase();
  const prefix = prefixes.find((p) => lower.startsWith(`${p.toLowerCase()}/`));
  return prefix ? path.slice(prefix.length) : path;
}

function abortedOnClose(res: Response): AbortSignal {
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  return gone.signal;
}

/** What writes a route's JSON: its shape's serializer, compiled here once per shape (it writes the shape's fields only, in the shape's order). */
function serializerFor(response: AnyResponse): Serializer {
  if ('file' in response) {
    return () => {
      throw new Error('A file response is sent as its bytes, never serialized');
    };
  }
  return serializerOf(response.schema);
}

/**
 * Registers every route on `router` under each of `prefixes`, as one layer per route: a nested
 * router per prefix made the router trim and restore the URL on every request, a tenth of a cached
 * GET's allocations.
 */
export function mountRoutes<S extends { clocks: BusinessClocks }>(
  router: Router,
  prefixes: readonly string[],
  routes: Route<S>[],
  deps: { services: S; guard: Guard; idempotency: IdempotencyKeys },
): void {
  // Longest first, so `/api/v1/partner/…` is not taken for `/api/v1` + `/partner/…`.
  const byLength = [...prefixes].sort((a, b) => b.length - a.length);
  for (const spec of routes) {
    const bodySchema = bodySchemaOf(spec);
    const file = 'file' in spec.response ? spec.response.file : undefined;
    if (file && spec.method !== 'get') throw new Error(`${spec.operationId}: only a GET answers with a file`);
    const document = spec.document;
    if (document && spec.method !== 'post') throw new Error(`${spec.operationId}: only a POST takes a document body`);
    const serialize = serializerFor(spec.response);
    const guard = deps.guard(spec.scopes, document);
    const afterCommitOutcome = spec.afterCommitOutcome?.bind(spec);
    const paths = prefixes.map((prefix) => `${prefix}${expressPath(spec.path)}`);
    const serve = async (req: Request, res: Response) => {
      const input: RouteInput<unknown, unknown> = {
        cred: credentialOf(req),
        id: spec.record ? recordId(req, spec.record) : 0,
        query: spec.query ? validateQuery(spec.query, req.query) : {},
        body: document ? rawDocumentOf(req, document) : bodySchema ? validateInput(bodySchema, jsonObject(req)) : {},
        // Read only by the routes that record it: req.ip parses X-Forwarded-For on every access.
        get requester() {
          return { ip: req.ip ?? null, userAgent: req.get('user-agent') ?? null };
        },
        // Made only for the routes that read it.
        get gone() {
          return abortedOnClose(res);
        },
      };
      const key = spec.method === 'post' ? idempotencyKeyOf(req.get('Idempotency-Key')) : undefined;
      if (key !== undefined) input.requestKey = `${input.cred.subject}:${key}`;
      const handle = () => spec.handle(input, deps.services);
      if (file) {
        const { filename, content, type } = (await handle()) as FileBody;
        return void res.status(200).attachment(filename).type(type ?? [file].flat()[0]).send(content);
      }
      if (key === undefined) return void res.status(spec.response.status).type('json').send(serialize(await handle()));

      // A document is fingerprinted by its bytes, with its media type and the query that goes with it.
      const fingerprint = document
        ? fingerprintOf(req.method, pathBelow(byLength, req.path), input.body, input.query)
        : fingerprintOf(req.method, pathBelow(byLength, req.path), req.body);
      const request = { subject: input.cred.subject, key, fingerprint };
      const answer = await deps.idempotency.run(request, spec.response.status, handle, {
        transactional: !spec.callsOut,
        serialize,
        outcome: afterCommitOutcome && (() => afterCommitOutcome(input, deps.services)),
      });
      if (answer.replayed) res.set('Idempotent-Replayed', 'true');
      res.status(answer.status).type('json').send(answer.body);
    };
    router[spec.method](paths, async (req: Request, res: Response) => {
      await guard(req, res);
      // Once the caller is known, its business's clock dates what the request writes (a test mode's may be frozen).
      await deps.services.clocks.actFor(credentialOf(req), () => serve(req, res));
    });
  }
}
