/**
 * One answer to "what is a currency?": three letters in any case on input, checked against ISO 4217,
 * returned upper-case, and the OpenAPI document says exactly that for every request that takes one.
 */
import { openapiDocument } from '../../server/openapi/document';
import { Schema } from '../../server/openapi/request-schema';
import { aClient, useApp } from '../support/app';

const ctx = useApp();

/** A request body for each endpoint that takes a currency, with `currency` set to `code`. */
const requests: [string, (code: string) => Promise<Record<string, unknown>>][] = [
  ['/invoices', async (code) => ({ client_id: await clientId(), currency: code, items: [{ description: 'Work', quantity: 1, unit_price: 10 }] })],
  ['/quick-charge', async (code) => ({ client_id: await clientId(), amount: 10, currency: code })],
  ['/expenses', (code) => Promise.resolve({ amount: 10, currency: code, category: 'travel', date: '2026-11-24' })],
  ['/contracts', async (code) => ({ client_id: await clientId(), title: 'Terms', body: 'We agree.', amount: 10, currency: code })],
];

async function clientId(): Promise<number> {
  return (await ctx.t.api.post('/clients', aClient())).body.client.id as number;
}

/** The record of a create response, whatever its envelope. */
const recordOf = (body: Record<string, any>) => body.invoice ?? body.expense ?? body.contract;

describe.each(requests)('POST %s', (path, bodyWith) => {
  test('when the currency is lower-case, then it is accepted and returned upper-case', async () => {
    const res = await ctx.t.api.post(path, await bodyWith('usd'));

    expect(res.status).toBe(201);
    expect(recordOf(res.body).currency).toBe('USD');
  });

  test.each(['usx', 'US', 'USDX', 'U$D', ' usd'])('when the currency is %j, then 422 names the field once', async (code) => {
    const res = await ctx.t.api.post(path, await bodyWith(code));

    expect(res.status).toBe(422);
    expect(res.body.errors.currency).toEqual(['currency must be an ISO 4217 code such as USD']);
  });
});

describe('the OpenAPI document', () => {
  test('when its request bodies are read, then every currency input says three letters in any case', () => {
    const found: string[] = [];
    const visit = (schema: unknown, where: string) => {
      if (!schema || typeof schema !== 'object') return;
      const properties = (schema as Schema).properties as Record<string, Schema> | undefined;
      if (properties?.currency) {
        found.push(where);
        expect({ where, pattern: properties.currency.pattern }).toEqual({ where, pattern: '^[A-Za-z]{3}$' });
      }
      for (const value of Object.values(properties ?? {})) visit(value, where);
    };
    for (const [path, item] of Object.entries(openapiDocument.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const body = (op as { requestBody?: { content: Record<string, { schema: unknown }> } }).requestBody;
        // A document body (application/xml, application/pdf) has no fields.
        if (body?.content['application/json']) visit(body.content['application/json'].schema, `${method.toUpperCase()} ${path}`);
      }
    }

    expect(found.sort()).toEqual(['PATCH /expenses/{id}', 'PATCH /invoices/{id}', 'POST /contracts', 'POST /expenses', 'POST /invoices', 'POST /quick-charge', 'POST /recurring-invoices']);
    expect(openapiDocument.components.schemas.Currency.pattern).toBe('^[A-Z]{3}$');
  });
});
