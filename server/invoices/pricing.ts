/** Prices invoice lines in minor units, collecting every field error. Pure. */
import { AmountProblem, collectMinor, fromQuantityUnits, lineAmount, MAX_MINOR_AMOUNT, toMajor, toQuantityUnits } from '../money/amount';
import { InvoiceItem } from './model';
import { ItemInput } from './schema';

export interface PricedItem {
  position: number;
  description: string;
  quantity_units: number;
  unit_price: number;
  amount: number;
}

/**
 * Prices the items in `currency`: every amount in minor units, each line rounded half away from
 * zero. Problems are recorded per field (`items.2.unit_price`) so one 422 names them all.
 */
export function priceItems(items: ItemInput[], currency: string, errors: Map<string, string[]>): { priced: PricedItem[]; total: number } {
  const priced: PricedItem[] = [];
  let total = 0;
  items.forEach((item, index) => {
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
    total += amount;
    priced.push({ position: index + 1, description: item.description, quantity_units: quantityUnits, unit_price: unitPrice, amount });
  });
  if (total < 0) errors.set('items', ['the invoice total must not be negative: discount lines may not exceed the other lines']);
  if (total > MAX_MINOR_AMOUNT) errors.set('items', ['the invoice total is too large']);
  return { priced, total };
}

/** The items of an existing invoice as input again, to re-price them (e.g. in another currency). */
export function itemsAsInput(items: InvoiceItem[], currency: string): ItemInput[] {
  return items.map((item) => ({
    description: item.description,
    quantity: fromQuantityUnits(item.quantity_units),
    unit_price: toMajor(item.unit_price, currency),
  }));
}
