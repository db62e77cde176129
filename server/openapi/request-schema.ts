/**
 * Request schemas for the OpenAPI document, converted from the routes' joi schemas by joi-to-json,
 * so what the document says a request may carry is what the code checks.
 */
import Joi from 'joi';
import parse from 'joi-to-json';
import type { Schema } from './document';

/** The JSON Schema (OpenAPI 3.1) of a joi schema. */
export function jsonSchemaOf(schema: Joi.Schema): Schema {
  return parse(schema, 'open-api-3.1', {}, {
    logicalOpParser: {
      // Exactly one of the peers: each alternative names the object type, as Ajv's strict mode wants.
      xor: (target: Schema, dependency: { peers: string[] }) => {
        target.oneOf = dependency.peers.map((peer) => ({ type: 'object', required: [peer] }));
      },
    },
  }) as Schema;
}

/** Whether a body schema names any required field: a body without one may be left out. */
export function hasRequiredField(schema: Schema): boolean {
  return Array.isArray(schema.required) && schema.required.length > 0;
}
