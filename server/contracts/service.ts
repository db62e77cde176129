/** Contracts and proposals sent to a client for signature, each reachable by its own unguessable links. */
import { createHash, randomBytes } from 'node:crypto';
import { Knex } from 'knex';
import { acrossTenants, Actor, systemActor } from '../auth/actor';
import { BusinessService } from '../businesses/service';
import { Client } from '../clients/model';
import { UNKNOWN_CLIENT_ID } from '../clients/service';
import { businessClock } from '../clock';
import { BusinessClocks } from '../db/clocks';
import { Database } from '../db/database';
import { isMissingReferenceViolation } from '../db/errors';
import { toDbTime } from '../db/time';
import { InvalidState, NotFound, ValidationFailed } from '../errors';
import { Outbox } from '../events/outbox';
import { firstPagesByMode, Page, paginate } from '../http/pagination';
import { MetadataChanges } from '../metadata/schema';
import { indexMetadata, initialMetadata, updateMetadata, whereMetadata } from '../metadata/store';
import { collectMinor } from '../money/amount';
import { Contract, ContractSignature, SigningParty } from './model';
import { ContractInput, ContractListParams, ContractView } from './schema';
import { toContractView } from './view';

/** Who signs, and the audit record of how they reached us. */
export interface Signer {
  name: string;
  ipAddress: string | null;
  userAgent: string | null;
}

/** The two parties as the signing page and the signed PDF name them. */
export interface ContractParties {
  /** The business's legal name (its name when it has none). */
  business: string;
  /** The client as its record names it now: a contract keeps no snapshot of it. */
  client: { name: string; company: string | null };
}

/** A signature with its whole audit record, as the signed PDF prints it. */
export interface SignatureRecord {
  party: SigningParty;
  name: string;
  signed_at: string;
  ip_address: string | null;
  document_sha256: string;
}

/** What a signing page shows: the contract, whose it is, and who may frame the embeddable page. */
export interface SigningPage {
  contract: ContractView;
  businessName: string;
  parties: ContractParties;
  /** The signatures' audit records, oldest first: for the signed PDF, never shown on the page. */
  signatureRecords: SignatureRecord[];
  /** Origins allowed to frame `embed_url`; null: any. */
  embedOrigins: string[] | null;
}

/** The SHA-256 (hex) of the contract text a signer is shown: its body, as UTF-8. */
export function documentSha256(body: string): string {
  return createHash('sha256').update(body, 'utf8').digest('hex');
}

/** 256 random bits: the token alone opens the signing page, so it must not be guessable. */
export function newSigningToken(): string {
  return randomBytes(32).toString('base64url');
}

const UNKNOWN_CLIENT = { client_id: [UNKNOWN_CLIENT_ID] };

export class ContractService {
  private readonly baseUrl: string;

  constructor(
    private readonly db: Database,
    private readonly businesses: BusinessService,
    private readonly outbox: Outbox,
    private readonly clocks: BusinessClocks,
    options: { baseUrl: string },
  ) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  async list(actor: Actor, params: ContractListParams): Promise<Page<ContractView>> {
    const query = Contract.of(actor, this.db.current);
    if (params.type) query.where('contracts.type', params.type);
    if (params.status) query.where('contracts.status', params.status);
    if (params.client_id) query.where('contracts.client_id', params.client_id);
    whereMetadata(query, actor, this.db.current, 'contract', params.metadata);
    const page = await paginate(query, Contract.tableName, params, (row) => row);
    const signatures = await ContractSignature.ofContracts(page.data, this.db.current);
    return { ...page, data: page.data.map((row) => toContractView(this.baseUrl, row, signatures)) };
  }

  async get(actor: Actor, id: number): Promise<ContractView> {
    const row = await Contract.of(actor, this.db.current).findById(id);
    if (!row) throw new NotFound('Contract', id);
    return this.viewOf(row, this.db.current);
  }

  /** Only the metadata changes once a contract exists: the text is what the parties sign. */
  update(actor: Actor, id: number, changes: { metadata?: MetadataChanges }): Promise<ContractView> {
    return this.db.transaction(async (trx) => {
      const row = await Contract.of(actor, trx).findById(id).forUpdate();
      if (!row) throw new NotFound('Contract', id);
      if (changes.metadata) await updateMetadata(trx, actor, 'contract', row, changes.metadata);
      return this.viewOf(row, trx);
    });
  }

