import { routeUsing } from '../http/routes';
import { createTaxRateBody, listTaxRatesQuery, TaxRateEnvelope, TaxRateList, updateTaxRateBody } from './schema';
import { TaxRateService } from './service';

const route = routeUsing<{ taxRates: TaxRateService }>();

export const taxRateRoutes = [
  route({
    method: 'get',
    path: '/tax-rates',
    operationId: 'listTaxRates',
    summary: 'List tax rates',
    tag: 'Tax rates',
    scopes: ['invoices:read'],
    query: listTaxRatesQuery,
    response: { status: 200, description: 'A page of tax rates', schema: TaxRateList },
    handle: ({ cred, query }, s) => s.taxRates.list(cred, query),
  }),
  route({
    method: 'post',
    path: '/tax-rates',
    operationId: 'createTaxRate',
    summary: 'Create a tax rate',
    description:
      'The percentage (0–100, at most 4 decimals), category and `inclusive` never change once made. `category` defaults to S above 0 % and Z at 0 %; S requires a percentage above 0 and every other category 0 % (422 `errors.category`); E, AE, K, G and O require `exemption_reason`, which S and Z refuse (422 `errors.exemption_reason`).',
    tag: 'Tax rates',
    scopes: ['invoices:write'],
    body: createTaxRateBody,
    response: { status: 201, description: 'The new tax rate', schema: TaxRateEnvelope },
    handle: async ({ cred, body }, s) => ({ tax_rate: await s.taxRates.create(cred, body) }),
  }),
  route({
    method: 'get',
    path: '/tax-rates/{id}',
    operationId: 'getTaxRate',
    summary: 'Read a tax rate',
    tag: 'Tax rates',
    scopes: ['invoices:read'],
    record: 'Tax rate',
    response: { status: 200, description: 'The tax rate', schema: TaxRateEnvelope },
    handle: async ({ cred, id }, s) => ({ tax_rate: await s.taxRates.get(cred, id) }),
  }),
  route({
    method: 'patch',
    path: '/tax-rates/{id}',
    operationId: 'updateTaxRate',
    summary: 'Rename, describe, archive or restore a tax rate',
    description:
      'Only `display_name`, `description`, `active` and `metadata` (merged; a key set to "" or null is removed) change; any other field is a 422 naming it. `active: false` archives the rate: new invoice lines cannot take it, the lines that have it keep it.',
    tag: 'Tax rates',
    scopes: ['invoices:write'],
    record: 'Tax rate',
    body: updateTaxRateBody,
    response: { status: 200, description: 'The updated tax rate', schema: TaxRateEnvelope },
    handle: async ({ cred, id, body }, s) => ({ tax_rate: await s.taxRates.update(cred, id, body) }),
  }),
];
