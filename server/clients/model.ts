import { TenantModel } from '../db/tenant-model';
import { Metadata } from '../metadata/schema';

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
  address!: string | null;
  /** Null on clients from before metadata existed. */
  metadata!: Metadata | null;
}
