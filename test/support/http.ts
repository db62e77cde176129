/**
 * A small HTTP client for the tests: real requests over the loopback, JSON in and out.
 *
 * Every response to a path under /api/v1/partner or /api/v1 is checked against the OpenAPI
 * document (server/openapi/document.ts): the status must be documented for the operation, the
 * body must match its schema (JSON Schema 2020-12, validated by Ajv) and the documented required
 * headers must be present and well-formed. A request the API accepted (a 2xx answer) must match
 * the document too: its query parameters and its JSON body, against the request schemas the
 * document converts from the routes' joi schemas. A mismatch throws, so the test that made the call
 * fails, naming the method, path, status and schema error. Refused requests are not checked: tests
 * send malformed ones on purpose, but the answers must still be documented.
 */
import Ajv2020, { ErrorObject, ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import {
  Header,
  HttpMethod,
  HTTP_METHODS,
  OpenApiDocument,
  Operation,
  openapiDocument,
  Parameter,
  Reference,
  RequestBody,
  Response,
} from '../../server/openapi/document';
import { Schema } from '../../server/openapi/request-schema';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
  /** The body as it came: a PDF's bytes. */
  bytes: Buffer;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  /** Sent as-is instead of JSON-encoding `body`: text, or a document's bytes (send its content-type in `headers`). */
  raw?: string | Buffer;
}

export const PARTNER_PREFIX = '/api/v1/partner';
/** Longest first: /api/v1/partner/x is the partner prefix, not /api/v1 + /partner/x. */
const API_PREFIXES = ['/api/v1/partner', '/api/v1'];

export class Api {
  constructor(
    readonly baseUrl: string,
    readonly key?: string,
  ) {}

  withKey(key: string | undefined): Api {
    return new Api(this.baseUrl, key);
  }

  get<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('GET', path, undefined, options);
  }
  post<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('POST', path, body, options);
  }
  patch<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('PATCH', path, body, options);
  }
  delete<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('DELETE', path, undefined, options);
  }

  /** `path` is relative to /api/v1/partner unless it starts with /api/ or is a whole URL. */
  async request<T = any>(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const url = /^https?:/.test(path) ? path : `${this.baseUrl}${path.startsWith('/api/') || path.startsWith('/oauth') ? '' : PARTNER_PREFIX}${path}`;
    const headers: Record<string, string> = { ...(this.key ? { authorization: `Bearer ${this.key}` } : {}), ...options.headers };
    let payload: string | Buffer | undefined = options.raw;
    if (payload === undefined && body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(url, { method, headers, body: typeof payload === 'string' || payload === undefined ? payload : new Uint8Array(payload) });
    const bytes = Buffer.from(await res.arrayBuffer());
    const text = bytes.toString('utf8');
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    const response: ApiResponse<T> = { status: res.status, headers: res.headers, body: parsed as T, text, bytes };
    const contentType = Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1];
    openApiValidator().check(method, url, response, typeof payload === 'string' ? payload : payload?.toString('latin1'), contentType);
    return response;
  }
}

// ---------------------------------------------------------------------------------------------
// The OpenAPI response check

export class OpenApiMismatch extends Error {
  override name = 'OpenApiMismatch';
}

interface MatchedOperation {
  template: string;
  method: HttpMethod;
  operation: Operation;
}

/** The API path of a URL below one of the prefixes (still percent-encoded), or null. */
export function apiPathOf(url: string): string | null {
  const { pathname } = new URL(url, 'http://localhost');
  for (const prefix of API_PREFIXES) {
    if (pathname === prefix) return '/';
    if (pathname.startsWith(`${prefix}/`)) return pathname.slice(prefix.length);
  }
  return null;
}

const formatErrors = (errors: ErrorObject[] | null | undefined): string =>
  (errors ?? [])
    .slice(0, 8)
    .map((e) => `${e.instancePath || '(root)'} ${e.message ?? e.keyword}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''}`)
    .join('; ');

/** `#/components/schemas/Client` → `Client`: each component schema is registered in Ajv under its name. */
function rewriteRefs<T>(value: T): T {
  if (Array.isArray(value)) return value.map(rewriteRefs) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = k === '$ref' && typeof v === 'string' ? v.replace(/^#\/components\/schemas\//, 'urn:schema:') : rewriteRefs(v);
    }
    return out as T;
  }
  return value;
}

