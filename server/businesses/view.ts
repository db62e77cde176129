/** A business as the API (`GET /business`, `GET /ping`) and the CLI show it, and as an invoice names the seller. Pure. */
import { Static } from '@sinclair/typebox';
import { Credential } from '../auth/credential';
import { Business, reminderOffsetsOf } from './model';
import { BusinessProfile, BusinessView, PingView, Seller } from './schema';

/** The seller as an invoice keeps it (the `Seller` shape). */
export type SellerSnapshot = Static<typeof Seller>;

/** What a seller snapshot is taken from: a business row or its profile (whose `legal_name` is never null). */
export type SellerSource = { name: string } & { [F in keyof SellerSnapshot]: string | null };

export function toBusinessProfile(row: Business): BusinessProfile {
  return {
    id: row.id,
    name: row.name,
    currency: row.currency,
    country: row.country ?? null,
    plan: row.plan,
    legal_name: row.legal_name || row.name,
    address_line1: row.address_line1 ?? null,
    address_line2: row.address_line2 ?? null,
    city: row.city ?? null,
    postal_code: row.postal_code ?? null,
    state: row.state ?? null,
    tax_id: row.tax_id ?? null,
    registration_number: row.registration_number ?? null,
    email: row.email ?? null,
    phone: row.phone ?? null,
    iban: row.iban ?? null,
    bic: row.bic ?? null,
    invoice_footer: row.invoice_footer ?? null,
    peppol_id: row.peppol_id ?? null,
    einvoice_format: row.einvoice_format ?? null,
    reminder_offsets: reminderOffsetsOf(row.reminder_offsets),
  };
}

/** The business record (`business create`, `business list`, `init`): the profile without its legal identity. */
export function toBusinessView(business: BusinessView): BusinessView {
  return { id: business.id, name: business.name, currency: business.currency, country: business.country ?? null, plan: business.plan };
}

/**
 * The seller an invoice names, from the business as it is now: its legal identity, `legal_name`
 * falling back to the business's name. The invoice keeps it from the moment it leaves draft.
 */
export function toSellerSnapshot(business: SellerSource): SellerSnapshot {
  return {
    legal_name: business.legal_name || business.name,
    address_line1: business.address_line1 ?? null,
    address_line2: business.address_line2 ?? null,
    city: business.city ?? null,
    postal_code: business.postal_code ?? null,
    state: business.state ?? null,
    country: business.country ?? null,
    tax_id: business.tax_id ?? null,
    registration_number: business.registration_number ?? null,
    email: business.email ?? null,
    phone: business.phone ?? null,
    iban: business.iban ?? null,
    bic: business.bic ?? null,
    invoice_footer: business.invoice_footer ?? null,
    peppol_id: business.peppol_id ?? null,
  };
}

/** `GET /ping`: the credential's business in short, its scopes and mode. */
export function toPing(business: BusinessView, cred: Credential): PingView {
  return { business: { id: business.id, name: business.name, currency: business.currency }, scopes: [...cred.scopes], livemode: cred.livemode };
}
