/** A client as the API shows it. Pure. */
import { Client } from './model';
import { ClientView } from './schema';

export function toClientView(row: Client): ClientView {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    phone: row.phone ?? null,
    company: row.company ?? null,
    address: row.address ?? null,
    metadata: row.metadata ?? {},
    livemode: row.livemode,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
