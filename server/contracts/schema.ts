/**
 * Contracts in and out: the contract's fields, with the limits the specification leaves to us (joi),
 * and the response shapes.
 */
import { Static, Type } from '@sinclair/typebox';
import Joi from 'joi';
import { idFilter, listQuery, ListParams } from '../http/pagination';
import { MetadataChanges, metadataField, MetadataFilter, MetadataShape, withMetadataFilter } from '../metadata/schema';
import { currencyField, moneyField } from '../money/amount';
import { closed, dateTime, envelope, Id, listOf, text } from '../shapes/common';
import { component, nullable, stringEnum } from '../shapes/component';
import { CONTRACT_STATUSES, CONTRACT_TYPES, ContractStatus, ContractType, SIGNING_PARTIES } from './model';

export interface ContractInput {
  title: string;
  client_id: number;
  body: string;
  type: ContractType;
  /** Major units; its decimals are checked against the currency by the service. */
  amount?: number | null;
  currency?: string | null;
  metadata?: MetadataChanges;
}

export interface ContractListParams extends ListParams, MetadataFilter {
  type?: ContractType;
  status?: ContractStatus;
  client_id?: number;
}

export const MAX_BODY_LENGTH = 100_000;

export const createContractBody = Joi.object<ContractInput>({
  title: Joi.string().trim().min(1).max(255).required(),
  client_id: Joi.number().strict().integer().min(1).max(Number.MAX_SAFE_INTEGER).required(),
  // Kept exactly as written (no trimming), but it must say something.
  body: Joi.string()
    .max(MAX_BODY_LENGTH)
    .pattern(/\S/)
    .required()
    .messages({ 'string.pattern.base': '{{#label}} must not be blank' }),
  type: Joi.string()
    .valid(...CONTRACT_TYPES)
    .default('contract'),
  amount: moneyField.min(0).allow(null),
  currency: currencyField.allow(null),
  metadata: metadataField,
});

export const listContractsQuery = withMetadataFilter(
  listQuery<ContractListParams>({
    type: Joi.string()
      .valid(...CONTRACT_TYPES)
      .description('Only contracts or only proposals'),
    status: Joi.string()
      .valid(...CONTRACT_STATUSES)
      .description('Only this status'),
    client_id: idFilter('client_id'),
  }),
);

/** A signer's name, as typed into a signing page or sent to countersign. */
export const signerName = Joi.string().trim().min(1).max(255).description('The signer\'s full name');

export const countersignBody = Joi.object<{ name: string }>({ name: signerName.required() });

export const ContractTypeShape = component('ContractType', stringEnum(CONTRACT_TYPES));
export const ContractStatusShape = component(
  'ContractStatus',
  stringEnum(CONTRACT_STATUSES, { description: 'pending → partially_signed (one party signed) → signed (both; fires contract.signed), or declined' }),
);

export const SignatureShape = component(
  'Signature',
  closed({
    party: stringEnum(SIGNING_PARTIES),
    name: Type.String({ minLength: 1, maxLength: 255 }),
    signed_at: dateTime,
    document_sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the contract body the signer was shown (UTF-8)' }),
  }),
);

export const ContractShape = component(
  'Contract',
  closed({
    id: Id,
    type: ContractTypeShape,
    title: text(255, 1),
    client_id: Id,
    body: Type.String({ minLength: 1, maxLength: 100_000 }),
    amount: nullable(Type.Number({ minimum: 0 }), { description: 'Major units, or null' }),
    currency: nullable(Type.String({ pattern: '^[A-Z]{3}$' })),
    status: ContractStatusShape,
    client_signed_at: nullable(dateTime),
    business_signed_at: nullable(dateTime),
    signing_url: Type.String({ format: 'uri', description: 'Where the client reads and signs' }),
    embed_url: Type.String({ format: 'uri', description: 'The iframe-friendly signing page' }),
    signatures: Type.Array(SignatureShape, { description: 'Oldest first' }),
    metadata: MetadataShape,
    livemode: Type.Boolean(),
    created_at: dateTime,
    updated_at: dateTime,
  }),
);
export type ContractView = Static<typeof ContractShape>;

export const ContractList = listOf('ContractList', ContractShape);
export const ContractEnvelope = envelope('ContractEnvelope', 'contract', ContractShape);
