import { TenantModel } from '../db/tenant-model';
import { Metadata } from '../metadata/schema';
import type { TaxExempt } from '../money/tax';

export class Client extends TenantModel {
  static override tableName = 'clients';
  static override jsonAttributes = ['metadata'];

  name!: string;
  email!: string;
  /** Lower-cased e-mail: unique per business and mode. */
  email_normalized!: string;
  /** Lower-cased name, e-mail and company, for case-insensitive substring search on both drivers. */
  search_text!: string;
  phone!: string | null;
  company!: string | null;
  /** The street lines. */
  address!: string | null;
  city!: string | null;
  postal_code!: string | null;
  state!: string | null;
  /** ISO 3166-1 alpha-2. */
  country!: string | null;
  tax_id!: string | null;
  tax_exempt!: TaxExempt;
  /** The default `buyer_reference` of the client's invoices (e.g. a German Leitweg-ID). */
  buyer_reference!: string | null;
  /** `SCHEME:ID`, e.g. `0088:7300010000001`. */
  peppol_id!: string | null;
  /** Null on clients from before metadata existed. */
  metadata!: Metadata | null;
}
