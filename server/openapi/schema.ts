/** What the unauthenticated meta routes answer (server/openapi/routes.ts): the API index and this document. */
import { Static, Type } from '@sinclair/typebox';
import { closed } from '../shapes/common';
import { component, nullable } from '../shapes/component';

/** Any JSON object: a part of the document whose inside the document itself describes. */
const anyObject = Type.Unsafe<Record<string, unknown>>({ type: 'object' });

export const ApiIndexShape = component(
  'ApiIndex',
  closed({
    name: Type.String(),
    version: Type.String(),
    openapi: Type.String({ format: 'uri', description: 'This document' }),
    docs: nullable(Type.String({ format: 'uri' }), { description: 'The API decisions, as Markdown (null when the server was installed without them)' }),
    authentication: Type.String(),
    ping: Type.String({ format: 'uri', description: 'A call that verifies a key' }),
  }),
);
export type ApiIndex = Static<typeof ApiIndexShape>;

export const OpenApiDocumentShape = component(
  'OpenApiDocument',
  Type.Object({ openapi: Type.Literal('3.1.0'), info: anyObject, paths: anyObject }, { description: 'This document' }),
);
