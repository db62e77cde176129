/** A business's gateway as the CLI shows it: the secrets never leave the server. Pure. */
import { GatewayCredentials, GatewayProvider } from './model';

export interface GatewayView {
  business_id: number;
  provider: GatewayProvider;
  /** The last four characters only. */
  secret_key_last4: string;
  webhook_secret_last4: string;
  updated_at: string;
}

export function toGatewayView(row: GatewayCredentials): GatewayView {
  return {
    business_id: row.business_id,
    provider: row.provider,
    secret_key_last4: row.secret_key_last4,
    webhook_secret_last4: row.webhook_secret_last4,
    updated_at: row.updated_at,
  };
}
