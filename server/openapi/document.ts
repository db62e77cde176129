/**
 * The OpenAPI 3.1 description of the partner API: every endpoint, field, status value and error of
 * the specification and the contract. Served as JSON at `/api/v1/partner/openapi.json` (and
 * `/api/v1/openapi.json`); the test suite validates every response it sees against it, so it
 * cannot drift from the code. Schemas are JSON Schema 2020-12 (nullable = `type: [T, 'null']`).
 */
import { EventType } from '../events/model';
import { readScopeOf } from '../events/outbox';
import { takesMetadataFilter } from '../metadata/schema';
import Joi from 'joi';
import { BadRequest, DatabaseBusy, Forbidden, GatewayError, InvalidState, NotFound, PayloadTooLarge, PdfBusy, RateLimited, ServerError, ServiceUnavailable, Unauthorized, ValidationFailed } from '../errors';
import { IdempotencyKeyInUse, IdempotencyKeyReused } from '../http/idempotency';
import { bodySchemaOf, Route } from '../http/routes';
import { TestModeOnly } from '../invoices/payment-path';
import { EinvoiceNotReady } from '../einvoice/schema';
import { DocumentReadersBusy, DuplicateDocument, InvalidDocument, UnsupportedDocument } from '../expenses/schema';
import { errorBody, Id } from '../shapes/common';
import { componentNameOf, componentsOf } from '../shapes/component';
import { partnerRoutes } from '../partner-api';
import { hasRequiredField, jsonSchemaOf, type Schema } from './request-schema';
import { ApiIndexShape, OpenApiDocumentShape } from './schema';


/** A `$ref` (a type alias, so that a reference is also usable where a Schema is expected). */
export type Reference = {
  $ref: string;
  description?: string;
};

export interface Header {
  description?: string;
  required?: boolean;
  schema: Schema;
}

export interface MediaType {
  schema: Schema;
  example?: unknown;
}

export interface Response {
  description: string;
  headers?: Record<string, Header | Reference>;
  content?: Record<string, MediaType>;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  description?: string;
  required?: boolean;
  style?: 'deepObject';
  explode?: boolean;
  schema: Schema;
}

export interface RequestBody {
  description?: string;
  required?: boolean;
  content: Record<string, MediaType>;
}

export type SecurityRequirement = Record<string, string[]>;

export interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  security?: SecurityRequirement[];
  parameters?: (Parameter | Reference)[];
  requestBody?: RequestBody | Reference;
  responses: Record<string, Response | Reference>;
}

export type HttpMethod = 'get' | 'post' | 'patch' | 'delete' | 'put';
export type PathItem = { parameters?: (Parameter | Reference)[] } & Partial<Record<HttpMethod, Operation>>;

export interface OpenApiDocument {
  openapi: '3.1.0';
  jsonSchemaDialect: string;
  info: { title: string; version: string; description: string; contact: { name: string }; license: { name: string; identifier: string } };
  servers: { url: string; description: string; variables?: Record<string, { default: string; description?: string }> }[];
  security: SecurityRequirement[];
  tags: { name: string; description: string }[];
  paths: Record<string, PathItem>;
  webhooks: Record<string, PathItem>;
  components: {
    securitySchemes: Record<string, { type: 'http'; scheme: 'bearer'; bearerFormat?: string; description?: string }>;
    schemas: Record<string, Schema>;
    responses: Record<string, Response>;
    parameters: Record<string, Parameter>;
    headers: Record<string, Header>;
  };
}

export const HTTP_METHODS: readonly HttpMethod[] = ['get', 'post', 'patch', 'delete', 'put'];

// ---------------------------------------------------------------------------------------------
// Building blocks

const schemaRef = (name: string): Reference => ({ $ref: `#/components/schemas/${name}` });
const responseRef = (name: string): Reference => ({ $ref: `#/components/responses/${name}` });
const parameterRef = (name: string): Reference => ({ $ref: `#/components/parameters/${name}` });
const headerRef = (name: string): Reference => ({ $ref: `#/components/headers/${name}` });

/**
 * The codes of the error classes: what an error body's `error` may be. Every class that a response
 * can carry is listed here (a code thrown but missing would fail the tests' response checks).
 */
