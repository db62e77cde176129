/**
 * The one tax engine: an invoice's taxes in integer minor units, by the contract's "Tax" rules.
 * Pure: the caller looks the rates up and turns the recorded field errors into a 422.
 */
import Big from 'big.js';
import { AmountProblem, MAX_MINOR_AMOUNT } from './amount';

/** The EN 16931 VAT category (UNCL5305). */
export type TaxCategory = 'S' | 'Z' | 'E' | 'AE' | 'K' | 'G' | 'O';
/** The buyer's tax status: `exempt` and `reverse` apply every rate at 0 %. */
export const TAX_EXEMPT_VALUES = ['none', 'exempt', 'reverse'] as const;
export type TaxExempt = (typeof TAX_EXEMPT_VALUES)[number];

/** Percentages are integer ten-thousandths of a percent: 19 % = 190_000, 8.875 % = 88_750, 100 % = 1_000_000. */
export const PERCENT_SCALE = 10_000;
const HUNDRED_PERCENT = 100 * PERCENT_SCALE;

export const MAX_TAX_RATES_PER_LINE = 5;

/** big.js keeps the sign of a zero (−0.4 rounds to −0): a −0 would fail every Object.is and toEqual downstream. */
function integerOf(value: Big): number {
  return value.eq(0) ? 0 : value.toNumber();
}

/** 19 → 190_000; 8.875 → 88_750; 8.87501 → refused (five decimals); 101 → refused. */
export function toPercentageUnits(percentage: number): number {
  if (!Number.isFinite(percentage)) throw new AmountProblem('must be a finite number');
  const units = new Big(percentage).times(PERCENT_SCALE);
  if (!units.eq(units.round(0, Big.roundDown))) throw new AmountProblem('has at most 4 decimals');
  if (units.lt(0) || units.gt(HUNDRED_PERCENT)) throw new AmountProblem('must be between 0 and 100');
  return integerOf(units);
}

/** 190_000 → 19; 88_750 → 8.875. */
export function fromPercentageUnits(units: number): number {
  return new Big(units).div(PERCENT_SCALE).toNumber();
}

export interface TaxRateTerms {
  id: number;
  display_name: string;
  percentage_units: number;
  inclusive: boolean;
  category: TaxCategory;
  exemption_reason: string | null;
}

export interface TaxLineInput {
  /** quantity × unit_price, rounded (pricing.ts's lineAmount); with an inclusive rate it includes the tax. May be negative (a discount line). */
  amount: number;
  /** The line's effective rate ids (the item's own, or the invoice's defaults when it gives none), 0–5, in the order given. */
  tax_rate_ids: number[];
  /** Tax computed elsewhere for this line, per rate id, in minor units (optional). */
  tax_amounts?: { tax_rate_id: number; amount: number }[];
}

export interface TaxOptions {
  tax_exempt: TaxExempt;
  /** A caller's rounding_amount in minor units (0 when none), added to the computed one. */
  caller_rounding: number;
}

export interface TaxBreakdownLine {
  tax_rate_id: number;
  display_name: string;
  /** As applied: E under an exempt buyer, AE under reverse charge. */
  category: TaxCategory;
  /** As applied: 0 under exempt/reverse. */
  percentage_units: number;
  inclusive: boolean;
  taxable_amount: number;
  tax_amount: number;
  /** 'Exempt' / 'Reverse charge' under exempt/reverse, else the rate's. */
  exemption_reason: string | null;
}

export interface TaxedLine {
  amount: number;
  amount_excluding_tax: number;
}

export interface TaxedInvoice {
  lines: TaxedLine[];
  /** One entry per rate used on a line, ordered by tax_rate_id. */
  tax_breakdown: TaxBreakdownLine[];
  /** The sum of line amounts as entered. */
  subtotal: number;
  /** The sum of every line's amount_excluding_tax. */
  total_excluding_tax: number;
  total_tax: number;
  /** The computed inclusive rounding plus the caller's. */
  rounding_amount: number;
  /** total_excluding_tax + total_tax + rounding_amount. */
  total: number;
}

const BUYER_EXEMPTIONS: Record<Exclude<TaxExempt, 'none'>, { category: TaxCategory; exemption_reason: string }> = {
  exempt: { category: 'E', exemption_reason: 'Exempt' },
  reverse: { category: 'AE', exemption_reason: 'Reverse charge' },
};

