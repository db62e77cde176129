/** A client as the API shows it, and as an invoice names the buyer. Pure. */
import { Static } from '@sinclair/typebox';
import { Client } from './model';
import { Buyer, ClientView } from './schema';

/** The buyer as an invoice keeps it (the `Buyer` shape). */
export type BuyerSnapshot = Static<typeof Buyer>;

/** What a buyer snapshot is taken from: a client row or its view. */
export type BuyerSource = Pick<ClientView, keyof BuyerSnapshot>;

/** The columns toClientView reads: what a list selects, rather than every column. */
export const CLIENT_VIEW_COLUMNS = [
  'id',
  'name',
  'email',
  'phone',
  'company',
  'address',
  'city',
  'postal_code',
  'state',
  'country',
  'tax_id',
  'tax_exempt',
  'buyer_reference',
  'peppol_id',
  'metadata',
  'livemode',
  'created_at',
  'updated_at',
].map((column) => `${Client.tableName}.${column}`);

export function toClientView(row: Client): ClientView {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    phone: row.phone ?? null,
    company: row.company ?? null,
    address: row.address ?? null,
    city: row.city ?? null,
    postal_code: row.postal_code ?? null,
    state: row.state ?? null,
    country: row.country ?? null,
    tax_id: row.tax_id ?? null,
    tax_exempt: row.tax_exempt ?? 'none',
    buyer_reference: row.buyer_reference ?? null,
    peppol_id: row.peppol_id ?? null,
    metadata: row.metadata ?? {},
    livemode: row.livemode,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/**
 * The buyer an invoice names, from the client as it is now. The invoice keeps it from the moment it
 * leaves draft, so later changes to the client do not reach an issued invoice.
 */
export function toBuyerSnapshot(client: BuyerSource): BuyerSnapshot {
  return {
    name: client.name ?? null,
    company: client.company ?? null,
    email: client.email ?? null,
    address: client.address ?? null,
    city: client.city ?? null,
    postal_code: client.postal_code ?? null,
    state: client.state ?? null,
    country: client.country ?? null,
    tax_id: client.tax_id ?? null,
    tax_exempt: client.tax_exempt ?? 'none',
    buyer_reference: client.buyer_reference ?? null,
    peppol_id: client.peppol_id ?? null,
  };
}