const ERROR_CODES = [
  ...new Set(
    [
      BadRequest, Unauthorized, Forbidden, TestModeOnly, NotFound, IdempotencyKeyInUse, PayloadTooLarge, ValidationFailed,
      InvalidState, IdempotencyKeyReused, RateLimited, ServerError, GatewayError, ServiceUnavailable, PdfBusy, DatabaseBusy, EinvoiceNotReady,
      InvalidDocument, UnsupportedDocument, DuplicateDocument, DocumentReadersBusy,
    ].map((error) => error.code),
  ),
];

// ---------------------------------------------------------------------------------------------
// Headers

type HeaderSet = 'authenticated' | 'maybeAuthenticated' | 'rateLimited' | 'none';

/** The headers a response carries, by what the request got through (authentication, the limiter). */
function responseHeaders(set: HeaderSet, replayable = false): Record<string, Header | Reference> {
  const rate = (required: boolean): Record<string, Header | Reference> =>
    required
      ? {
          'X-RateLimit-Limit': headerRef('X-RateLimit-Limit'),
          'X-RateLimit-Remaining': headerRef('X-RateLimit-Remaining'),
          'X-RateLimit-Reset': headerRef('X-RateLimit-Reset'),
          'Retry-After': headerRef('Retry-After'),
        }
      : {
          'X-RateLimit-Limit': { ...optionalHeader('X-RateLimit-Limit') },
          'X-RateLimit-Remaining': { ...optionalHeader('X-RateLimit-Remaining') },
          'X-RateLimit-Reset': { ...optionalHeader('X-RateLimit-Reset') },
          'Retry-After': { ...optionalHeader('Retry-After') },
        };
  const headers: Record<string, Header | Reference> = { 'X-Request-Id': headerRef('X-Request-Id') };
  if (set === 'authenticated') Object.assign(headers, rate(true));
  if (set === 'maybeAuthenticated') Object.assign(headers, rate(false));
  if (set === 'rateLimited') {
    Object.assign(headers, {
      'X-RateLimit-Limit': headerRef('X-RateLimit-Limit'),
      'X-RateLimit-Remaining': { ...headers_['X-RateLimit-Remaining'], description: 'Always 0 on a 429' },
      'X-RateLimit-Reset': optionalHeader('X-RateLimit-Reset'),
      'Retry-After': headerRef('Retry-After'),
    });
  }
  if (replayable) headers['Idempotent-Replayed'] = headerRef('Idempotent-Replayed');
  return headers;
}

const integerHeader = (description: string): Header => ({ description, required: true, schema: { type: 'integer', minimum: 0 } });

const headers_: Record<string, Header> = {
  'X-RateLimit-Limit': integerHeader('Requests allowed per 60-second window for this credential (120 by default)'),
  'X-RateLimit-Remaining': integerHeader('Requests left in the current window'),
  'X-RateLimit-Reset': integerHeader('When the current window resets, in epoch seconds'),
  'Retry-After': integerHeader('Seconds until the current window resets'),
  'X-Request-Id': {
    description: 'The request id: the caller\'s X-Request-Id when it is 1–64 characters of [A-Za-z0-9_.-], else a new UUID',
    required: true,
    schema: { type: 'string', pattern: '^[\\w.-]{1,64}$' },
  },
  'Idempotent-Replayed': {
    description: 'Present (true) when this response is the stored response of an earlier request with the same Idempotency-Key',
    required: false,
    schema: { type: 'string', const: 'true' },
  },
};

function optionalHeader(name: string): Header {
  return { ...headers_[name], required: false, description: `${headers_[name].description ?? ''} (present when the request was authenticated)` };
}

// ---------------------------------------------------------------------------------------------
// Schemas

/**
 * The components, none written here: every named response shape (server/shapes) that the routes
 * answer with, and the shapes they nest, each written once from its definition.
 */
const schemas = componentsOf([
  errorBody(ERROR_CODES),
  // Named by the path parameter {id}.
  Id,
  // What the meta routes answer (./routes.ts).
  ApiIndexShape,
  OpenApiDocumentShape,
  ...partnerRoutes.flatMap((spec) => ('schema' in spec.response ? [spec.response.schema] : [])),
]);

