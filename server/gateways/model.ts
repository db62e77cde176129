import { BaseModel } from '../db/base-model';
import { TenantModel } from '../db/tenant-model';

export const GATEWAY_PROVIDERS = ['stripe'] as const;
export type GatewayProvider = (typeof GATEWAY_PROVIDERS)[number];

/** A business's own credentials at its gateway, sealed with the application key. One per business. */
export class GatewayCredentials extends BaseModel {
  static override tableName = 'payment_gateways';

  business_id!: number;
  provider!: GatewayProvider;
  secret_key_sealed!: string;
  webhook_secret_sealed!: string;
  secret_key_last4!: string;
  webhook_secret_last4!: string;
}

/**
 * `pending`: the client completed it with a delayed payment method the gateway has yet to confirm
 * (no new checkout opens meanwhile). `failed`: its delayed payment failed (recorded once, however
 * often the gateway says so).
 */
export const CHECKOUT_STATUSES = ['open', 'pending', 'complete', 'expired', 'failed'] as const;
export type CheckoutStatus = (typeof CHECKOUT_STATUSES)[number];

/** A checkout opened at the gateway for an invoice's amount due; at most one is open per invoice. */
export class CheckoutSession extends TenantModel {
  static override tableName = 'checkout_sessions';
  static override timestampColumns = ['created_at', 'updated_at', 'expires_at', 'last_read_at'];

  invoice_id!: number;
  provider!: GatewayProvider;
  session_id!: string;
  status!: CheckoutStatus;
  /** Minor units of `currency`. */
  amount!: number;
  currency!: string;
  url!: string;
  /** When the gateway stops taking payment on it: it is reused only well before. */
  expires_at!: string;
  /** When a client's return last had it read from the gateway: at most once per interval. */
  last_read_at!: string | null;
}
