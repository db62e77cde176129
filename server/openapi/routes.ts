/**
 * What the API serves without authentication under each prefix: the index at its root (the link the
 * start-up banner prints), the OpenAPI 3.1 document at `<prefix>/openapi.json`, and the API
 * decisions (docs/api.md) at `<prefix>/docs`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Router } from 'express';
import { serializerOf } from '../shapes/component';
import { openapiDocument } from './document';
import { ApiIndex, ApiIndexShape } from './schema';

/** docs/api.md, from the compiled server (dist/server/openapi) or the sources (server/openapi); undefined when not shipped. */
function apiDecisions(): string | undefined {
  const file = ['../../docs/api.md', '../../../docs/api.md'].map((relative) => path.resolve(__dirname, relative)).find((candidate) => fs.existsSync(candidate));
  return file && fs.readFileSync(file, 'utf8');
}

export function openapiRoutes(options: { baseUrl: string }): Router {
  const r = Router();
  const body = JSON.stringify(openapiDocument);
  const docs = apiDecisions();
  const serializeIndex = serializerOf(ApiIndexShape);
  r.get('/', (req, res) => {
    const root = `${options.baseUrl}${req.baseUrl}`;
    const index: ApiIndex = {
      name: openapiDocument.info.title,
      version: openapiDocument.info.version,
      openapi: `${root}/openapi.json`,
      docs: docs === undefined ? null : `${root}/docs`,
      authentication: 'Authorization: Bearer <API key or OAuth access token>',
      ping: `${root}/ping`,
    };
    res.type('json').send(serializeIndex(index));
  });
  r.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(body);
  });
  if (docs !== undefined) {
    r.get('/docs', (_req, res) => {
      res.type('text/markdown; charset=utf-8').send(docs);
    });
  }
  return r;
}
