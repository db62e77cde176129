/**
 * What connecting a store means, wherever the bridge runs (`woo connect` for a bridge apart, the
 * server's callback for a store connected with a link): the store's address as one text, its short
 * identity, the webhook registered on it and what the bridge's API key must hold.
 */
import { createHash } from 'node:crypto';

/** What the bridge's API key must hold: it creates clients and invoices, sends them, and records their payments and refunds. */
export const REQUIRED_SCOPES = ['invoices:write', 'clients:write'] as const;

/** The webhook the bridge registers on the store: every order change, signed with a secret of the bridge's. */
export const WEBHOOK = { name: 'Invoicing: invoice completed orders', topic: 'order.updated' } as const;

/**
 * An http(s) address as one text: lower-case host, no credentials, query or fragment, no trailing
 * slash, so one store always has one identity. Null when it is not such an address.
 */
export function normalHttpUrl(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return null;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.search || url.hash) return null;
  return url.href.replace(/\/+$/, '');
}

/** A short hash of the store's address: part of the idempotency keys of its orders (and of the earlier bridge's invoice markers). */
export function storeIdOf(storeUrl: string): string {
  return createHash('sha256').update(storeUrl).digest('hex').slice(0, 12);
}
