/** Prices invoice lines and their taxes in minor units, collecting every field error. Pure. */
import { AmountProblem, collectMinor, fromQuantityUnits, lineAmount, toMajor, toQuantityUnits } from '../money/amount';
import { computeTaxes, TaxedInvoice, TaxExempt, TaxRateTerms } from '../money/tax';
import { InvoiceItem } from './model';
import { ItemInput } from './schema';

export interface PricedItem {
  position: number;
  description: string;
  quantity_units: number;
  unit_price: number;
  amount: number;
  amount_excluding_tax: number;
  /** As the item gave them (null: none given, the invoice's defaults apply). */
  tax_rate_ids: number[] | null;
  tax_amounts: { tax_rate_id: number; amount: number }[] | null;
}

/** What taxes an invoice's lines besides the lines themselves. */
export interface TaxTerms {
  currency: string;
  default_tax_rate_ids: number[];
  tax_exempt: TaxExempt;
  /** The caller's rounding_amount in major units, if it gave one. */
  rounding_amount?: number;
}

export interface PricedInvoice {
  items: PricedItem[];
  taxes: TaxedInvoice;
  /** The caller's rounding in minor units (0 when none), kept to re-price a draft. */
  caller_rounding: number;
}

/**
 * Every rate id the lines use (each item's own, or the defaults for an item that gives none), and
 * the request fields each came from, for a 422 that names them (`items.2.tax_rate_ids`).
 */
export function rateIdsOf(items: readonly Pick<ItemInput, 'tax_rate_ids'>[], defaults: readonly number[]): { ids: number[]; fieldsOf: (id: number) => string[] } {
  const fields = new Map<number, string[]>();
  const use = (id: number, field: string) => fields.set(id, [...(fields.get(id) ?? []), field]);
  items.forEach((item, index) => item.tax_rate_ids?.forEach((id) => use(id, `items.${index}.tax_rate_ids`)));
  // The defaults are checked even where every item gives its own: the invoice keeps them for lines to come.
  defaults.forEach((id) => use(id, 'default_tax_rate_ids'));
  return { ids: [...fields.keys()], fieldsOf: (id) => fields.get(id) ?? [] };
}

/**
 * Prices the items in `terms.currency` and computes their taxes with the one tax engine
 * (money/tax.ts): every amount in minor units, each line rounded half away from zero, tax once per
 * rate. `rates` holds the terms of every id the lines use. Problems are recorded per field
 * (`items.2.unit_price`, `items.0.tax_amounts.1.amount`) so one 422 names them all.
 */
export function priceInvoice(items: ItemInput[], terms: TaxTerms, rates: ReadonlyMap<number, TaxRateTerms>, errors: Map<string, string[]>): PricedInvoice {
  const { currency } = terms;
  const priced = items.map((item, index): PricedItem => {
    const unitPrice = collectMinor(errors, `items.${index}.unit_price`, item.unit_price, currency);
    let quantityUnits = 0;
    let amount = 0;
    try {
      quantityUnits = toQuantityUnits(item.quantity);
      amount = lineAmount(quantityUnits, unitPrice);
    } catch (err) {
      if (!(err instanceof AmountProblem)) throw err;
      errors.set(`items.${index}.quantity`, [err.message]);
    }
    const taxAmounts =
      item.tax_amounts?.map(({ tax_rate_id, amount: given }, at) => ({
        tax_rate_id,
        amount: collectMinor(errors, `items.${index}.tax_amounts.${at}.amount`, given, currency),
      })) ?? null;
    return {
      position: index + 1,
      description: item.description,
      quantity_units: quantityUnits,
      unit_price: unitPrice,
      amount,
      amount_excluding_tax: amount,
      tax_rate_ids: item.tax_rate_ids ?? null,
      tax_amounts: taxAmounts,
    };
  });
  const callerRounding = terms.rounding_amount === undefined ? 0 : collectMinor(errors, 'rounding_amount', terms.rounding_amount, currency);
  const taxes = computeTaxes(
    priced.map((item) => ({
      amount: item.amount,
      tax_rate_ids: item.tax_rate_ids ?? terms.default_tax_rate_ids,
      ...(item.tax_amounts ? { tax_amounts: item.tax_amounts } : {}),
    })),
    rates,
    { tax_exempt: terms.tax_exempt, caller_rounding: callerRounding },
    errors,
  );
  taxes.lines.forEach((line, index) => (priced[index].amount_excluding_tax = line.amount_excluding_tax));
  return { items: priced, taxes, caller_rounding: callerRounding };
}

/** The items of an existing invoice as input again, to re-price them (e.g. in another currency). */
export function itemsAsInput(items: InvoiceItem[], currency: string): ItemInput[] {
  return items.map((item) => ({
    description: item.description,
    quantity: fromQuantityUnits(item.quantity_units),
    unit_price: toMajor(item.unit_price, currency),
    ...(item.tax_rate_ids ? { tax_rate_ids: item.tax_rate_ids } : {}),
    ...(item.tax_amounts ? { tax_amounts: item.tax_amounts.map(({ tax_rate_id, amount }) => ({ tax_rate_id, amount: toMajor(amount, currency) })) } : {}),
  }));
}
