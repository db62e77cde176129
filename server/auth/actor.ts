/**
 * Who acts on a tenant's records. A caller's credential (an API key today, an OAuth token later), or
 * the system acting for one tenant for a named reason (the CLI, a hosted page after its token named
 * the record). Tenancy-scoped queries take an Actor, never loose ids, so the business and the mode
 * always come from something that proved them.
 */
import { Credential } from './credential';

/** Why the system acts without a caller's credential: each reason is a way in, written down. */
export type SystemReason = 'cli' | 'payment page' | 'signing page' | 'payment gateway' | 'email queue' | 'woocommerce connection' | 'overdue sweep' | 'recurring invoices' | 'reminder sweep';

export interface SystemActor {
  kind: 'system';
  reason: SystemReason;
  businessId: number;
  livemode: boolean;
}

export type Actor = Credential | SystemActor;

export function systemActor(reason: SystemReason, tenancy: { businessId: number; livemode: boolean }): SystemActor {
  return { kind: 'system', reason, businessId: tenancy.businessId, livemode: tenancy.livemode };
}

/**
 * Why a query may read or change the rows of every tenant: a record found by its unguessable link
 * token, the delivery and e-mail workers, the owner's CLI. Each use names its reason.
 */
export type CrossTenantReason =
  | 'payment page token lookup'
  | 'signing page token lookup'
  | 'gateway notification'
  | 'oauth app revocation'
  | 'oauth grants of a business'
  | 'oauth token lookup'
  | 'cli contract countersign'
  | 'cli contract show'
  | 'webhook worker'
  | 'email queue'
  | 'refund reconciliation'
  | 'overdue sweep'
  | 'recurring invoice sweep'
  | 'reminder sweep'
  | 'collection steps'
  | 'cli delivery log'
  | 'cli payment simulation'
  | 'key webhook change'
  | 'woocommerce connect link'
  | 'woocommerce delivery'
  | 'woocommerce store poll'
  | 'woocommerce order sync'
  | 'cli woocommerce stores';

export interface CrossTenantAccess {
  kind: 'across_tenants';
  reason: CrossTenantReason;
}

export function acrossTenants(reason: CrossTenantReason): CrossTenantAccess {
  return { kind: 'across_tenants', reason };
}
