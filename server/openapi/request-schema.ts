/**
 * Request schemas for the OpenAPI document, converted from the routes' joi schemas by joi-to-json,
 * so what the document says a request may carry is what the code checks.
 */
import Joi from 'joi';
import parse from 'joi-to-json';
import type { Schema } from './document';

/** The JSON Schema (OpenAPI 3.1) of a joi schema. */
export function jsonSchemaOf(schema: Joi.Schema): Schema {
  return withoutPatternNames(parse(schema, 'open-api-3.1', {}, {
    logicalOpParser: {
      // Exactly one of the peers: each alternative names the object type, as Ajv's strict mode wants.
      xor: (target: Schema, dependency: { peers: string[] }) => {
        target.oneOf = dependency.peers.map((peer) => ({ type: 'object', required: [peer] }));
      },
    },
  }) as Schema);
}

/**
 * joi-to-json lists each key pattern of `.pattern(regex, …)` twice: rightly under
 * `patternProperties`, and as a property named after the regex literal (`"/^a/"`), which no
 * request ever has. The second is dropped, throughout the schema.
 */
function withoutPatternNames(schema: Schema): Schema {
  const cleaned: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (Array.isArray(value)) cleaned[key] = value.map((item: unknown) => (isSchema(item) ? withoutPatternNames(item) : item));
    else if (isSchema(value)) cleaned[key] = withoutPatternNames(value);
    else cleaned[key] = value;
  }
  if (isSchema(cleaned.properties)) {
    cleaned.properties = Object.fromEntries(Object.entries(cleaned.properties).filter(([name]) => !/^\/.*\/[a-z]*$/.test(name)));
  }
  return cleaned;
}

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether a body schema names any required field: a body without one may be left out. */
export function hasRequiredField(schema: Schema): boolean {
  return Array.isArray(schema.required) && schema.required.length > 0;
}
