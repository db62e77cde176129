/**
 * Metadata as Stripe has it: up to 50 keys of 1–40 characters (no `[` or `]`, which the list filter
 * `metadata[key]=value` uses) with string values of up to 500 characters.
 */
import { Static, Type } from '@sinclair/typebox';
import Joi from 'joi';
import { component } from '../shapes/component';
import { mapOf } from '../shapes/common';

/** What a request sends: a key set to "" or null is removed (on create: not set). */
export type MetadataChanges = Record<string, string | null>;

export const MAX_METADATA_KEYS = 50;

/** A record's metadata as responses show it. */
export const MetadataShape = component(
  'Metadata',
  mapOf(Type.String({ minLength: 1, maxLength: 500 }), {
    maxProperties: MAX_METADATA_KEYS,
    propertyNames: { minLength: 1, maxLength: 40, pattern: '^[^\\[\\]]+$' },
    description: 'Your own key-value pairs, as Stripe\'s metadata: `{}` when there are none. Lists filter on them with `metadata[key]=value`.',
  }),
);
export type Metadata = Static<typeof MetadataShape>;

const KEY = /^[^[\]]{1,40}$/;
const KEY_RULE = 'metadata keys are 1 to 40 characters, without [ or ]';

export const metadataField = Joi.object<MetadataChanges>()
  .pattern(KEY, Joi.string().max(500).allow('', null))
  .max(MAX_METADATA_KEYS)
  .messages({ 'object.unknown': KEY_RULE, 'object.max': `metadata has at most ${MAX_METADATA_KEYS} keys` })
  .description(
    `Up to ${MAX_METADATA_KEYS} keys (1–40 characters, no [ or ]) with string values of up to 500 characters. Merged into the object's metadata on update; a key set to "" or null is removed.`,
  );

/** The update of a record whose other fields never change once made (a payment, a contract): its metadata only. */
export const metadataOnlyBody = Joi.object<{ metadata?: MetadataChanges }>({ metadata: metadataField });

/** The list filter: `metadata[key]=value`, several ANDed. */
export interface MetadataFilter {
  metadata?: Metadata;
}

const FILTER_PARAMETER = /^metadata\[([^[\]]{1,40})\]$/;

/**
 * Adds `metadata[key]=value` filters to a list's query schema and collects them as `metadata`. A
 * parameter that starts like one but is malformed is a 400, never ignored: a filter silently dropped
 * would answer with every record.
 */
export function withMetadataFilter<T extends MetadataFilter>(schema: Joi.ObjectSchema<T>): Joi.ObjectSchema<T> {
  return schema
    .pattern(FILTER_PARAMETER, Joi.string().max(500).messages({ 'string.empty': 'a metadata filter needs a value' }))
    .pattern(/^metadata/, Joi.any().forbidden().messages({ 'any.unknown': `metadata filters are written metadata[key]=value; ${KEY_RULE}` }))
    .custom((query: Record<string, unknown>) => {
      const filter: Metadata = {};
      const rest: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(query)) {
        const key = FILTER_PARAMETER.exec(name)?.[1];
        if (key === undefined) rest[name] = value;
        else filter[key] = value as string;
      }
      return Object.keys(filter).length ? { ...rest, metadata: filter } : rest;
    });
}

/** Whether a list's query schema takes the metadata filter (the OpenAPI document then describes it). */
export function takesMetadataFilter(schema: Joi.ObjectSchema): boolean {
  const patterns = (schema.describe() as { patterns?: { regex?: string }[] }).patterns ?? [];
  return patterns.some((p) => p.regex === String(FILTER_PARAMETER));
}