// ---------------------------------------------------------------------------------------------
// Responses

const json = (schema: Schema | Reference): Record<string, MediaType> => ({ 'application/json': { schema } });

/** An error response whose `error` is one of `codes`. */
/** An error response: the codes its body may carry are those of the error classes that answer with it. */
function errorResponse(description: string, errors: readonly { code: string }[], headerSet: HeaderSet): Response {
  const codes = [...new Set(errors.map((error) => error.code))];
  return {
    description,
    headers: responseHeaders(headerSet),
    content: json({ type: 'object', allOf: [schemaRef('Error')], properties: { error: { type: 'string', enum: codes } } }),
  };
}

const responses: Record<string, Response> = {
  BadRequest: errorResponse(
    'Malformed request (`bad_request`): unparseable JSON, a body that is not a JSON object, a content type other than JSON, a malformed query parameter (with `errors`), an unknown filter value, an Idempotency-Key outside 1–255 characters',
    [BadRequest],
    'authenticated',
  ),
  Unauthorized: errorResponse('Missing or invalid API key (`unauthorized`). Carries no rate-limit headers.', [Unauthorized], 'none'),
  Forbidden: errorResponse('The key lacks the scope (`forbidden`, with `required_scope` and `key_scopes`)', [Forbidden], 'authenticated'),
  ForbiddenOrTestModeOnly: errorResponse(
    'The key lacks the scope (`forbidden`, with `required_scope` and `key_scopes`), or a live key asked for a test-mode-only action (`test_mode_only`)',
    [Forbidden, TestModeOnly],
    'authenticated',
  ),
  NotFound: errorResponse(
    'No such record in this business and mode, or an id that is not a positive integer (`not_found`); also every unknown path',
    [NotFound],
    'maybeAuthenticated',
  ),
  IdempotencyKeyInUse: errorResponse('A request with this Idempotency-Key is still running (`idempotency_key_in_use`)', [IdempotencyKeyInUse], 'authenticated'),
  PayloadTooLarge: errorResponse('The body is larger than 1 MB (`payload_too_large`)', [PayloadTooLarge], 'authenticated'),
  Unprocessable: errorResponse(
    'Field errors (`validation_failed`, with `errors`), a business rule refusing the request in the record\'s state (`invalid_state`), or an Idempotency-Key reused with another request (`idempotency_key_reused`)',
    [ValidationFailed, InvalidState, IdempotencyKeyReused],
    'authenticated',
  ),
  EinvoiceNotReady: errorResponse(
    'The invoice lacks what the e-invoice format requires (`einvoice_not_ready`, with `errors` naming each field by its path and the EN 16931 or Peppol rule it breaks), or a draft that lacks nothing (`invalid_state`: issue it first)',
    [EinvoiceNotReady, InvalidState],
    'authenticated',
  ),
  UnprocessableOrEinvoiceNotReady: errorResponse(
    'Field errors (`validation_failed`), a business rule refusing the request in the record\'s state (`invalid_state`), an Idempotency-Key reused with another request (`idempotency_key_reused`), or an invoice that lacks what the business\'s e-invoice format requires (`einvoice_not_ready`, with `errors` naming each field by its path and the rule it breaks): nothing was issued or sent',
    [ValidationFailed, InvalidState, IdempotencyKeyReused, EinvoiceNotReady],
    'authenticated',
  ),
  DuplicateDocument: errorResponse(
    'The document was imported before by this business and mode (`duplicate_document`, with the `expense_id` it made), or a request with this Idempotency-Key is still running (`idempotency_key_in_use`)',
    [DuplicateDocument, IdempotencyKeyInUse],
    'authenticated',
  ),
  DocumentTooLarge: errorResponse('The document is larger than 10 MB (`payload_too_large`)', [PayloadTooLarge], 'authenticated'),
  DocumentRefused: errorResponse(
    'Nothing was written: a document that is not a readable e-invoice (`invalid_document`: XML that is not well-formed, has a DOCTYPE or is not UTF-8; a PDF that is malformed, encrypted or carries no e-invoice; a document that took too long to read), one that is not imported (`unsupported_document`: a credit note, XML of another kind), an e-invoice that lacks or misstates a term (`validation_failed`, with `errors` by BT), or an Idempotency-Key reused with another document (`idempotency_key_reused`)',
    [InvalidDocument, UnsupportedDocument, ValidationFailed, IdempotencyKeyReused],
    'authenticated',
  ),
  RateLimited: errorResponse(
    'Over 120 requests in the credential\'s 60-second window, or too many failed authentications from the address (`rate_limited`): wait Retry-After seconds',
    [RateLimited],
    'rateLimited',
  ),
  ServerError: errorResponse('Server-side failure (`server_error`); the message names the request id, never a stack trace', [ServerError], 'maybeAuthenticated'),
  ServiceUnavailable: errorResponse(
    'The database cannot be reached, or (a PDF) too many PDFs are being made, or (an imported document) too many documents are being read, then with Retry-After (`service_unavailable`): nothing was written; retry later',
    [ServiceUnavailable, PdfBusy, DatabaseBusy, DocumentReadersBusy],
    'maybeAuthenticated',
  ),
  GatewayError: errorResponse(
    'The payment gateway refused the request or could not be reached (`gateway_error`, with its message); nothing was changed. For a refund whose outcome at the gateway is unknown (a timeout, a lost answer), the refund stays `pending` instead and the message says so: retry with the same Idempotency-Key',
    [GatewayError],
    'authenticated',
  ),
};

