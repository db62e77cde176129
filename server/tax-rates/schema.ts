/**
 * Tax rates in and out: the request fields (joi) with the EN 16931 category rules, checked where
 * the body is validated (the route and the CLI alike), and the response shapes.
 */
import { Static, Type } from '@sinclair/typebox';
import Joi from 'joi';
import { isCountry } from '../businesses/countries';
import { listQuery, ListParams } from '../http/pagination';
import { MetadataChanges, metadataField, MetadataFilter, MetadataShape, withMetadataFilter } from '../metadata/schema';
import { AmountProblem } from '../money/amount';
import { TaxCategory, toPercentageUnits } from '../money/tax';
import { closed, dateTime, envelope, Id, listOf, text } from '../shapes/common';
import { component, nullable, stringEnum } from '../shapes/component';
import { optionalText } from '../validation';

/** What each EN 16931 VAT category (UNCL5305) means: a category added to money/tax.ts fails the type check until it is named here. */
const CATEGORY_MEANINGS: Record<TaxCategory, string> = {
  S: 'standard rate',
  Z: 'zero rated',
  E: 'exempt',
  AE: 'reverse charge',
  K: 'intra-community supply',
  G: 'export outside the EU',
  O: 'outside the scope of VAT',
};
/** Every category, in the contract's order. */
export const TAX_CATEGORIES = Object.keys(CATEGORY_MEANINGS) as TaxCategory[];
const CATEGORY_LIST = TAX_CATEGORIES.map((code) => `${code} ${CATEGORY_MEANINGS[code]}`).join(', ');

/** The categories whose invoices must say why no tax is charged (EN 16931 BR-E-10, BR-AE-10, BR-IC-10, BR-G-10, BR-O-10). */
const EXEMPT_CATEGORIES: readonly TaxCategory[] = ['E', 'AE', 'K', 'G', 'O'];

export const DISPLAY_NAME_MAX = 100;
export const DESCRIPTION_MAX = 500;
export const EXEMPTION_REASON_MAX = 500;

/** `S` above 0 %, `Z` at 0 %: what a rate given no category is. */
export function defaultCategory(percentage: number): TaxCategory {
  return percentage > 0 ? 'S' : 'Z';
}

export interface TaxRateInput {
  display_name: string;
  /** A percentage, at most 4 decimals: converted to integer units by the service (money/tax.ts). */
  percentage: number;
  inclusive?: boolean;
  category?: TaxCategory;
  country?: string | null;
  description?: string | null;
  exemption_reason?: string | null;
  metadata?: MetadataChanges;
}

/** What changes on a rate: never its percentage, category, `inclusive`, country or exemption reason. */
export interface TaxRateChanges {
  display_name?: string;
  description?: string | null;
  active?: boolean;
  metadata?: MetadataChanges;
}

export interface TaxRateListParams extends ListParams, MetadataFilter {
  active?: boolean;
}

const displayName = Joi.string().trim().min(1).max(DISPLAY_NAME_MAX).description('The name printed on invoices (`VAT`, `Sales tax NY`)');
const description = optionalText(DESCRIPTION_MAX).description('For your own use: not printed on invoices. Trimmed; an empty string is stored as null');

const percentage = Joi.number()
  .strict()
  .min(0)
  .max(100)
  // money/tax.ts decides what converts to integer units; its refusal (a fifth decimal) is the field's error.
  .custom((value: number, helpers) => {
    // Out of range, min or max has said so already: one message for the field.
    if (value < 0 || value > 100) return value;
    try {
      toPercentageUnits(value);
      return value;
    } catch (err) {
      if (!(err instanceof AmountProblem)) throw err;
      return helpers.error('percentage.units', { problem: err.message });
    }
  })
  .messages({ 'percentage.units': '{{#label}} {{#problem}}' })
  .description('A percentage from 0 to 100 with at most 4 decimals, as a JSON number (19, 8.875); a numeric string is refused');

const category = Joi.string()
  .valid(...TAX_CATEGORIES)
  .description(
    `EN 16931 VAT category (UNCL5305): ${CATEGORY_LIST}. Default: S above 0 %, Z at 0 %. S requires a percentage above 0, every other category percentage 0; E, AE, K, G and O require exemption_reason, and S and Z take none`,
  );

const country = Joi.string()
  .uppercase()
  .custom((value: string, helpers) => (isCountry(value) ? value : helpers.error('any.invalid')))
  .allow(null)
  .messages({ 'any.invalid': '{{#label}} must be an ISO 3166-1 alpha-2 code such as DE' })
  .description('ISO 3166-1 alpha-2 (any case; returned upper-case), or null: where the rate applies, for your own bookkeeping');

