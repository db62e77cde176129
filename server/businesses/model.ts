import { Knex } from 'knex';
import { BaseModel } from '../db/base-model';
import { selectRows } from '../db/statement';
import type { EinvoiceFormat } from './schema';

/** The offsets as `reminder_offsets` stores them (`-3,1,7`, ascending); null for none. */
export function storedReminderOffsets(offsets: readonly number[] | null): string | null {
  return offsets?.length ? [...offsets].sort((a, b) => a - b).join(',') : null;
}

/** The offsets a stored `reminder_offsets` holds, ascending. */
export function reminderOffsetsOf(stored: string | null): number[] {
  return stored ? stored.split(',').map(Number) : [];
}

export class Business extends BaseModel {
  static override tableName = 'businesses';
  static override timestampColumns = ['created_at', 'updated_at', 'reminders_set_at_live', 'reminders_set_at_test'];

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
  /** Days from the due date on which clients are reminded, `-3,1,7` (see storedReminderOffsets); null: none. */
  reminder_offsets!: string | null;
  /**
   * When the offsets were last set, by the clock of each mode (a test mode's may be frozen): a
   * reminder dated before then is never sent. Null while no offsets were ever set.
   */
  reminders_set_at_live!: string | null;
  reminders_set_at_test!: string | null;
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