// ---------------------------------------------------------------------------------------------
// Operations: built from the route tables (server/partner-api.ts)

const idParameter = parameterRef('Id');

/** The list filter `metadata[key]=value`: a deepObject parameter. */
const metadataFilterParameter: Parameter = {
  name: 'metadata',
  in: 'query',
  required: false,
  style: 'deepObject',
  explode: true,
  description: 'Only records whose metadata has every given pair, exactly: `metadata[order_id]=1042&metadata[store]=eu`. A malformed `metadata…` parameter is a 400.',
  schema: { type: 'object', additionalProperties: { type: 'string', minLength: 1, maxLength: 500 } },
};

/** The query parameters of a route, one per key of its joi query schema (and the metadata filter). */
function queryParameters(query: Joi.ObjectSchema): Parameter[] {
  const converted = jsonSchemaOf(query);
  const properties = (converted.properties ?? {}) as Record<string, Schema>;
  const parameters: Parameter[] = Object.entries(properties)
    .map(([name, schema]) => {
      const { description, ...rest } = schema;
      return { name, in: 'query', required: false, ...(typeof description === 'string' ? { description } : {}), schema: rest };
    });
  return takesMetadataFilter(query) ? [...parameters, metadataFilterParameter] : parameters;
}

/** A file response is a download: its name says what it is (`INV-000001.pdf`, `receipt-INV-000001.pdf`). */
const attachmentHeader: Header = {
  required: true,
  description: 'attachment, with the file name',
  schema: { type: 'string', pattern: '^attachment; filename=' },
};

