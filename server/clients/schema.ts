/**
 * Clients in and out: the request fields (joi), with the limits the contract leaves to us, and the
 * response shapes (server/shapes), the client as an invoice names the buyer (`Buyer`) included.
 */
import { Static, Type } from '@sinclair/typebox';
import Joi from 'joi';
import { countryField, PEPPOL_ID_PATTERN, peppolIdField, taxIdField } from '../businesses/legal-identity';
import { listQuery, ListParams } from '../http/pagination';
import { MetadataChanges, metadataField, MetadataFilter, MetadataShape, withMetadataFilter } from '../metadata/schema';
import { closed, dateTime, envelope, Id, listOf, text } from '../shapes/common';
import { component, nullable, stringEnum } from '../shapes/component';
import { optionalText } from '../validation';
import { TAX_EXEMPT_VALUES, TaxExempt } from '../money/tax';


export interface ClientInput {
  name: string;
  email: string;
  phone?: string | null;
  company?: string | null;
  /** The street lines. */
  address?: string | null;
  city?: string | null;
  postal_code?: string | null;
  state?: string | null;
  country?: string | null;
  tax_id?: string | null;
  tax_exempt?: TaxExempt;
  buyer_reference?: string | null;
  peppol_id?: string | null;
  metadata?: MetadataChanges;
}

export interface ClientListParams extends ListParams, MetadataFilter {
  search?: string;
}

const fields = {
  name: Joi.string().trim().min(1).max(255),
  email: Joi.string()
    .trim()
    .max(254)
    .email({ tlds: { allow: false } })
    // Internationalised addresses (RFC 6531) are accepted, so the document says idn-email.
    .meta({ format: 'idn-email' })
    .description('An e-mail address (internationalised addresses allowed), unique per business and mode, ignoring case'),
  phone: optionalText(50),
  company: optionalText(255),
  address: optionalText(1000).description('The street lines of the address (trimmed; an empty string is stored as null)'),
  city: optionalText(100),
  postal_code: optionalText(20),
  state: optionalText(100).description('State, province or region (trimmed; an empty string is stored as null)'),
  country: countryField.allow(null, ''),
  tax_id: taxIdField.allow(null, ''),
  tax_exempt: Joi.string()
    .valid(...TAX_EXEMPT_VALUES)
    .description('The client\'s tax status: none (the default), exempt, or reverse (reverse charge)'),
  buyer_reference: optionalText(255).description('The default buyer_reference of the client\'s invoices, e.g. a German Leitweg-ID (trimmed; an empty string is stored as null)'),
  peppol_id: peppolIdField.allow(null, ''),
  metadata: metadataField,
};

export const createClientBody = Joi.object<ClientInput>({
  ...fields,
  name: fields.name.required(),
  email: fields.email.required(),
});

export const updateClientBody = Joi.object<Partial<ClientInput>>(fields);

export const listClientsQuery = withMetadataFilter(listQuery<ClientListParams>({
  // Control characters match nothing a client holds, and a NUL would cut SQLite's LIKE pattern short.
  search: Joi.string()
    .max(255)
    .allow('')
    // eslint-disable-next-line no-control-regex -- refusing control characters is the point; no flags, as the OpenAPI pattern is this regex's source
    .pattern(/^[^\u0000-\u001f\u007f]*$/)
    .messages({ 'string.pattern.base': 'search must not contain control characters' })
    .description('Case-insensitive substring of name, e-mail or company; control characters are a 400'),
}));

export const TaxExemptShape = stringEnum(TAX_EXEMPT_VALUES, {
  description: 'The buyer\'s tax status: none; exempt (every rate applies as exempt, category E, at 0 %); reverse (reverse charge, category AE, at 0 %)',
});

/** The fields a client and a buyer share after the street lines. */
const buyerAddressFields = {
  city: nullable(text(100)),
  postal_code: nullable(text(20)),
  state: nullable(text(100), { description: 'State, province or region' }),
  country: nullable(Type.String({ pattern: '^[A-Z]{2}$' }), { description: 'ISO 3166-1 alpha-2, or null' }),
  tax_id: nullable(text(50), { description: 'A VAT or other tax number; an EU VAT number (checked for its country\'s shape) without spaces' }),
  tax_exempt: TaxExemptShape,
  buyer_reference: nullable(text(255), { description: 'The default buyer_reference of the client\'s invoices, e.g. a German Leitweg-ID' }),
  peppol_id: nullable(Type.String({ pattern: PEPPOL_ID_PATTERN }), { description: 'Peppol participant ID SCHEME:ID, e.g. 0088:7300010000001' }),
};

export const ClientShape = component(
  'Client',
  closed({
    id: Id,
    name: text(255, 1),
    email: Type.String({ maxLength: 254, description: 'An e-mail address (internationalised addresses allowed), unique per business and mode, ignoring case' }),
    phone: nullable(text(50)),
    company: nullable(text(255)),
    address: nullable(text(1000), { description: 'The street lines' }),
    ...buyerAddressFields,
    metadata: MetadataShape,
    livemode: Type.Boolean(),
    created_at: dateTime,
    updated_at: dateTime,
  }),
);
export type ClientView = Static<typeof ClientShape>;

export const ClientList = listOf('ClientList', ClientShape);
export const ClientEnvelope = envelope('ClientEnvelope', 'client', ClientShape);

/**
 * The buyer as an invoice keeps it when it leaves draft: the client's name, company, e-mail, address
 * and tax identity. Every field but `tax_exempt` may be null.
 */
export const Buyer = component(
  'Buyer',
  closed(
    {
      name: nullable(text(255)),
      company: nullable(text(255)),
      email: nullable(text(254)),
      address: nullable(text(1000), { description: 'The street lines' }),
      ...buyerAddressFields,
    },
    { description: 'The buyer as the invoice names it: the client when the invoice was issued (for a draft, as it is now)' },
  ),
);