  /** The business countersigns through the API. */
  countersign(actor: Actor, id: number, signer: Signer): Promise<ContractView> {
    return this.db.transaction(async (trx) => {
      const row = await Contract.of(actor, trx).findById(id).forUpdate();
      if (!row) throw new NotFound('Contract', id);
      return this.sign(trx, actor, row, 'business', signer);
    });
  }

  /** The owner's CLI countersigns a contract of any business, acting for that business. */
  async countersignAsOwner(id: number, signer: Signer): Promise<ContractView> {
    const row = await Contract.acrossTenants(acrossTenants('cli contract countersign'), this.db.current).findById(id);
    if (!row) throw new NotFound('Contract', id);
    const actor = systemActor('cli', { businessId: row.business_id, livemode: row.livemode });
    return this.clocks.actFor(actor, () => this.countersign(actor, id, signer));
  }

  /** `invoicing contracts show`: a contract of any business. */
  async getAsOwner(id: number): Promise<ContractView> {
    const row = await Contract.acrossTenants(acrossTenants('cli contract show'), this.db.current).findById(id);
    if (!row) throw new NotFound('Contract', id);
    return this.viewOf(row, this.db.current);
  }

  /** `invoicing contracts list`: a business's contracts, in one mode or both, oldest first (100 per mode at most). */
  async listForOwner(businessId: number, filters: { mode?: 'live' | 'test'; client_id?: number }): Promise<{ data: ContractView[]; more: boolean }> {
    await this.businesses.get(businessId);
    return firstPagesByMode(businessId, filters.mode, (actor, page) => this.list(actor, { ...page, ...(filters.client_id ? { client_id: filters.client_id } : {}) }));
  }

  /** `invoicing contracts create`: a contract of this business and mode, dated by that mode's clock as the API's are. */
  async createForOwner(businessId: number, mode: 'live' | 'test', input: ContractInput): Promise<ContractView> {
    await this.businesses.get(businessId);
    const actor = systemActor('cli', { businessId, livemode: mode === 'live' });
    return this.clocks.actFor(actor, () => this.create(actor, input));
  }

  /** The contract behind a signing link, as its page shows it; null for an unknown or malformed token. */
  async openSigningPage(token: string): Promise<SigningPage | null> {
    const row = await this.bySigningToken(this.db.current, token);
    if (!row) return null;
    const conn = this.db.current;
    const [signatures, business, client, embedOrigins] = await Promise.all([
      ContractSignature.ofContracts([row], conn),
      this.businesses.get(row.business_id),
      // Always there: a client that has contracts cannot be deleted (the foreign key refuses it).
      Client.of(signingPageActor(row), conn).findById(row.client_id).throwIfNotFound(),
      this.businesses.embedOrigins(row.business_id),
    ]);
    const contract = toContractView(this.baseUrl, row, signatures);
    return {
      contract,
      businessName: business.name,
      parties: { business: business.legal_name, client: { name: client.name, company: client.company ?? null } },
      signatureRecords: [...signatures]
        .sort((a, b) => a.signed_at.localeCompare(b.signed_at))
        .map(({ party, name, signed_at, ip_address, document_sha256 }) => ({ party, name, signed_at, ip_address: ip_address ?? null, document_sha256 })),
      embedOrigins,
    };
  }

  /** The client signs at the signing link: null for an unknown token. */
  signThroughLink(token: string, signer: Signer): Promise<ContractView | null> {
    return this.db.transaction(async (trx) => {
      const row = await this.bySigningToken(trx, token);
      if (!row) return null;
      const actor = signingPageActor(row);
      return this.clocks.actFor(actor, () => this.sign(trx, actor, row, 'client', signer));
    });
  }