export class OpenApiValidator {
  private readonly ajv: Ajv2020;
  private readonly operations: (MatchedOperation & { pattern: RegExp })[] = [];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(readonly document: OpenApiDocument) {
    // Strict: an unknown keyword, a malformed schema or a keyword without its type is an error, not
    // ignored. (strictRequired is off: `oneOf: [{ required: [a] }, { required: [b] }]` is the idiom.)
    this.ajv = new Ajv2020({ strict: true, strictRequired: false, allowUnionTypes: true, allErrors: true, validateFormats: true });
    addFormats(this.ajv);
    // RFC 6531 addresses: what joi's email() accepts with internationalised labels; the API checks the rest.
    this.ajv.addFormat('idn-email', /^[^\s@]+@[^\s@]+$/u);
    // A file's bytes (a PDF): the media type is what is checked.
    this.ajv.addFormat('binary', true);
    this.ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs']);
    for (const [name, schema] of Object.entries(document.components.schemas)) {
      this.ajv.addSchema(rewriteRefs(schema), `urn:schema:${name}`);
    }
    for (const [template, item] of Object.entries(document.paths)) {
      const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);
      for (const method of HTTP_METHODS) {
        const operation = item[method];
        if (operation) this.operations.push({ template, method, operation, pattern });
      }
    }
  }

  /** The operation serving `method` `apiPath` (a path below the prefix), if the document has one. */
  match(method: string, apiPath: string): MatchedOperation | undefined {
    const m = method.toLowerCase();
    // Express routes are not strict about one trailing slash.
    const path = apiPath.length > 1 ? apiPath.replace(/\/$/, '') : apiPath;
    return this.operations.find((op) => op.method === m && op.pattern.test(path));
  }

  resolve<T>(value: T | Reference): T {
    let current: unknown = value;
    for (let depth = 0; current && typeof current === 'object' && '$ref' in current; depth += 1) {
      if (depth > 10) throw new Error('OpenAPI: $ref loop');
      const pointer = (current as Reference).$ref;
      if (!pointer.startsWith('#/')) throw new Error(`OpenAPI: external $ref ${pointer}`);
      current = pointer
        .slice(2)
        .split('/')
        .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], this.document);
      if (current === undefined) throw new Error(`OpenAPI: unresolved $ref ${pointer}`);
    }
    return current as T;
  }

  /** A compiled validator for a schema of the document (cached by `key`). */
  compile(key: string, schema: Schema | Reference): ValidateFunction {
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(rewriteRefs(schema));
      this.compiled.set(key, validate);
    }
    return validate;
  }

  /** Compiles every request, response and header schema of every operation: a malformed schema throws. */
  compileAll(): number {
    for (const op of this.operations) {
      const { operationId, parameters, requestBody } = op.operation;
      for (const [type, media] of Object.entries(requestBody ? this.resolve<RequestBody>(requestBody).content : {})) this.compile(`${operationId} request ${type}`, media.schema);
      for (const ref of parameters ?? []) {
        const parameter = this.resolve<Parameter>(ref);
        if (parameter.in === 'query') this.compile(`${operationId} query ${parameter.name}`, parameter.schema);
      }
      for (const [status, ref] of Object.entries(op.operation.responses)) {
        const response = this.resolve<Response>(ref);
        for (const [type, media] of Object.entries(response.content ?? {})) this.compile(`${op.operation.operationId} ${status} ${type}`, media.schema);
        for (const [name, header] of Object.entries(response.headers ?? {})) this.compile(`header ${name} ${JSON.stringify(header)}`, this.resolve<Header>(header).schema);
      }
    }
    return this.compiled.size;
  }

  /**
   * Throws an OpenApiMismatch unless the response is what the document says for the request, and,
   * when the API accepted the request (2xx), unless the request is one the document allows.
   */
  check(method: string, url: string, res: Pick<ApiResponse, 'status' | 'headers' | 'text'>, requestBody?: string, requestType?: string): void {
    const apiPath = apiPathOf(url);
    if (apiPath === null) return;
    const { pathname } = new URL(url, 'http://localhost');
    const fail = (problem: string): never => {
      const excerpt = res.text.length > 500 ? `${res.text.slice(0, 500)}…` : res.text;
      throw new OpenApiMismatch(`OpenAPI mismatch: ${method} ${pathname} → ${res.status}: ${problem}\n  body: ${excerpt}`);
    };

    const matched = this.match(method, apiPath);
    if (!matched) {
      // A path or method no operation serves: only the 404 error body is acceptable.
      if (res.status !== 404) fail(`no documented operation matches ${method} ${apiPath}, so only a 404 is acceptable`);
      this.checkBody(this.resolve<Response>({ $ref: '#/components/responses/NotFound' }), 'unmatched 404', res, fail);
      return;
    }

    const { operation } = matched;
    const responses = operation.responses;
    const documented = responses[String(res.status)] ?? responses[`${String(res.status)[0]}XX`] ?? responses.default;
    if (!documented) {
      fail(`status ${res.status} is not documented for ${operation.operationId} (${matched.method.toUpperCase()} ${matched.template}); documented: ${Object.keys(responses).join(', ')}`);
    }
    const response = this.resolve<Response>(documented);
    this.checkHeaders(response, res, fail);
    this.checkBody(response, `${operation.operationId} ${res.status}`, res, fail);
    if (res.status >= 200 && res.status < 300) this.checkRequest(operation, url, requestBody, requestType, fail);
  }

  /** `name[key]=value` parameters, checked as the object they spell. */
  private checkDeepObject(operation: Operation, parameter: Parameter, query: URLSearchParams, fail: (problem: string) => never): void {
    const pairs = [...query.entries()].flatMap(([name, value]) => {
      const key = name.startsWith(`${parameter.name}[`) && name.endsWith(']') ? name.slice(parameter.name.length + 1, -1) : undefined;
      return key === undefined ? [] : [[key, value] as const];
    });
    if (!pairs.length) return;
    const validate = this.compile(`${operation.operationId} query ${parameter.name}`, parameter.schema);
    if (!validate(Object.fromEntries(pairs))) fail(`the request was accepted, but its query parameter ${parameter.name} is not documented: ${formatErrors(validate.errors)}`);
  }

  private checkRequest(operation: Operation, url: string, requestBody: string | undefined, requestType: string | undefined, fail: (problem: string) => never): void {
    const query = new URL(url, 'http://localhost').searchParams;
    for (const ref of operation.parameters ?? []) {
      const parameter = this.resolve<Parameter>(ref);
      if (parameter.in !== 'query') continue;
      if (parameter.style === 'deepObject') {
        this.checkDeepObject(operation, parameter, query, fail);
        continue;
      }
      const value = query.get(parameter.name);
      if (value === null) {
        if (parameter.required) fail(`the request was accepted without the required query parameter ${parameter.name}`);
        continue;
      }
      // Query values are text: an integer parameter is checked as the integer it spells.
      const numeric = parameter.schema.type === 'integer' || parameter.schema.type === 'number';
      const candidate = numeric && /^-?[0-9]+(\.[0-9]+)?$/.test(value) ? Number(value) : value;
      const validate = this.compile(`${operation.operationId} query ${parameter.name}`, parameter.schema);
      if (!validate(candidate)) fail(`the request was accepted, but its query parameter ${parameter.name}=${JSON.stringify(value)} is not documented: ${formatErrors(validate.errors)}`);
    }
    if (!operation.requestBody) return;
    const documented = this.resolve<RequestBody>(operation.requestBody);
    if (requestBody === undefined || requestBody === '') {
      if (documented.required) fail('the request was accepted without the body the document requires');
      return;
    }
    const type = (requestType ?? 'application/json').split(';')[0].trim().toLowerCase();
    if (!documented.content[type]) fail(`the request was accepted with a body of type ${JSON.stringify(type)}, which is not documented (documented: ${Object.keys(documented.content).join(', ')})`);
    if (type !== 'application/json') return; // a document's bytes: its documented media type is the check
    let body: unknown;
    try {
      body = JSON.parse(requestBody);
    } catch {
      return; // not JSON: the API refuses it, so a 2xx cannot get here
    }
    const validate = this.compile(`${operation.operationId} request application/json`, documented.content['application/json'].schema);
    if (!validate(body)) fail(`the request was accepted, but its body does not match the documented request schema: ${formatErrors(validate.errors)}`);
  }

  private checkHeaders(response: Response, res: Pick<ApiResponse, 'headers'>, fail: (problem: string) => never): void {
    for (const [name, ref] of Object.entries(response.headers ?? {})) {
      const header = this.resolve<Header>(ref);
      const value = res.headers.get(name);
      if (value === null) {
        if (header.required) fail(`required header ${name} is missing`);
        continue;
      }
      const schema = header.schema;
      const type = schema.type;
      // Header values are text: an integer header is checked as the integer it spells.
      const candidate = (type === 'integer' || type === 'number') && /^-?[0-9]+(\.[0-9]+)?$/.test(value) ? Number(value) : value;
      const validate = this.compile(`header ${name} ${JSON.stringify(ref)}`, schema);
      if (!validate(candidate)) fail(`header ${name}: ${JSON.stringify(value)} ${formatErrors(validate.errors)}`);
    }
  }

  private checkBody(response: Response, key: string, res: Pick<ApiResponse, 'headers' | 'text'>, fail: (problem: string) => never): void {
    const content = response.content;
    if (!content) {
      if (res.text !== '') fail('the documented response has no body, but one came');
      return;
    }
    const contentType = (res.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    const media = content[contentType];
    if (!media) fail(`content type ${JSON.stringify(contentType)} is not documented (documented: ${Object.keys(content).join(', ')})`);
    if (contentType !== 'application/json') return; // a file: its documented media type is the check
    let body: unknown;
    try {
      body = JSON.parse(res.text);
    } catch {
      fail('the body is not JSON');
    }
    const validate = this.compile(`${key} ${contentType}`, media.schema);
    if (!validate(body)) fail(`body does not match the schema: ${formatErrors(validate.errors)}`);
  }
}

let shared: OpenApiValidator | undefined;

/** One validator per test file (Jest gives each file its own module registry), built on first use. */
export function openApiValidator(): OpenApiValidator {
  shared ??= new OpenApiValidator(openapiDocument);
  return shared;
}
