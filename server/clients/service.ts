/** Clients of a business: unique e-mail per business and mode, searchable by name, e-mail and company. */
import { Knex } from 'knex';
import { Actor } from '../auth/actor';
import { Database } from '../db/database';
import { isReferencedRowViolation, isUniqueViolation } from '../db/errors';
import { InvalidState, NotFound, ValidationFailed } from '../errors';
import { Page, paginate } from '../http/pagination';
import { dropMetadataIndex, indexMetadata, initialMetadata, mergedMetadata, whereMetadata } from '../metadata/store';
import { TaxExempt } from '../money/tax';
import { blankToNull } from '../validation';
import { Client } from './model';
import { ClientInput, ClientListParams, ClientView } from './schema';
import { CLIENT_VIEW_COLUMNS, toClientView } from './view';

const DUPLICATE_EMAIL = { email: ['is already used by another client'] };
/** The field error of a `client_id` that names no client of the caller's business and mode. */
export const UNKNOWN_CLIENT_ID = 'does not name a client of this business';

/**
 * The e-mail as uniqueness and look-ups compare it. Unicode's default lower-casing, the same in
 * every locale (a Turkish server must not fold differently), and not full case folding, which
 * would also make `ß` and `ss` one address. It can grow: İ becomes i̇, two code points.
 */
export function normalizedEmail(email: string): string {
  return email.toLowerCase();
}

/** Empty optional text is stored as null; derived columns follow the visible ones. Metadata is written apart (metadata/store). */
function columnsFor(merged: Omit<ClientInput, 'metadata'>): Partial<Client> {
  const company = blankToNull(merged.company);
  return {
    name: merged.name,
    email: merged.email,
    email_normalized: normalizedEmail(merged.email),
    search_text: [merged.name, merged.email, company ?? ''].join('\n').toLowerCase(),
    phone: blankToNull(merged.phone),
    company,
    address: blankToNull(merged.address),
    city: blankToNull(merged.city),
    postal_code: blankToNull(merged.postal_code),
    state: blankToNull(merged.state),
    country: blankToNull(merged.country),
    tax_id: blankToNull(merged.tax_id),
    tax_exempt: merged.tax_exempt ?? 'none',
    buyer_reference: blankToNull(merged.buyer_reference),
    peppol_id: blankToNull(merged.peppol_id),
  };
}

/** `LIKE` pattern for a literal substring: %, _ and the escape character itself match only themselves. */
function containsPattern(term: string): string {
  return `%${term.toLowerCase().replace(/[!%_]/g, (c) => `!${c}`)}%`;
}

/** Work another resource does, in the same transaction, when a client's tax status changes. */
type TaxStatusListener = (trx: Knex.Transaction, actor: Actor, client: { id: number; tax_exempt: TaxExempt }) => Promise<void>;

export class ClientService {
  constructor(private readonly db: Database) {}

  private readonly taxStatusListeners: TaxStatusListener[] = [];

  /** Runs `listener` inside the transaction of each change of a client's `tax_exempt` (its draft invoices are priced again). */
  whenTaxStatusChanges(listener: TaxStatusListener): void {
    this.taxStatusListeners.push(listener);
  }

  list(actor: Actor, params: ClientListParams): Promise<Page<ClientView>> {
    const query = Client.of(actor, this.db.current).select(CLIENT_VIEW_COLUMNS);
    if (params.search) query.whereRaw("clients.search_text like ? escape '!'", [containsPattern(params.search)]);
    whereMetadata(query, actor, this.db.current, 'client', params.metadata);
    return paginate(query, Client.tableName, params, toClientView);
  }

  async get(actor: Actor, id: number): Promise<ClientView> {
    return toClientView(await this.find(actor, id));
  }

  /** The unique index, not a prior SELECT, decides a duplicate e-mail. */
  async create(actor: Actor, input: ClientInput): Promise<ClientView> {
    return this.uniqueEmail(async () => toClientView(await this.insert(actor, input)));
  }

  /** The client with this e-mail (ignoring case) in the caller's business and mode, if there is one. */
  async withEmail(actor: Actor, email: string): Promise<ClientView | undefined> {
    const row = await this.findByEmail(actor, email);
    return row && toClientView(row);
  }

  async findOrCreate(actor: Actor, input: ClientInput): Promise<ClientView> {
    const existing = await this.findByEmail(actor, input.email);
    if (existing) return toClientView(existing);
    try {
      return toClientView(await this.insert(actor, input));
    } catch (err) {
      const winner = isUniqueViolation(err) ? await this.findByEmail(actor, input.email, { latest: true }) : undefined;
      if (!winner) throw err;
      return toClientView(winner);
    }
  }

  async update(actor: Actor, id: number, changes: Partial<ClientInput>): Promise<ClientView> {
    return this.uniqueEmail(() =>
      this.db.transaction(async (trx) => {
        const current = await this.find(actor, id, trx);
        const { metadata: metadataChanges, ...fieldChanges } = changes;
        const metadata = mergedMetadata(current.metadata, metadataChanges);
        // As in create, the unique index decides a duplicate e-mail.
        await Client.of(actor, trx).findById(id).patch({ ...columnsFor({ ...toClientView(current), ...fieldChanges }), metadata });
        if (metadataChanges) await indexMetadata(trx, actor, { type: 'client', id }, metadata, { replace: true });
        const updated = await this.find(actor, id, trx);
        if (updated.tax_exempt !== current.tax_exempt) {
          for (const listener of this.taxStatusListeners) await listener(trx, actor, updated);
        }
        return toClientView(updated);
      }),
    );
  }

  /** The foreign keys of invoices, payments and contracts, not a prior count, refuse a client in use. */
  async remove(actor: Actor, id: number): Promise<{ id: number; deleted: true }> {
    try {
      return await this.db.transaction(async (trx) => {
        if ((await Client.of(actor, trx).deleteById(id)) === 0) throw new NotFound('Client', id);
        await dropMetadataIndex(trx, actor, { type: 'client', id });
        return { id, deleted: true as const };
      });
    } catch (err) {
      if (isReferencedRowViolation(err)) throw new InvalidState('A client that has invoices, contracts or recurring invoices cannot be deleted');
      throw err;
    }
  }

  /** The row and its metadata index, in one transaction. */
  private insert(actor: Actor, input: ClientInput): Promise<Client> {
    return this.db.transaction(async (trx) => {
      const metadata = initialMetadata(input.metadata);
      const row = await Client.of(actor, trx).insert({ ...columnsFor(input), metadata, ...Client.ownedBy(actor) });
      await indexMetadata(trx, actor, { type: 'client', id: row.id }, metadata, { replace: false });
      return row;
    });
  }

  /** `latest`: a locking read on MySQL, which sees rows committed after this transaction's snapshot. */
  private async findByEmail(actor: Actor, email: string, { latest = false } = {}): Promise<Client | undefined> {
    const query = Client.of(actor, this.db.current).where('clients.email_normalized', normalizedEmail(email)).first();
    return latest ? query.forShare() : query;
  }

  private async find(actor: Actor, id: number, conn = this.db.current): Promise<Client> {
    const row = await Client.findOwn(actor, conn, id);
    if (!row) throw new NotFound('Client', id);
    return row;
  }

  /** Two requests racing for one e-mail: the unique index lets one win; the other gets the field error. */
  private async uniqueEmail<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (isUniqueViolation(err)) throw new ValidationFailed(DUPLICATE_EMAIL);
      throw err;
    }
  }
}