function operation(spec: Route): Operation {
  const isPost = spec.method === 'post';
  const bodySchema = bodySchemaOf(spec);
  const body = bodySchema ? jsonSchemaOf(bodySchema) : undefined;
  const parameters = [
    ...(spec.record ? [idParameter] : []),
    ...(spec.query ? queryParameters(spec.query) : []),
    ...(isPost ? [parameterRef('IdempotencyKey')] : []),
  ];
  const responses: Record<string, Response | Reference> = {
    [spec.response.status]:
      'file' in spec.response
        ? {
            description: spec.response.description,
            headers: { ...responseHeaders('authenticated'), 'Content-Disposition': attachmentHeader },
            content: Object.fromEntries([spec.response.file].flat().map((type) => [type, { schema: { type: 'string', format: 'binary' } }])),
          }
        : { description: spec.response.description, headers: responseHeaders('authenticated', isPost), content: json(schemaRef(componentNameOf(spec.response.schema))) },
    '400': responseRef('BadRequest'),
    '401': responseRef('Unauthorized'),
    ...(spec.scopes.length ? { '403': responseRef('Forbidden') } : {}),
    '404': responseRef('NotFound'),
    ...(isPost ? { '409': responseRef('IdempotencyKeyInUse') } : {}),
    ...(body ? { '413': responseRef('PayloadTooLarge'), '422': responseRef('Unprocessable') } : {}),
    ...Object.fromEntries(Object.entries(spec.errors ?? {}).map(([status, name]) => [status, responseRef(name)])),
    '429': responseRef('RateLimited'),
    '500': responseRef('ServerError'),
    '503': responseRef('ServiceUnavailable'),
  };
  const scopeNote = spec.scopes.length ? `Scope: ${spec.scopes.join(' or ')}.` : 'Any valid key; no scope needed.';
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    description: [spec.description, scopeNote].filter(Boolean).join('\n\n'),
    tags: [spec.tag],
    security: spec.scopes.length ? spec.scopes.map((scope) => ({ apiKey: [scope] })) : [{ apiKey: [] }],
    ...(parameters.length ? { parameters } : {}),
    ...(body ? { requestBody: { required: hasRequiredField(body), content: json(body) } } : {}),
    ...(spec.document
      ? {
          requestBody: {
            required: true,
            description: `${spec.document.description}; at most ${spec.document.limitBytes / 1024 / 1024} MB`,
            content: Object.fromEntries(spec.document.types.map((type) => [type, { schema: { type: 'string', format: 'binary' } }])),
          },
        }
      : {}),
    responses,
  };
}

const paths: Record<string, PathItem> = {
  '/': {
    get: {
      operationId: 'getApiIndex',
      summary: 'Where to start',
      description: 'No authentication. The API version and links to this document, the API decisions (Markdown) and `/ping`.',
      tags: ['Meta'],
      security: [],
      responses: {
        '200': { description: 'The index', headers: responseHeaders('none'), content: json(schemaRef('ApiIndex')) },
      },
    },
  },
  '/docs': {
    get: {
      operationId: 'getApiDecisions',
      summary: 'The API decisions (docs/api.md)',
      description: 'No authentication. Markdown: what the API does where the specification and its contract are silent. A server installed without docs/api.md answers 404 (and its index gives `docs: null`).',
      tags: ['Meta'],
      security: [],
      responses: {
        '200': { description: 'The decisions', headers: responseHeaders('none'), content: { 'text/markdown': { schema: { type: 'string' } } } },
        '404': responseRef('NotFound'),
      },
    },
  },
  '/openapi.json': {
    get: {
      operationId: 'getOpenApiDocument',
      summary: 'This OpenAPI 3.1 document',
      description: 'No authentication.',
      tags: ['Meta'],
      security: [],
      responses: {
        '200': { description: 'The document', headers: responseHeaders('none'), content: json(schemaRef('OpenApiDocument')) },
        '404': responseRef('NotFound'),
      },
    },
  },
};
for (const spec of partnerRoutes) paths[spec.path] = { ...paths[spec.path], [spec.method]: operation(spec) };

// ---------------------------------------------------------------------------------------------
// Webhooks

const webhookHeaders: Parameter[] = [
  {
    name: 'x-service-signature',
    in: 'header',
    required: true,
    description: 'Lowercase hex HMAC-SHA256 of the raw request body, keyed with the key\'s webhook secret. Compute it over the raw bytes, not re-serialised JSON, and reject a mismatch.',
    schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
  },
  { name: 'x-service-event', in: 'header', required: true, description: 'The event type', schema: schemaRef('EventType') },
  {
    name: 'x-service-delivery',
    in: 'header',
    required: true,
    description: 'The attempt: `<delivery id>-<attempt number>` (the delivery id is the one in the delivery log). Unique per attempt: the number counts every attempt of the delivery, replays included, and is the `attempt` of the delivery log',
    schema: { type: 'string', pattern: '^[0-9]+-[0-9]+$' },
  },
  {
    name: 'x-service-signature-v2',
    in: 'header',
    required: true,
    description:
      'An addition to the specification: `t=<unix seconds>,v1=<lowercase hex HMAC-SHA256 of "<t>." followed by the raw body>`, keyed with the same secret. Receivers that check it can refuse deliveries older than a few minutes (replays).',
    schema: { type: 'string', pattern: '^t=[0-9]+,v1=[0-9a-f]{64}$' },
  },
];

