/**
 * What the e-invoice tests share: a seller ready for EN 16931 (the German seller with its
 * registration, bank account and Peppol ID), a French buyer, issued invoices, and the official
 * validator (../shared/einvoice/validate), which a clone without ../shared does not have.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { businessChangesSchema } from '../../server/businesses/schema';
import { validateInput } from '../../server/validation';
import { aClient, Tenant, TestApp } from '../support/app';
import { GERMAN_SELLER } from '../support/legal-identity';

export const VALIDATOR = path.resolve(__dirname, '../../../shared/einvoice/validate');

/** The German seller of the legal-identity tests, with what an e-invoice also shows: registration, bank account, Peppol ID. */
export const SELLER = { ...GERMAN_SELLER, registration_number: 'HRB 12345 B', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX', peppol_id: '9930:DE123456789' };

export const BUYER = { name: 'Camille Martin', company: 'Atelier Martin SARL', address: '12 rue de la Paix\nBâtiment B', city: 'Paris', postal_code: '75002', country: 'FR', tax_id: 'FR40303265045', peppol_id: '9957:FR40303265045' };

/** A new tenant whose business is SELLER (with `changes`), in `currency`. */
export async function aSeller(app: TestApp, currency = 'EUR', changes: Record<string, unknown> = {}): Promise<Tenant> {
  const t = await app.tenant({ currency });
  await app.server.services.businesses.update(t.businessId, validateInput(businessChangesSchema, { ...SELLER, ...changes }));
  return t;
}

/** POSTs `body` and answers the created record under `key`; anything but 201 throws. */
export async function created(t: Tenant, url: string, body: Record<string, unknown>, key: string): Promise<any> {
  const res = await t.api.post(url, body);
  if (res.status !== 201) throw new Error(`POST ${url}: ${res.status} ${res.text}`);
  return res.body[key];
}

export const line = (description: string, unit_price: number, extra: Record<string, unknown> = {}) => ({ description, quantity: 1, unit_price, ...extra });

/** An invoice of `t`, issued, for a new client (BUYER with `client`). */
export async function issued(t: Tenant, invoice: Record<string, unknown>, client: Record<string, unknown> = {}): Promise<any> {
  const buyer = await created(t, '/clients', aClient({ ...BUYER, ...client }), 'client');
  const draft = await created(t, '/invoices', { client_id: buyer.id, due_date: '2027-01-31', buyer_reference: 'PO-2026-118', ...invoice }, 'invoice');
  const sent = await t.api.post(`/invoices/${draft.id}/initiate-payment`);
  if (sent.status !== 200) throw new Error(`issue: ${sent.status} ${sent.text}`);
  return (await t.api.get(`/invoices/${draft.id}`)).body.invoice;
}

/** The official validator's run over `files` in one call: its exit status and what it printed; null when ../shared is not here. */
export async function validate(rules: string, files: string[]): Promise<{ code: number; output: string } | null> {
  if (!fs.existsSync(VALIDATOR)) return null;
  try {
    const { stdout, stderr } = await promisify(execFile)('bash', [VALIDATOR, '--rules', rules, ...files], { timeout: 180_000 });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const { code, stdout, stderr } = err as { code?: number; stdout?: string; stderr?: string };
    if (typeof code !== 'number') throw err;
    return { code, output: `${stdout ?? ''}${stderr ?? ''}` };
  }
}
