/** Businesses: the tenants. Created by the CLI; read by the API through the caller's credential. */
import Joi from 'joi';
import { Actor } from '../auth/actor';
import { Database } from '../db/database';
import { NotFound } from '../errors';
import { currencyField } from '../money/amount';
import { isCountry } from './countries';
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

/** Changes to a business; `country: null` removes it; `embed_origins: null` lets any site frame the embeddable signing page. */
export interface BusinessChanges {
  name?: string;
  currency?: string;
  country?: string | null;
  plan?: string;
  embed_origins?: string[] | null;
}

/** `https://shop.example` or `http://localhost:8080`: a scheme, a host and maybe a port, nothing else. */
const webOrigin = Joi.string()
  .custom((value: string, helpers) => {
    try {
      const url = new URL(value);
      return ['http:', 'https:'].includes(url.protocol) && url.origin === value ? value : helpers.error('any.invalid');
    } catch {
      return helpers.error('any.invalid');
    }
  })
  .messages({ 'any.invalid': 'each embed origin must be an origin such as https://shop.example (scheme, host, optional port)' });

const fields = {
  name: Joi.string().trim().min(1).max(255),
  currency: currencyField,
  country: Joi.string()
    .uppercase()
    .custom((value: string, helpers) => (isCountry(value) ? value : helpers.error('any.invalid')))
    .messages({ 'any.invalid': 'country must be an ISO 3166-1 alpha-2 code such as US' }),
  plan: Joi.string().trim().min(1).max(50),
};

export const newBusinessSchema = Joi.object<NewBusiness>({
  name: fields.name.required(),
  currency: fields.currency.required(),
  country: fields.country,
  plan: fields.plan.default('free'),
});

const businessChangesSchema = Joi.object<BusinessChanges>({
  ...fields,
  country: fields.country.allow(null),
  embed_origins: Joi.array().items(webOrigin).min(1).max(20).unique().allow(null),
})
  .or('name', 'currency', 'country', 'plan', 'embed_origins')
  .messages({ 'object.missing': 'nothing to change: give a name, currency, country, plan or embed origins' });

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

  /** Every business, oldest first (the CLI's `business list`). */
  async list(): Promise<BusinessView[]> {
    const rows = await Business.query(this.db.current).orderBy('id');
    return rows.map(toBusinessView);
  }

  /** Existing invoices keep their own currency; a new currency applies to what is created next. */
  async update(id: number, changes: BusinessChanges): Promise<BusinessView> {
    const valid = validateInput(businessChangesSchema, changes);
    return this.db.transaction(async (trx) => {
      if (!(await Business.query(trx).findById(id).forUpdate())) throw new NotFound('Business');
      const { embed_origins: origins, ...rest } = valid;
      const changes = { ...rest, ...(origins === undefined ? {} : { embed_origins: origins === null ? null : origins.join(' ') }) };
      return toBusinessView(await Business.query(trx).patchAndFetchById(id, changes));
    });
  }

  /** The origins allowed to frame the business's embeddable signing page; null: any. */
  async embedOrigins(id: number): Promise<string[] | null> {
    const row = await Business.query(this.db.current).findById(id);
    if (!row) throw new NotFound('Business');
    return row.embed_origins ? row.embed_origins.split(' ') : null;
  }

  /** The caller's own business: `GET /business` and `GET /ping`. */
  ofCredential(actor: Actor): Promise<BusinessView> {
    return this.get(actor.businessId);
  }
}
