/** Contract input: the contract's fields, with the limits the specification leaves to us. */
import Joi from 'joi';
import { listQuery, ListParams } from '../http/pagination';
import { MetadataChanges, metadataField, MetadataFilter, withMetadataFilter } from '../metadata/schema';
import { currencyField, moneyField } from '../money/amount';
import { CONTRACT_STATUSES, CONTRACT_TYPES, ContractStatus, ContractType } from './model';

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
  }),
);

/** A signer's name, as typed into a signing page or sent to countersign. */
export const signerName = Joi.string().trim().min(1).max(255).description('The signer\'s full name');

export const countersignBody = Joi.object<{ name: string }>({ name: signerName.required() });
