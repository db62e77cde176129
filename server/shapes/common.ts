/** The response shapes and field types every resource uses: ids, currencies, timestamps, lists, errors. */
import { Static, TSchema, Type } from '@sinclair/typebox';
import { ALL_SCOPES } from '../auth/scopes';
import { component, stringEnum } from './component';

export const Id = component('Id', Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'A record id: a positive integer' }));

export const Currency = component(
  'Currency',
  Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 currency code (three upper-case letters, validated against the ISO list; input is case-insensitive)' }),
);

export const Scope = component('Scope', stringEnum(ALL_SCOPES, { description: 'A :write scope also grants the matching :read' }));

/** A stored timestamp as the API writes it (`2026-01-31T12:00:00.000Z`). */
export const dateTime = Type.String({ format: 'date-time', description: 'ISO 8601 UTC timestamp with milliseconds' });
export const date = Type.String({ format: 'date', description: 'Calendar date YYYY-MM-DD' });
/** An amount in major units; `options` add bounds or say what it is. */
export const money = (options: { description?: string; minimum?: number; exclusiveMinimum?: number } = {}) =>
  Type.Number({ description: 'Amount in major units (12.5 = 12.50), at most the currency\'s decimals', ...options });
export const text = (maxLength: number, minLength = 0) => Type.String({ maxLength, ...(minLength ? { minLength } : {}) });

/** An object of any keys whose values are `values` (`additionalProperties`, as the document writes it; TypeBox's Record would be `patternProperties`). */
export const mapOf = <T extends TSchema>(values: T, options: Record<string, unknown> = {}) =>
  Type.Unsafe<Record<string, Static<T>>>({ type: 'object', additionalProperties: values, ...options });

/** A closed object: every property listed and required, nothing else allowed (and nothing else sent). */
export const closed = <P extends Parameters<typeof Type.Object>[0]>(properties: P, options: { description?: string } = {}) =>
  Type.Object(properties, { additionalProperties: false, ...options });

export const PageMeta = component(
  'PageMeta',
  closed({
    current_page: Type.Integer({ minimum: 1 }),
    per_page: Type.Integer({ minimum: 1, maximum: 100 }),
    total: Type.Integer({ minimum: 0 }),
    last_page: Type.Integer({ minimum: 1, description: 'At least 1: an empty list has one empty page' }),
    next_after: Type.Unsafe<number | null>({
      type: ['integer', 'null'],
      minimum: 1,
      description: 'The last id of this page: pass it as `after` (with page 1) for the next page, a keyset read that costs the same however deep; null on the last page',
    }),
  }),
);

/** A page of a list: `{ data, meta }`, named `<Item>List`. */
export const listOf = <T extends TSchema>(name: string, item: T) => component(name, closed({ data: Type.Array(item), meta: PageMeta }));

/** One record under its key: `{ client: … }`, named `<Name>Envelope`. */
export const envelope = <K extends string, T extends TSchema>(name: string, key: K, item: T) =>
  component(name, Type.Object({ [key]: item } as { [k in K]: T }, { additionalProperties: false }));

export const Deleted = component('Deleted', closed({ id: Id, deleted: Type.Literal(true) }));

/**
 * Every error body, whose `error` is one of `codes` (the codes the error classes declare: the
 * document passes them, server/openapi/document.ts).
 */
export const errorBody = (codes: readonly string[]) =>
  component(
    'Error',
    Type.Object(
      {
        error: stringEnum(codes),
        message: Type.String(),
        errors: Type.Optional(
          mapOf(Type.Array(Type.String(), { minItems: 1 }), { description: 'Messages by field (`items.0.quantity`; `_` for the body as a whole)' }),
        ),
        required_scope: Type.Optional(Scope),
        key_scopes: Type.Optional(Type.Array(Scope)),
        expense_id: Type.Optional(Type.Integer({ minimum: 1, description: 'The expense an earlier import of the document made (`duplicate_document`)' })),
      },
      {
        additionalProperties: false,
        description:
          'Every error body. `errors` carries field-level details (validation failures, malformed query parameters); a 403 `forbidden` carries `required_scope` and `key_scopes`; a 409 `duplicate_document` carries `expense_id`. A 500 names the request id inside `message` (and in the X-Request-Id header), never a stack trace.',
        // Each `then` names the properties it requires (`true`: the object's own `properties` say what they are),
        // as Redocly's no-required-schema-properties-undefined asks.
        allOf: [
          { if: { type: 'object', properties: { error: { const: 'forbidden' } } }, then: { type: 'object', properties: { required_scope: true, key_scopes: true }, required: ['required_scope', 'key_scopes'] } },
          { if: { type: 'object', properties: { error: { const: 'validation_failed' } } }, then: { type: 'object', properties: { errors: true }, required: ['errors'] } },
          { if: { type: 'object', properties: { error: { const: 'duplicate_document' } } }, then: { type: 'object', properties: { expense_id: true }, required: ['expense_id'] } },
        ],
      },
    ),
  );

export type ErrorBody = Static<ReturnType<typeof errorBody>>;
