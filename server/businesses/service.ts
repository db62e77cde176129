/** Businesses: the tenants. Created by the CLI; read by the API through the caller's credential. */
import Joi from 'joi';
import { Credential } from '../auth/credential';
import { Database } from '../db/database';
import { NotFound } from '../errors';
import { isCurrency } from '../money/currencies';
import { validateInput } from '../validation';
import { Business } from './model';

export interface NewBusiness {
  name: string;
  currency: string;
  country?: string;
  plan?: string;
}

export interface BusinessView {
  id: number;
  name: string;
  currency: string;
  country: string | null;
  plan: string;
}

export const newBusinessSchema = Joi.object<NewBusiness>({
  name: Joi.string().trim().min(1).max(255).required(),
  currency: Joi.string()
    .uppercase()
    .custom((value: string, helpers) => (isCurrency(value) ? value : helpers.error('any.invalid')))
    .required()
    .messages({ 'any.invalid': 'currency must be an ISO 4217 code such as USD' }),
  country: Joi.string()
    .uppercase()
    .pattern(/^[A-Z]{2}$/)
    .messages({ 'string.pattern.base': 'country must be an ISO 3166-1 alpha-2 code such as US' }),
  plan: Joi.string().trim().min(1).max(50).default('free'),
});

export function toBusinessView(row: Business): BusinessView {
  return { id: row.id, name: row.name, currency: row.currency, country: row.country ?? null, plan: row.plan };
}

export class BusinessService {
  constructor(private readonly db: Database) {}

  async create(input: NewBusiness): Promise<BusinessView> {
    const valid = validateInput(newBusinessSchema, input);
    const row = await Business.query(this.db.current).insert({ ...valid, country: valid.country ?? null });
    return toBusinessView(row);
  }

  async get(id: number): Promise<BusinessView> {
    const row = await Business.query(this.db.current).findById(id);
    if (!row) throw new NotFound('Business');
    return toBusinessView(row);
  }

  /** The caller's own business: `GET /business` and `GET /ping`. */
  ofCredential(cred: Credential): Promise<BusinessView> {
    return this.get(cred.businessId);
  }
}
