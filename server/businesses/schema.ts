/**
 * Business input, from the CLI (`business create`, `business update`, `init`), validated before the
 * service sees it; and the business as `GET /business` and `GET /ping` answer, with its legal
 * identity, and that identity as an invoice keeps it (`Seller`).
 */
import { Static, Type } from '@sinclair/typebox';
import Joi from 'joi';
import { currencyField } from '../money/amount';
import { closed, Currency, envelope, Id, Scope, text } from '../shapes/common';
import { component, nullable } from '../shapes/component';
import { bicField, countryField, ibanField, PEPPOL_ID_PATTERN, peppolIdField, taxIdField } from './legal-identity';

/**
 * The EN 16931 e-invoice formats (server/einvoice/ writes them), which a business may also choose
 * for its invoice e-mails.
 */
export const EINVOICE_FORMATS = ['ubl', 'cii', 'facturx', 'xrechnung-ubl', 'xrechnung-cii'] as const;
export type EinvoiceFormat = (typeof EINVOICE_FORMATS)[number];

/**
 * Payment reminders: at most this many offsets, each a number of days from the due date (negative:
 * before it) within a year either way.
 */
export const MAX_REMINDER_OFFSETS = 10;
export const MAX_REMINDER_OFFSET_DAYS = 365;

export interface NewBusiness {
  name: string;
  currency: string;
  country?: string;
  /** The service gives a business without one the free plan. */
  plan?: string;
}

/** The business's legal identity, as invoices name the seller. `legal_name` null: the business's name. */
export const LEGAL_IDENTITY_FIELDS = [
  'legal_name',
  'address_line1',
  'address_line2',
  'city',
  'postal_code',
  'state',
  'tax_id',
  'registration_number',
  'email',
  'phone',
  'iban',
  'bic',
  'invoice_footer',
  'peppol_id',
] as const;
export type LegalIdentityField = (typeof LEGAL_IDENTITY_FIELDS)[number];

/**
 * Changes to a business; `country: null` removes it; `embed_origins: null` lets any site frame the
 * embeddable signing page; a legal identity field given as null or '' is cleared.
 */
export type BusinessChanges = {
  name?: string;
  currency?: string;
  country?: string | null;
  plan?: string;
  embed_origins?: string[] | null;
  /** `none` or null: invoice e-mails carry the plain PDF only. */
  einvoice_format?: EinvoiceFormat | 'none' | null;
  /** Days from the due date on which the client is reminded; `[]` or null: no reminders. */
  reminder_offsets?: number[] | null;
} & { [F in LegalIdentityField]?: string | null };

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
  country: countryField,
  plan: Joi.string().trim().min(1).max(50),
};

/** Text of the legal identity, trimmed, up to `max` characters. */
const identityText = (max: number) => Joi.string().trim().max(max);

/** Each legal identity field; null or '' clears it (the service stores null). */
const legalIdentityFields: Record<LegalIdentityField, Joi.StringSchema> = {
  legal_name: identityText(255).description('The registered name invoices show for the seller; cleared, the business name is shown'),
  address_line1: identityText(255),
  address_line2: identityText(255),
  city: identityText(100),
  postal_code: identityText(20),
  state: identityText(100).description('State, province or region'),
  tax_id: taxIdField,
  registration_number: identityText(100).description('Company registration number (e.g. a trade register entry)'),
  email: identityText(254).email({ tlds: { allow: false } }).description('The contact e-mail invoices show for the seller'),
  phone: identityText(50),
  iban: ibanField,
  bic: bicField,
  invoice_footer: identityText(1000).description('Printed at the foot of every invoice'),
  peppol_id: peppolIdField,
};

const clearableIdentity = Object.fromEntries(LEGAL_IDENTITY_FIELDS.map((field) => [field, legalIdentityFields[field].allow(null, '')]));

/** The legal identity fields of `business update` alone: the CLI checks them as its options' values. */
export const legalIdentityChangesSchema = Joi.object<Partial<Record<LegalIdentityField, string | null>>>(clearableIdentity);

/** Reminder offsets; the messages name no field, so the CLI's `--reminders` reads them as they are. */
const reminderOffsetsField = Joi.array()
  .items(
    Joi.number()
      .integer()
      .min(-MAX_REMINDER_OFFSET_DAYS)
      .max(MAX_REMINDER_OFFSET_DAYS)
      .messages({
        'number.base': 'each offset must be a whole number of days',
        'number.integer': 'each offset must be a whole number of days',
        'number.min': `each offset must be between -${MAX_REMINDER_OFFSET_DAYS} and ${MAX_REMINDER_OFFSET_DAYS} days`,
        'number.max': `each offset must be between -${MAX_REMINDER_OFFSET_DAYS} and ${MAX_REMINDER_OFFSET_DAYS} days`,
      }),
  )
  .max(MAX_REMINDER_OFFSETS)
  .unique()
  .allow(null)
  .messages({ 'array.max': `at most ${MAX_REMINDER_OFFSETS} offsets`, 'array.unique': 'an offset is given twice' })
  .description(`Days relative to the due date (negative: before it) on which the client is reminded, at most ${MAX_REMINDER_OFFSETS}, each within ±${MAX_REMINDER_OFFSET_DAYS}; [] or null: none`);