function webhook(type: EventType, summary: string, payload: string): PathItem {
  const read = readScopeOf(type);
  return {
    post: {
      operationId: `webhook.${type}`,
      summary,
      description:
        `POSTed to every key of the business and mode that has a webhook_url and holds \`${read}\` (or \`${read.replace(/:read$/, ':write')}\`), and to every OAuth app with a webhook_url that the business and mode granted one of them: only a credential that could read what an event carries receives it (listed by GET /events alike). ` +
        'A 2xx within 10 seconds is success (redirects are not followed); otherwise retried after about 10 s, 30 s, 90 s, 270 s and 810 s (±10 % jitter), then marked failed and replayable.',
      tags: ['Webhooks'],
      security: [],
      parameters: webhookHeaders,
      requestBody: { required: true, content: json({ ...schemaRef(payload) }) },
      responses: { '2XX': { description: 'Received; any other answer (or none within 10 s) is retried' } },
    },
  };
}

const webhooks: Record<string, PathItem> = {
  'invoice.created': webhook('invoice.created', 'A new invoice was created', 'InvoiceEvent'),
  'invoice.sent': webhook('invoice.sent', 'The invoice was sent (POST /invoices/{id}/send)', 'InvoiceEvent'),
  'invoice.viewed': webhook('invoice.viewed', 'The client first opened the payment page', 'InvoiceEvent'),
  'invoice.paid': webhook('invoice.paid', 'The invoice was fully paid', 'InvoiceEvent'),
  'invoice.overdue': webhook(
    'invoice.overdue',
    'The invoice became overdue: its due date ended (UTC, by the clock of its business and mode) while it awaited payment with an amount due. Fired once per invoice, by the first sweep after the due date (every OVERDUE_SWEEP_SECONDS, 60 by default) or by a test clock\'s advance passing it, whatever the number of server processes; dated (`created_at`) 00:00 UTC after the due date, or when the invoice was sent if that was later, however late it is recorded; not for invoices already overdue when the server was upgraded to overdue invoices',
    'InvoiceEvent',
  ),
  'invoice.reminder_sent': webhook(
    'invoice.reminder_sent',
    'A payment reminder went out for the invoice: on due_date + offset_days for each of its business\'s reminder offsets (`invoicing business update --reminders`), while it awaits payment with an amount due; once per invoice and offset whatever the number of server processes (every REMINDER_SWEEP_SECONDS, 60 by default). `reminder.sent_at` is 00:00 UTC of that day, even when the sweep ran later. In live mode the client gets an e-mail with the amount due and the payment link; test mode sends none, and the reminder shows here and in the invoice\'s `reminders_sent` only',
    'InvoiceReminderSentEvent',
  ),
  'payment.received': webhook('payment.received', 'A payment was recorded', 'PaymentReceivedEvent'),
  'payment.failed': webhook('payment.failed', 'A delayed payment at the gateway failed: once per checkout, however often the gateway reports it (an addition to the specification)', 'PaymentFailedEvent'),
  'payment.refunded': webhook('payment.refunded', 'Money was returned on a payment, in part or in full (an addition to the specification)', 'PaymentRefundedEvent'),
  'payment.refund_failed': webhook(
    'payment.refund_failed',
    'A refund failed after it was made (at the bank, reported by the gateway): its amount counts as paid again on the payment and the invoice (an addition to the specification)',
    'PaymentRefundFailedEvent',
  ),
  'contract.signed': webhook('contract.signed', 'Both parties have signed a contract', 'ContractSignedEvent'),
  'credit_note.created': webhook('credit_note.created', 'A credit note was issued on an invoice (POST /invoices/{id}/credit-notes, or the void of an issued invoice)', 'CreditNoteCreatedEvent'),
};

// ---------------------------------------------------------------------------------------------
// The document

