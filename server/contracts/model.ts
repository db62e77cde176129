import { Knex } from 'knex';
import { BaseModel } from '../db/base-model';
import { ChildModel, TenantModel } from '../db/tenant-model';
import { Metadata } from '../metadata/schema';

export const CONTRACT_TYPES = ['contract', 'proposal'] as const;
export type ContractType = (typeof CONTRACT_TYPES)[number];

export const CONTRACT_STATUSES = ['pending', 'partially_signed', 'signed', 'declined'] as const;
export type ContractStatus = (typeof CONTRACT_STATUSES)[number];

export class Contract extends TenantModel {
  static override tableName = 'contracts';
  static override timestampColumns = [...BaseModel.timestampColumns, 'client_signed_at', 'business_signed_at'];
  static override jsonAttributes = ['metadata'];

  type!: ContractType;
  title!: string;
  client_id!: number;
  body!: string;
  /** Minor units of `currency`, or null when the contract names no amount. */
  amount!: number | null;
  currency!: string | null;
  status!: ContractStatus;
  client_signed_at!: string | null;
  business_signed_at!: string | null;
  /** The secret of the signing and embed links: 256 random bits, base64url. */
  signing_token!: string;
  /** Null on contracts from before metadata existed. */
  metadata!: Metadata | null;
}

export const SIGNING_PARTIES = ['client', 'business'] as const;
export type SigningParty = (typeof SIGNING_PARTIES)[number];

/** A party's signature and its audit record; reached only through its contract. */
export class ContractSignature extends ChildModel {
  static override tableName = 'contract_signatures';
  static override timestampColumns = ['signed_at'];
  static override parentColumn = 'contract_id';

  static ofContracts(contracts: readonly Contract[], conn: Knex) {
    return ContractSignature.ofParents(contracts, conn);
  }

  contract_id!: number;
  party!: SigningParty;
  name!: string;
  signed_at!: string;
  ip_address!: string | null;
  user_agent!: string | null;
  /** SHA-256 (hex) of the contract text the signer was shown. */
  document_sha256!: string;
}
