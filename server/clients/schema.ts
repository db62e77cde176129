/**
 * Clients in and out: the request fields (joi), with the limits the contract leaves to us, and the
 * response shapes (server/shapes).
 */
import { Static, Type } from '@sinclair/typebox';
import Joi from 'joi';
import { listQuery, ListParams } from '../http/pagination';
import { MetadataChanges, metadataField, MetadataFilter, MetadataShape, withMetadataFilter } from '../metadata/schema';
import { closed, dateTime, envelope, Id, listOf, text } from '../shapes/common';
import { component, nullable } from '../shapes/component';
import { optionalText } from '../validation';

export interface ClientInput {
  name: string;
  email: string;
  phone?: string | null;
  company?: string | null;
  address?: string | null;
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
  address: optionalText(1000),
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

export const ClientShape = component(
  'Client',
  closed({
    id: Id,
    name: text(255, 1),
    email: Type.String({ maxLength: 254, description: 'An e-mail address (internationalised addresses allowed), unique per business and mode, ignoring case' }),
    phone: nullable(text(50)),
    company: nullable(text(255)),
    address: nullable(text(1000)),
    metadata: MetadataShape,
    livemode: Type.Boolean(),
    created_at: dateTime,
    updated_at: dateTime,
  }),
);
export type ClientView = Static<typeof ClientShape>;

export const ClientList = listOf('ClientList', ClientShape);
export const ClientEnvelope = envelope('ClientEnvelope', 'client', ClientShape);
