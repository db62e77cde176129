import { Knex } from 'knex';
import { BaseModel } from '../db/base-model';
import { selectRows } from '../db/statement';
import type { EinvoiceFormat } from './schema';

export class Business extends BaseModel {
  static override tableName = 'businesses';

  /** The business with this id, by one fixed statement: every new invoice reads its seller. */
  static async findById(conn: Knex, id: number): Promise<Business | undefined> {
    const [row] = await selectRows(conn, 'select * from businesses where id = ?', [id]);
    return row && Business.fromDatabaseJson(row);
  }

  name!: string;
  currency!: string;
  country!: string | null;
  plan!: string;
  /** Space-separated origins that may frame the embeddable signing page; null: any. */
  embed_origins!: string | null;
  /** The e-invoice its invoice e-mails carry; null: none. */
  einvoice_format!: EinvoiceFormat | null;
  /** The legal identity invoices name the seller by; null where not set (`legal_name`: the name is used). */
  legal_name!: string | null;
  address_line1!: string | null;
  address_line2!: string | null;
  city!: string | null;
  postal_code!: string | null;
  state!: string | null;
  tax_id!: string | null;
  registration_number!: string | null;
  email!: string | null;
  phone!: string | null;
  /** Without spaces, upper case. */
  iban!: string | null;
  bic!: string | null;
  invoice_footer!: string | null;
  /** `SCHEME:ID`, e.g. `0088:7300010000001`. */
  peppol_id!: string | null;
}
