/**
 * The words an invoice prints for its legal elements, the same on its PDF and on its payment page:
 * the parties' blocks, the payment terms, the tax breakdown's labels and the exemption and
 * reverse-charge notes. Pure: each view sets them out in its own way.
 */
import type { SellerSnapshot } from '../businesses/view';
import type { BuyerSnapshot } from '../clients/view';
import type { TaxCategory, TaxExempt } from '../money/tax';

/** What an invoice under reverse charge (category AE) must say: the buyer, not the seller, accounts for the VAT. */
export const REVERSE_CHARGE_NOTE = 'Reverse charge: VAT to be accounted for by the recipient';

const DAY_MS = 86_400_000;
const countryNames = new Intl.DisplayNames(['en'], { type: 'region' });
const percentFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 4 });

type Place = Pick<SellerSnapshot, 'postal_code' | 'city' | 'state' | 'country'>;

function present(lines: readonly (string | null | undefined | false)[]): string[] {
  return lines.filter((line): line is string => typeof line === 'string' && line.trim() !== '');
}

/** The lines after the street: `10115 Berlin`, the state, the country by its English name. */
function placeLines(place: Place): string[] {
  return present([present([place.postal_code, place.city]).join(' '), place.state, place.country && (countryNames.of(place.country) ?? place.country)]);
}

/**
 * A tax ID with its label: one written with a country prefix (DE123456789, GB123456789, CHE-…) is a
 * VAT number; one without (a US EIN such as 12-3456789) another tax number.
 */
export function taxIdLine(taxId: string): string {
  return `${/^[A-Z]{2}/.test(taxId) ? 'VAT ID' : 'Tax ID'}: ${taxId}`;
}

/** The seller's block under its legal name: address, tax ID, registration number, contact. */
export function sellerDetails(seller: SellerSnapshot): string[] {
  return present([
    seller.address_line1,
    seller.address_line2,
    ...placeLines(seller),
    seller.tax_id && taxIdLine(seller.tax_id),
    seller.registration_number && `Registration number: ${seller.registration_number}`,
    seller.email,
    seller.phone,
  ]);
}

/** The buyer's block, its name first; the invoice's own references to the buyer's books close it. */
export function buyerLines(buyer: BuyerSnapshot, references: { buyer_reference: string | null; purchase_order: string | null }): string[] {
  return present([
    buyer.name,
    buyer.company,
    buyer.address,
    ...placeLines(buyer),
    buyer.email,
    buyer.tax_id && taxIdLine(buyer.tax_id),
    references.buyer_reference && `Buyer reference: ${references.buyer_reference}`,
    references.purchase_order && `Purchase order: ${references.purchase_order}`,
  ]);
}

/** `Payment due within 30 days` from the two calendar dates (UTC midnights: whole days); `Due on receipt` when they are the same day. */
export function paymentTerms(issueDate: string, dueDate: string): string {
  const days = Math.round((Date.parse(dueDate) - Date.parse(issueDate)) / DAY_MS);
  if (days <= 0) return 'Due on receipt';
  return `Payment due within ${days} ${days === 1 ? 'day' : 'days'}`;
}

/** 19 → `19 %`, 8.875 → `8.875 %`. */
export function formatPercentage(percentage: number): string {
  return `${percentFormat.format(percentage)} %`;
}

/** A tax breakdown line's label: `VAT 19 % on €1,234.00`, the rate as applied and the amount it taxes. */
export function taxLineLabel(displayName: string, percentage: number, taxableAmount: string): string {
  return `${displayName} ${formatPercentage(percentage)} on ${taxableAmount}`;
}

/**
 * What the invoice must say about the tax it does not charge: under reverse charge (AE), the
 * statutory sentence and the VAT ID of the buyer who accounts for the VAT; for every other rate with
 * an exemption reason (only E, K, G and O take one), that reason as the business wrote it. Each text
 * once, however many rates give it.
 */
export function taxNotes(
  breakdown: readonly { category: TaxCategory; exemption_reason: string | null }[],
  buyer: Pick<BuyerSnapshot, 'tax_id'>,
  taxExempt: TaxExempt,
): string[] {
  const notes: string[] = [];
  // The buyer's status says it even on an invoice without a rate, whose breakdown is empty.
  if (taxExempt === 'reverse' || breakdown.some((line) => line.category === 'AE')) {
    notes.push(REVERSE_CHARGE_NOTE);
    if (buyer.tax_id) notes.push(`Recipient's ${taxIdLine(buyer.tax_id)}`);
  }
  for (const line of breakdown) {
    const reason = line.exemption_reason?.trim();
    // A reverse-charge rate's plain `Reverse charge` is what the sentence already says; a longer reason (a legal reference) is kept.
    const said = line.category === 'AE' && reason !== undefined && REVERSE_CHARGE_NOTE.toLowerCase().startsWith(reason.toLowerCase());
    if (reason && !said && !notes.includes(reason)) notes.push(reason);
  }
  if (taxExempt === 'exempt' && !notes.includes('Exempt')) notes.push('Exempt');
  return notes;
}
