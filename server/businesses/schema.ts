/**
 * Business input, from the CLI (`business create`, `business update`, `init`), validated before the
 * service sees it; and the business as `GET /business` and `GET /ping` answer.
 */
import { Static, Type } from '@sinclair/typebox';
import Joi from 'joi';
import { currencyField } from '../money/amount';
import { closed, Currency, envelope, Id, Scope } from '../shapes/common';
import { component, nullable } from '../shapes/component';
import { isCountry } from './countries';

export interface NewBusiness {
  name: string;
  currency: string;
  country?: string;
  /** The service gives a business without one the free plan. */
  plan?: string;
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
  plan: fields.plan,
});

export const businessChangesSchema = Joi.object<BusinessChanges>({
  ...fields,
  country: fields.country.allow(null),
  embed_origins: Joi.array().items(webOrigin).min(1).max(20).unique().allow(null),
})
  .or('name', 'currency', 'country', 'plan', 'embed_origins')
  .messages({ 'object.missing': 'nothing to change: give a name, currency, country, plan or embed origins' });

export const BusinessShape = component(
  'Business',
  closed({
    id: Id,
    name: Type.String(),
    currency: Currency,
    country: nullable(Type.String({ pattern: '^[A-Z]{2}$' }), { description: 'ISO 3166-1 alpha-2, or null' }),
    plan: Type.String({ description: '`free` unless set' }),
  }),
);
export type BusinessView = Static<typeof BusinessShape>;

export const BusinessEnvelope = envelope('BusinessEnvelope', 'business', BusinessShape);

/** `GET /ping`: what the key is, and whose. */
export const PingShape = component(
  'Ping',
  closed({
    business: component('BusinessSummary', closed({ id: Id, name: Type.String(), currency: Currency })),
    scopes: Type.Array(Scope),
    livemode: Type.Boolean({ description: 'true for a live key (svc_live_…), false for a test key' }),
  }),
);
export type PingView = Static<typeof PingShape>;
