/**
 * Request schemas for the OpenAPI document, converted from the routes' joi schemas by joi-to-json,
 * so what the document says a request may carry is what the code checks.
 */
import Joi from 'joi';
import parse from 'joi-to-json';

/** A JSON Schema 2020-12 schema (the OpenAPI 3.1 base dialect). */
export interface Schema {
  [keyword: string]: unknown;
}

/** The JSON Schema (OpenAPI 3.1) of a joi schema. */
export function jsonSchemaOf(schema: Joi.Schema): Schema {
  return tidied(parse(schema, 'open-api-3.1', {}, {
    logicalOpParser: {
      // Exactly one of the peers: each alternative names the object type, as Ajv's strict mode wants,
      // and forbids the other peers, so that the alternatives visibly exclude each other.
      xor: (target: Schema, dependency: { peers: string[] }) => {
        target.oneOf = dependency.peers.map((peer) => ({
          type: 'object',
          required: [peer],
          properties: absent(dependency.peers.filter((other) => other !== peer)),
        }));
      },
      // Once `key` is present none of the peers may be (joi-to-json's own if/then names properties the
      // subschema does not define, which linters flag).
      without: (target: Schema, dependency: { key: string; peers: string[] }) => {
        target.dependentSchemas = { ...(target.dependentSchemas as Schema | undefined), [dependency.key]: { properties: absent(dependency.peers) } };
      },
    },
  }) as Schema);
}

/** Properties that must not be present: `{ name: false }` each. */
function absent(names: string[]): Schema {
  return Object.fromEntries(names.map((name) => [name, false]));
}

/**
 * What joi-to-json writes, made exact for JSON Schema 2020-12, throughout the schema:
 * - it lists each key pattern of `.pattern(regex, …)` twice: rightly under `patternProperties`, and
 *   as a property named after the regex literal (`"/^a/"`), which no request ever has: dropped;
 * - joi's `greater(n)` and `less(n)` become both the exclusive and the inclusive bound at the same
 *   value (as draft 4 needed); the inclusive one then says nothing more, and linters flag the pair:
 *   the looser bound is dropped.
 */
function tidied(schema: Schema): Schema {
  const cleaned: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (Array.isArray(value)) cleaned[key] = value.map((item: unknown) => (isSchema(item) ? tidied(item) : item));
    else if (isSchema(value)) cleaned[key] = tidied(value);
    else cleaned[key] = value;
  }
  if (isSchema(cleaned.properties)) {
    cleaned.properties = Object.fromEntries(Object.entries(cleaned.properties).filter(([name]) => !/^\/.*\/[a-z]*$/.test(name)));
  }
  return withoutLooserBounds(cleaned);
}

function withoutLooserBounds(schema: Schema): Schema {
  const { minimum, exclusiveMinimum, maximum, exclusiveMaximum } = schema;
  const looser = new Set<string>();
  if (typeof minimum === 'number' && typeof exclusiveMinimum === 'number') looser.add(exclusiveMinimum >= minimum ? 'minimum' : 'exclusiveMinimum');
  if (typeof maximum === 'number' && typeof exclusiveMaximum === 'number') looser.add(exclusiveMaximum <= maximum ? 'maximum' : 'exclusiveMaximum');
  return looser.size ? Object.fromEntries(Object.entries(schema).filter(([keyword]) => !looser.has(keyword))) : schema;
}

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether a body schema names any required field: a body without one may be left out. */
export function hasRequiredField(schema: Schema): boolean {
  return Array.isArray(schema.required) && schema.required.length > 0;
}
