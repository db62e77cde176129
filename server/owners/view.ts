/** An owner as the CLI shows it: never the password's hash. Pure. */
import { BusinessOwner } from './model';

export interface OwnerView {
  id: number;
  business_id: number;
  email: string;
  created_at: string;
}

export const toOwnerView = (row: BusinessOwner): OwnerView => ({ id: row.id, business_id: row.business_id, email: row.email, created_at: row.created_at });