const exemptionReason = optionalText(EXEMPTION_REASON_MAX).description(
  'Why no tax is charged, printed on the invoice (`Reverse charge`, `Exempt under Art. 132 VAT Directive`): required for E, AE, K, G and O, refused for S and Z',
);

/**
 * The category rules between fields, run once every field is valid on its own. Each rule is its own
 * `custom`, so one 422 names every field that breaks one. The category given (or the default) goes on
 * into the validated input, so what is stored is what was checked.
 */
export const createTaxRateBody = Joi.object<TaxRateInput>({
  display_name: displayName.required(),
  percentage: percentage.required(),
  inclusive: Joi.boolean().strict().default(false).description('Whether the line prices include this tax (default false)'),
  category,
  country,
  description,
  exemption_reason: exemptionReason,
  metadata: metadataField,
})
  .custom((input: TaxRateInput, helpers) => {
    const given = input.category;
    if (given === 'S' && input.percentage === 0) return helpers.error('taxRate.standard', {}, { path: ['category'] });
    if (given !== undefined && given !== 'S' && input.percentage !== 0) return helpers.error('taxRate.zero', { category: given }, { path: ['category'] });
    return { ...input, category: given ?? defaultCategory(input.percentage) };
  })
  .custom((input: TaxRateInput, helpers) => {
    const applied = input.category ?? defaultCategory(input.percentage);
    const reason = input.exemption_reason ? input.exemption_reason : null;
    if (EXEMPT_CATEGORIES.includes(applied) && reason === null) return helpers.error('taxRate.reasonRequired', { category: applied }, { path: ['exemption_reason'] });
    if (!EXEMPT_CATEGORIES.includes(applied) && reason !== null) return helpers.error('taxRate.reasonRefused', { category: applied }, { path: ['exemption_reason'] });
    return input;
  })
  .messages({
    'taxRate.standard': 'category S (standard rate) requires a percentage above 0; a 0 % rate is Z, E, AE, K, G or O',
    'taxRate.zero': 'category {{#category}} requires percentage 0; only S (standard rate) takes a percentage above 0',
    'taxRate.reasonRequired': 'exemption_reason is required for category {{#category}}: the invoice must say why no tax is charged',
    'taxRate.reasonRefused': 'exemption_reason is only for categories E, AE, K, G and O, not {{#category}}',
  });

/** Only these change: a rate's percentage, category and `inclusive` never do (as Stripe's); make a new rate and archive this one. */
export const updateTaxRateBody = Joi.object<TaxRateChanges>({
  display_name: displayName,
  description,
  active: Joi.boolean().strict().description('false archives the rate: new invoice lines cannot take it; true brings it back'),
  metadata: metadataField,
}).messages({
  'object.unknown': '{{#label}} cannot change: a tax rate takes only display_name, description, active and metadata on update (create a new rate and archive this one)',
});

export const listTaxRatesQuery = withMetadataFilter(
  listQuery<TaxRateListParams>({
    // A pattern, not valid(): joi returns a valid() value as it is, before the custom turns it into a boolean.
    active: Joi.string()
      .pattern(/^(true|false)$/)
      .custom((value: string) => value === 'true')
      .messages({ 'string.pattern.base': 'active must be true or false' })
      .description('`true`: only active rates; `false`: only archived ones; anything else is a 400'),
  }),
);

export const TaxCategoryShape = component(
  'TaxCategory',
  stringEnum(TAX_CATEGORIES, { description: `EN 16931 VAT category (UNCL5305): ${CATEGORY_LIST}` }),
);

export const TaxRateShape = component(
  'TaxRate',
  closed({
    id: Id,
    display_name: text(DISPLAY_NAME_MAX, 1),
    percentage: Type.Number({ minimum: 0, maximum: 100, description: 'A percentage with at most 4 decimals (19, 8.875); never changes' }),
    inclusive: Type.Boolean({ description: 'Whether the line prices include this tax; never changes' }),
    category: TaxCategoryShape,
    country: nullable(Type.String({ pattern: '^[A-Z]{2}$' }), { description: 'ISO 3166-1 alpha-2, or null' }),
    description: nullable(text(DESCRIPTION_MAX)),
    exemption_reason: nullable(text(EXEMPTION_REASON_MAX), { description: 'Why no tax is charged (E, AE, K, G, O); null for S and Z' }),
    active: Type.Boolean({ description: 'false: archived, and new invoice lines cannot take it' }),
    metadata: MetadataShape,
    livemode: Type.Boolean(),
    created_at: dateTime,
  }),
);
export type TaxRateView = Static<typeof TaxRateShape>;

export const TaxRateList = listOf('TaxRateList', TaxRateShape);
export const TaxRateEnvelope = envelope('TaxRateEnvelope', 'tax_rate', TaxRateShape);