/** The reminder offsets of `business update` alone: the CLI checks them as its option's value. */
export const reminderOffsetsChangeSchema = Joi.object<Pick<BusinessChanges, 'reminder_offsets'>>({ reminder_offsets: reminderOffsetsField });

export const newBusinessSchema = Joi.object<NewBusiness>({
  name: fields.name.required(),
  currency: fields.currency.required(),
  country: fields.country,
  plan: fields.plan,
});

export const businessChangesSchema = Joi.object<BusinessChanges>({
  ...fields,
  country: fields.country.allow(null, ''),
  embed_origins: Joi.array().items(webOrigin).min(1).max(20).unique().allow(null),
  einvoice_format: Joi.string()
    .valid(...EINVOICE_FORMATS, 'none')
    .allow(null)
    .description('The e-invoice invoice e-mails carry (facturx replaces the plain PDF; an XML format goes beside it); none: the plain PDF only'),
  reminder_offsets: reminderOffsetsField,
  ...clearableIdentity,
})
  .or('name', 'currency', 'country', 'plan', 'embed_origins', 'einvoice_format', 'reminder_offsets', ...LEGAL_IDENTITY_FIELDS)
  .messages({ 'object.missing': 'nothing to change: give a name, currency, country, plan, embed origins, e-invoice format, reminders or a legal identity field' });

const COUNTRY = Type.String({ pattern: '^[A-Z]{2}$' });
const IBAN = Type.String({ pattern: '^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$', description: 'IBAN without spaces, upper case (ISO 13616 checksum checked)' });
const BIC = Type.String({ pattern: '^[A-Z0-9]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$', description: 'BIC (ISO 9362), 8 or 11 characters' });
const PEPPOL_ID = Type.String({ pattern: PEPPOL_ID_PATTERN, description: 'Peppol participant ID SCHEME:ID, e.g. 0088:7300010000001' });
const TAX_ID = text(50);

/** The seller's fields an invoice keeps, but for the name, as the business profile and the snapshot write them. */
const sellerFields = {
  address_line1: nullable(text(255)),
  address_line2: nullable(text(255)),
  city: nullable(text(100)),
  postal_code: nullable(text(20)),
  state: nullable(text(100), { description: 'State, province or region' }),
  country: nullable(COUNTRY, { description: 'ISO 3166-1 alpha-2, or null' }),
  tax_id: nullable(TAX_ID, { description: 'A VAT or other tax number; an EU VAT number (checked for its country\'s shape) without spaces' }),
  registration_number: nullable(text(100)),
  email: nullable(text(254)),
  phone: nullable(text(50)),
  iban: nullable(IBAN),
  bic: nullable(BIC),
  invoice_footer: nullable(text(1000)),
  peppol_id: nullable(PEPPOL_ID),
};

/** `GET /business`: the profile and the legal identity. */
export const BusinessShape = component(
  'Business',
  closed({
    id: Id,
    name: Type.String(),
    currency: Currency,
    country: sellerFields.country,
    plan: Type.String({ description: '`free` unless set' }),
    legal_name: Type.String({ description: 'The registered name invoices show; the business name unless set' }),
    address_line1: sellerFields.address_line1,
    address_line2: sellerFields.address_line2,
    city: sellerFields.city,
    postal_code: sellerFields.postal_code,
    state: sellerFields.state,
    tax_id: sellerFields.tax_id,
    registration_number: sellerFields.registration_number,
    email: sellerFields.email,
    phone: sellerFields.phone,
    iban: sellerFields.iban,
    bic: sellerFields.bic,
    invoice_footer: sellerFields.invoice_footer,
    peppol_id: sellerFields.peppol_id,
    einvoice_format: Type.Unsafe<EinvoiceFormat | null>({
      type: ['string', 'null'],
      enum: [...EINVOICE_FORMATS, null],
      description: 'The e-invoice its invoice e-mails carry (facturx replaces the plain PDF; an XML format goes beside it); null: the plain PDF only. `/send` refuses an invoice not ready for it (422 einvoice_not_ready)',
    }),
    reminder_offsets: Type.Array(Type.Integer({ minimum: -MAX_REMINDER_OFFSET_DAYS, maximum: MAX_REMINDER_OFFSET_DAYS }), {
      maxItems: MAX_REMINDER_OFFSETS,
      description:
        'Days relative to an invoice\'s due date (negative: before it), ascending, on which its client is reminded while it awaits payment (`reminders_sent`, `invoice.reminder_sent`); empty: no reminders (the default). Set with `invoicing business update --reminders`',
    }),
  }),
);
/** The business profile: what `GET /business`, `business show` and `business update` show. */
export type BusinessProfile = Static<typeof BusinessShape>;
/** The business record: what `business create`, `business list` and `init` print (docs/cli.md). */
export type BusinessView = Pick<BusinessProfile, 'id' | 'name' | 'currency' | 'country' | 'plan'>;

/**
 * The seller as an invoice keeps it when it leaves draft: the business's legal identity, with
 * `legal_name` already the business name when none is set. Every field may be null.
 */
export const Seller = component(
  'Seller',
  closed(
    { legal_name: nullable(text(255)), ...sellerFields },
    { description: 'The seller as the invoice names it: the business\'s legal identity when the invoice was issued (for a draft, as it is now)' },
  ),
);

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
