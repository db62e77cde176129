/** Serves the OpenAPI 3.1 document, without authentication, at `<prefix>/openapi.json`. */
import { Router } from 'express';
import { openapiDocument } from './document';

export function openapiRoutes(): Router {
  const r = Router();
  const body = JSON.stringify(openapiDocument);
  r.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(body);
  });
  return r;
}
