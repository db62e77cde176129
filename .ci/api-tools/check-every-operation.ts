/**
 * Runs every-operation.ts against the real app: started as the tests start it (an ephemeral port, a
 * scratch database, SQLite unless TEST_DB says otherwise) with a test key holding every scope and a
 * webhook receiver. Fails, naming each problem, unless
 * - the app serves exactly the document that was linted and typed (the file given as argument);
 * - every call got the success status the document gives its operation, and a response the document
 *   describes (checked by test/support/http.ts, as in the tests);
 * - the operations called are exactly the document's, so a new operation without a call fails.
 *
 * Usage: tsx .ci/api-tools/check-every-operation.ts <openapi.json>
 */
import { deepStrictEqual } from 'node:assert/strict';
import fs from 'node:fs';
import createClient from 'openapi-fetch';
import { businessChangesSchema } from '../../server/businesses/schema';
import { validateInput } from '../../server/validation';
import { startApp } from '../../test/support/app';
import { openApiValidator } from '../../test/support/http';
import { startReceiver } from '../../test/support/receiver';
import { callEveryOperation } from './every-operation';
import type { paths } from './generated/openapi';

/** What this check reads of the document: its operations' responses. */
interface Document {
  paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
}

/** The fields of an OpenAPI 3.1 path item that are operations. */
const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const operationName = (method: string, path: string): string => `${method.toUpperCase()} ${path}`;

/** Each operation of the document by name, with the one success status it documents. */
function documentedSuccesses(document: Document): Map<string, string> {
  const successes = new Map<string, string>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of OPERATION_METHODS) {
      const operation = item[method];
      if (!operation?.responses) continue;
      const statuses = Object.keys(operation.responses).filter((status) => status.startsWith('2'));
      if (statuses.length !== 1) throw new Error(`${operationName(method, path)} documents ${statuses.length} success statuses, not one`);
      successes.set(operationName(method, path), statuses[0]);
    }
  }
  return successes;
}

async function main(documentFile: string): Promise<string[]> {
  const linted = JSON.parse(fs.readFileSync(documentFile, 'utf8')) as Document;
  const successes = documentedSuccesses(linted);
  const problems: string[] = [];
  const called = new Set<string>();

  const receiver = await startReceiver();
  const app = await startApp();
  try {
    const tenant = await app.tenant({ webhookUrl: receiver.url });
    // A legal identity, so that an invoice of the business can be an e-invoice.
    await app.server.services.businesses.update(
      tenant.businessId,
      validateInput(businessChangesSchema, { legal_name: 'Check GmbH', city: 'Berlin', country: 'DE', tax_id: 'DE123456789', peppol_id: '9930:DE123456789' }),
    );
    const baseUrl = `${app.url}/api/v1/partner`;
    const served: unknown = await (await fetch(`${baseUrl}/openapi.json`)).json();
    try {
      deepStrictEqual(served, linted);
    } catch {
      problems.push(`the app serves another document than ${documentFile}`);
    }

    const api = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${tenant.key}` } });
    const requestBodies = new Map<string, string>();
    api.use({
      async onRequest({ request, id }) {
        if (request.body) requestBodies.set(id, await request.clone().text());
        return undefined;
      },
      async onResponse({ request, response, schemaPath, id }) {
        const name = operationName(request.method, schemaPath);
        called.add(name);
        const expected = successes.get(name);
        if (String(response.status) !== expected) problems.push(`${name}: ${response.status}, documented ${expected ?? 'nothing'}`);
        try {
          const body = { status: response.status, headers: response.headers, text: await response.clone().text() };
          openApiValidator().check(request.method, request.url, body, requestBodies.get(id), request.headers.get('content-type') ?? undefined);
        } catch (err) {
          problems.push(`${name}: ${(err as Error).message}`);
        }
        return undefined;
      },
    });
    try {
      await callEveryOperation(api);
    } catch (err) {
      problems.push(`the calls stopped: ${(err as Error).message}`);
    }
  } finally {
    await app.stop();
    await receiver.stop();
  }

  for (const name of successes.keys()) if (!called.has(name)) problems.push(`${name} is in the document but every-operation.ts does not call it`);
  for (const name of called) if (!successes.has(name)) problems.push(`${name} was called but is not in the document`);
  if (!problems.length) console.log(`${called.size} operations called, each answered with its documented success status; the served document is the one linted`);
  return problems;
}

const documentFile = process.argv[2];
if (!documentFile) throw new Error('usage: check-every-operation.ts <openapi.json>');
main(documentFile).then(
  (problems) => {
    for (const problem of problems) console.error(problem);
    process.exitCode = problems.length ? 1 : 0;
  },
  (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  },
);