/** amount × numerator / denominator, rounded half away from zero; exact however large the product. */
function scaleAndRound(amount: number, numerator: number, denominator: number): number {
  return integerOf(new Big(amount).times(numerator).div(denominator).round(0, Big.roundHalfUp));
}

/** The price without its inclusive tax: 9.99 at 19 % → 8.39. At 0 % it is the whole amount. */
export function excludingInclusiveTax(amount: number, percentageUnits: number): number {
  return scaleAndRound(amount, HUNDRED_PERCENT, HUNDRED_PERCENT + percentageUnits);
}

/** The tax at a rate on an amount, rounded half away from zero: once per rate on an invoice. */
export function taxAt(taxableAmount: number, percentageUnits: number): number {
  return scaleAndRound(taxableAmount, percentageUnits, HUNDRED_PERCENT);
}

function record(errors: Map<string, string[]>, field: string, message: string): void {
  const messages = errors.get(field) ?? [];
  if (!messages.includes(message)) errors.set(field, [...messages, message]);
}

/** A rate as this buyer is charged it: the buyer's exemption replaces its category, percentage and reason. */
function asApplied(rates: ReadonlyMap<number, TaxRateTerms>, id: number, taxExempt: TaxExempt): TaxRateTerms {
  const terms = rates.get(id);
  // The caller checks every id (existence, tenancy, `active`) before pricing: a missing one is a bug, not a 422.
  if (!terms) throw new Error(`tax rate ${id} was not looked up before computing taxes`);
  return taxExempt === 'none' ? terms : { ...terms, ...BUYER_EXEMPTIONS[taxExempt], percentage_units: 0 };
}

interface LineRates {
  /** The line's rates as applied, each once, in the order given. */
  rates: TaxRateTerms[];
  /** The rate whose tax the line's amount includes, if any. */
  inclusive: TaxRateTerms | undefined;
}

function ratesOfLine(line: TaxLineInput, index: number, rates: ReadonlyMap<number, TaxRateTerms>, taxExempt: TaxExempt, errors: Map<string, string[]>): LineRates {
  const field = `items.${index}.tax_rate_ids`;
  if (line.tax_rate_ids.length > MAX_TAX_RATES_PER_LINE) record(errors, field, `a line has at most ${MAX_TAX_RATES_PER_LINE} tax rates`);
  const distinctIds = [...new Set(line.tax_rate_ids)];
  if (distinctIds.length < line.tax_rate_ids.length) record(errors, field, 'names the same tax rate twice');
  const applied = distinctIds.map((id) => asApplied(rates, id, taxExempt));
  const inclusive = applied.filter((terms) => terms.inclusive);
  if (inclusive.length > 1) record(errors, field, 'a line has at most one inclusive tax rate');
  return { rates: applied, inclusive: inclusive[0] };
}

/** What the contract lets a line's given tax deviate from by one minor unit: the line's own tax for that rate. */
function ownTax(line: TaxedLine, terms: TaxRateTerms): number {
  return terms.inclusive ? line.amount - line.amount_excluding_tax : taxAt(line.amount_excluding_tax, terms.percentage_units);
}

/** Checks each line's tax_amounts; returns, per line, the given tax by rate id. */
function givenTaxes(
  lines: TaxLineInput[],
  taxed: TaxedLine[],
  lineRates: LineRates[],
  taxExempt: TaxExempt,
  errors: Map<string, string[]>,
): Map<number, number>[] {
  return lines.map((line, index) => {
    const given = new Map<number, number>();
    (line.tax_amounts ?? []).forEach((entry, position) => {
      const terms = lineRates[index].rates.find((rate) => rate.id === entry.tax_rate_id);
      if (!terms) {
        record(errors, `items.${index}.tax_amounts`, `gives a tax for tax rate ${entry.tax_rate_id}, which the line does not carry`);
        return;
      }
      if (given.has(entry.tax_rate_id)) {
        record(errors, `items.${index}.tax_amounts`, `gives the tax of tax rate ${entry.tax_rate_id} twice`);
        return;
      }
      given.set(entry.tax_rate_id, entry.amount);
      const amountField = `items.${index}.tax_amounts.${position}.amount`;
      if (taxExempt !== 'none') {
        // The one-unit tolerance is for rounding elsewhere; a buyer who pays no tax has no tax to round.
        if (entry.amount !== 0) record(errors, amountField, `must be 0: the buyer is charged no tax (${BUYER_EXEMPTIONS[taxExempt].exemption_reason.toLowerCase()})`);
      } else if (Math.abs(entry.amount - ownTax(taxed[index], terms)) > 1) {
        record(errors, amountField, "must be within one minor unit of the line's own tax for that rate");
      }
    });
    return given;
  });
}

