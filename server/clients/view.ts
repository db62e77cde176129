/** A client as the API shows it. Pure. */
import { Client } from './model';
import { ClientView } from './schema';

/** The columns toClientView reads: what a list selects, rather than every column. */
export const CLIENT_VIEW_COLUMNS = ['id', 'name', 'email', 'phone', 'company', 'address', 'metadata', 'livemode', 'created_at', 'updated_at'].map((column) => `${Client.tableName}.${column}`);

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