  /** The client declines at the signing link: only before they have signed, and not once both have. */
  declineThroughLink(token: string): Promise<ContractView | null> {
    return this.db.transaction(async (trx) => {
      const row = await this.bySigningToken(trx, token);
      if (!row) return null;
      if (row.status === 'declined') return this.viewOf(row, trx);
      if (row.client_signed_at) throw new InvalidState('This contract is already signed by the client');
      await this.clocks.actFor(signingPageActor(row), async () => row.$query(trx).patch({ status: 'declined' }));
      return this.viewOf(row, trx);
    });
  }

  /**
   * Records `party`'s signature on a row locked by the caller. The lock orders concurrent
   * signatures, and the unique (contract, party) index refuses a second one of a party, so
   * `contract.signed` fires exactly once: in the transaction whose signature completes the pair.
   */
  private async sign(trx: Knex.Transaction, actor: Actor, row: Contract, party: SigningParty, signer: Signer): Promise<ContractView> {
    if (row.status === 'declined') throw new InvalidState('This contract was declined');
    const signedAtColumn = party === 'client' ? 'client_signed_at' : 'business_signed_at';
    if (row[signedAtColumn]) throw new InvalidState(`The ${party} has already signed this contract`);
    const now = businessClock.now();
    await ContractSignature.insertAll(row, trx, [
      {
        party,
        name: signer.name,
        signed_at: toDbTime(now),
        ip_address: signer.ipAddress?.slice(0, 45) ?? null,
        user_agent: signer.userAgent?.slice(0, 512) ?? null,
        document_sha256: documentSha256(row.body),
      },
    ]);
    const other = party === 'client' ? row.business_signed_at : row.client_signed_at;
    await row.$query(trx).patch({ [signedAtColumn]: now.toISOString(), status: other ? 'signed' : 'partially_signed' });
    const contract = await this.viewOf(row, trx);
    if (other) await this.outbox.record(trx, actor, 'contract.signed', { contract });
    return contract;
  }

  private async viewOf(row: Contract, conn: Knex): Promise<ContractView> {
    return toContractView(this.baseUrl, row, await ContractSignature.ofContracts([row], conn));
  }

  /** The one read across tenants for signing: the 256-bit token is the capability. Locks the row inside a transaction. */
  private async bySigningToken(conn: Knex, token: string): Promise<Contract | null> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
    const query = Contract.acrossTenants(acrossTenants('signing page token lookup'), conn).where('signing_token', token).first();
    return (await (conn.isTransaction ? query.forUpdate() : query)) ?? null;
  }

  /** With an amount and no currency, the contract is in the business's own currency. */
  async create(actor: Actor, input: ContractInput): Promise<ContractView> {
    try {
      return await this.db.transaction(async (trx) => {
        if (!(await Client.of(actor, trx).findById(input.client_id))) throw new ValidationFailed(UNKNOWN_CLIENT);
        const money = await this.money(actor, input);
        const metadata = initialMetadata(input.metadata);
        const row = await Contract.of(actor, trx).insert({
          type: input.type,
          title: input.title,
          client_id: input.client_id,
          body: input.body,
          ...money,
          status: 'pending',
          client_signed_at: null,
          business_signed_at: null,
          signing_token: newSigningToken(),
          metadata,
          ...Contract.ownedBy(actor),
        });
        await indexMetadata(trx, actor, { type: 'contract', id: row.id }, metadata, { replace: false });
        return toContractView(this.baseUrl, row, []);
      });
    } catch (err) {
      // The client was deleted between the check and the insert: the foreign key refused the row.
      if (isMissingReferenceViolation(err)) throw new ValidationFailed(UNKNOWN_CLIENT);
      throw err;
    }
  }

  private async money(actor: Actor, input: ContractInput): Promise<{ amount: number | null; currency: string | null }> {
    if (input.amount === undefined || input.amount === null) return { amount: null, currency: input.currency ?? null };
    const currency = input.currency ?? (await this.businesses.ofCredential(actor)).currency;
    const errors = new Map<string, string[]>();
    const amount = collectMinor(errors, 'amount', input.amount, currency);
    if (errors.size) throw new ValidationFailed(Object.fromEntries(errors));
    return { amount, currency };
  }
}

function signingPageActor(row: Contract): Actor {
  return systemActor('signing page', { businessId: row.business_id, livemode: row.livemode });
}
