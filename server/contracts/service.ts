/** Contracts and proposals sent to a client for signature, each reachable by its own unguessable links. */
import { randomBytes } from 'node:crypto';
import { Actor } from '../auth/actor';
import { BusinessService } from '../businesses/service';
import { Client } from '../clients/model';
import { UNKNOWN_CLIENT_ID } from '../clients/service';
import { Database } from '../db/database';
import { isMissingReferenceViolation } from '../db/errors';
import { NotFound, ValidationFailed } from '../errors';
import { Page, paginate } from '../http/pagination';
import { collectMinor, toMajor } from '../money/amount';
import { Contract, ContractStatus, ContractType } from './model';
import { ContractInput, ContractListParams } from './schema';

export interface ContractView {
  id: number;
  type: ContractType;
  title: string;
  client_id: number;
  body: string;
  amount: number | null;
  currency: string | null;
  status: ContractStatus;
  client_signed_at: string | null;
  business_signed_at: string | null;
  signing_url: string;
  embed_url: string;
  livemode: boolean;
  created_at: string;
  updated_at: string;
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
    options: { baseUrl: string },
  ) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  toView(row: Contract): ContractView {
    const links = `${this.baseUrl}/contracts/${row.signing_token}`;
    return {
      id: row.id,
      type: row.type,
      title: row.title,
      client_id: row.client_id,
      body: row.body,
      amount: row.amount === null || row.amount === undefined || !row.currency ? null : toMajor(Number(row.amount), row.currency),
      currency: row.currency ?? null,
      status: row.status,
      client_signed_at: row.client_signed_at ?? null,
      business_signed_at: row.business_signed_at ?? null,
      signing_url: `${links}/sign`,
      embed_url: `${links}/embed`,
      livemode: row.livemode,
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  list(actor: Actor, params: ContractListParams): Promise<Page<ContractView>> {
    const query = Contract.of(actor, this.db.current);
    if (params.type) query.where('contracts.type', params.type);
    if (params.status) query.where('contracts.status', params.status);
    return paginate(query, Contract.tableName, params, (row) => this.toView(row));
  }

  async get(actor: Actor, id: number): Promise<ContractView> {
    const row = await Contract.of(actor, this.db.current).findById(id);
    if (!row) throw new NotFound('Contract');
    return this.toView(row);
  }

  /** With an amount and no currency, the contract is in the business's own currency. */
  async create(actor: Actor, input: ContractInput): Promise<ContractView> {
    try {
      return await this.db.transaction(async (trx) => {
        if (!(await Client.of(actor, trx).findById(input.client_id))) throw new ValidationFailed(UNKNOWN_CLIENT);
        const money = await this.money(actor, input);
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
          ...Contract.ownedBy(actor),
        });
        return this.toView(row);
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