/**
 * Computes the taxes; records every problem in `errors` (field → messages, like pricing.ts) and
 * still returns a result (callers throw a 422 when errors is non-empty). `rates` holds the terms of
 * every id the lines name (the caller has already checked existence, tenancy and `active`).
 */
export function computeTaxes(lines: TaxLineInput[], rates: ReadonlyMap<number, TaxRateTerms>, options: TaxOptions, errors: Map<string, string[]>): TaxedInvoice {
  const lineRates = lines.map((line, index) => ratesOfLine(line, index, rates, options.tax_exempt, errors));
  const usedRates = lineRates.flatMap((line) => line.rates);
  if (usedRates.some((terms) => terms.inclusive) && usedRates.some((terms) => !terms.inclusive)) {
    record(errors, 'items', 'all tax rates on one invoice must be inclusive or all exclusive');
  }

  const taxed: TaxedLine[] = lines.map((line, index) => {
    const inclusive = lineRates[index].inclusive;
    return { amount: line.amount, amount_excluding_tax: inclusive ? excludingInclusiveTax(line.amount, inclusive.percentage_units) : line.amount };
  });
  const given = givenTaxes(lines, taxed, lineRates, options.tax_exempt, errors);

  let computedRounding = 0;
  const tax_breakdown = [...new Map(usedRates.map((terms) => [terms.id, terms])).values()]
    .sort((a, b) => a.id - b.id)
    .map((terms): TaxBreakdownLine => {
      const lineIndexes = lineRates.flatMap((line, index) => (line.rates.some((rate) => rate.id === terms.id) ? [index] : []));
      const taxable_amount = lineIndexes.reduce((sum, index) => sum + taxed[index].amount_excluding_tax, 0);
      const linesWithoutGivenTax = lineIndexes.filter((index) => !given[index].has(terms.id));
      const givenAmounts = lineIndexes.flatMap((index) => given[index].get(terms.id) ?? []);
      if (givenAmounts.length > 0) {
        for (const index of linesWithoutGivenTax) {
          record(errors, `items.${index}.tax_amounts`, `must give the tax for tax rate ${terms.id}, as the other lines with that rate do`);
        }
      }
      // Under an exempt or reverse-charge buyer the tax is 0 whatever a shop sent (a non-zero one is an error above).
      const tax_amount =
        options.tax_exempt === 'none' && linesWithoutGivenTax.length === 0
          ? givenAmounts.reduce((sum, amount) => sum + amount, 0)
          : taxAt(taxable_amount, terms.percentage_units);
      if (terms.inclusive) {
        // What the client was quoted is the sum of the gross lines: the cents lost splitting it into net + tax go here.
        computedRounding += lineIndexes.reduce((sum, index) => sum + taxed[index].amount, 0) - (taxable_amount + tax_amount);
      }
      return {
        tax_rate_id: terms.id,
        display_name: terms.display_name,
        category: terms.category,
        percentage_units: terms.percentage_units,
        inclusive: terms.inclusive,
        taxable_amount,
        tax_amount,
        exemption_reason: terms.exemption_reason,
      };
    });

  if (Math.abs(options.caller_rounding) > lines.length) {
    record(errors, 'rounding_amount', `must be at most one minor unit per line (${lines.length} here), either sign`);
  }
  const subtotal = taxed.reduce((sum, line) => sum + line.amount, 0);
  const total_excluding_tax = taxed.reduce((sum, line) => sum + line.amount_excluding_tax, 0);
  const total_tax = tax_breakdown.reduce((sum, rate) => sum + rate.tax_amount, 0);
  const rounding_amount = computedRounding + options.caller_rounding;
  const total = total_excluding_tax + total_tax + rounding_amount;
  if (total < 0) record(errors, 'items', 'the invoice total must not be negative: discount lines may not exceed the other lines');
  if (total > MAX_MINOR_AMOUNT) record(errors, 'items', 'the invoice total is too large');
  return { lines: taxed, tax_breakdown, subtotal, total_excluding_tax, total_tax, rounding_amount, total };
}