export const openapiDocument: OpenApiDocument = {
  openapi: '3.1.0',
  jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
  info: {
    title: 'Partner Invoicing API',
    version: '1.0.0',
    // Each installation serves its own copy of this document: its operator is the contact.
    contact: { name: 'The operator of this server (see the servers below)' },
    // package.json's UNLICENSED: no licence is granted (SPDX has no identifier for that, hence a LicenseRef).
    license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    description: [
      'Invoicing and payments for one business per API key. Every endpoint is served under `/api/v1/partner` and, identically, under `/api/v1`.',
      '',
      '- Authentication: `Authorization: Bearer svc_test_…` (test mode) or `svc_live_…` (live mode). Each record belongs to one business and one mode; another business\'s or mode\'s record is a 404. Every record carries `livemode`.',
      '- A platform may instead send an OAuth access token (`oat_test_…` / `oat_live_…`, from `POST /oauth/token`): it acts for the business and mode that authorized it, within the scopes granted.',
      '- Amounts are JSON numbers in major units with at most the currency\'s decimals; timestamps are ISO 8601 UTC; dates are `YYYY-MM-DD`.',
      '- Lists: `{ data, meta: { current_page, per_page, total, last_page, next_after } }`, ordered by id; page on with `after=meta.next_after` (null on the last page); `page` ≥ 1, `per_page` default 20 (above 100 clamped to 100), `after` an id (keyset cursor) or an ISO 8601 date/timestamp (created after it).',
      '- Idempotency: any POST may carry `Idempotency-Key` (1–255 characters), scoped to the credential and kept 24 hours; a retry with the same body replays the stored 2xx response with `Idempotent-Replayed: true`.',
      '- Rate limit: 120 requests per minute per credential, fixed 60-second window.',
      '- Unknown body fields are refused (422); unknown query parameters are ignored; an `{id}` that is not a positive integer is a 404; unknown paths are a 404 with the error body.',
    ].join('\n'),
  },
  servers: [
    {
      url: '{base_url}/api/v1/partner',
      description: 'The partner API',
      variables: { base_url: { default: 'http://localhost:3000', description: 'The service\'s BASE_URL' } },
    },
    {
      url: '{base_url}/api/v1',
      description: 'The same API without the `partner` segment',
      variables: { base_url: { default: 'http://localhost:3000', description: 'The service\'s BASE_URL' } },
    },
  ],
  security: [{ apiKey: [] }],
  tags: [
    { name: 'Business', description: 'Key verification and the business profile' },
    { name: 'Clients', description: 'The business\'s clients' },
    { name: 'Invoices', description: 'Invoices, their delivery and payment' },
    { name: 'Tax rates', description: 'Tax rates put on invoice lines, with their EN 16931 VAT category' },
    { name: 'Credit notes', description: 'Numbered corrections of issued invoices (a Stornorechnung, a facture d\'avoir)' },
    { name: 'Recurring invoices', description: 'Schedules that issue one invoice of the same lines to a client on each date' },
    { name: 'Payments', description: 'Payment records' },
    { name: 'Expenses', description: 'The business\'s expenses' },
    { name: 'Contracts', description: 'Contracts and proposals for signature' },
    { name: 'Webhooks', description: 'Signed events POSTed to a key\'s or an OAuth app\'s webhook_url, each to the receivers whose scopes read it' },
    { name: 'Test clocks', description: "A business's test-mode time, moved forward to test what happens with time (overdue invoices) without waiting for the calendar" },
    { name: 'Meta', description: 'This description' },
  ],
  paths,
  webhooks,
  components: {
    securitySchemes: {
      apiKey: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'svc_test_… | svc_live_… (40 base62 characters after the prefix)',
        description: 'An API key (or OAuth access token). The requirement lists the scopes the operation accepts: any one of them suffices.',
      },
    },
    schemas,
    responses,
    parameters: {
      Id: { name: 'id', in: 'path', required: true, description: 'A record id; anything but a positive integer is a 404', schema: schemaRef('Id') },
      IdempotencyKey: {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description: 'Makes the POST safe to retry: 1–255 characters, scoped to the credential, kept 24 hours. Same key and body: the stored response is replayed. Same key, other body: 422 `idempotency_key_reused`. Same key while the first request runs: 409 `idempotency_key_in_use`. Failed (non-2xx) requests store nothing.',
        schema: { type: 'string', minLength: 1, maxLength: 255 },
      },
    },
    headers: headers_,
  },
};
