/**
 * A strict WooCommerce REST API v3 test double: a real store on 127.0.0.1, its orders, webhooks and
 * failure switches, its API keys, and WooCommerce's app authorization pages (/wc-auth/v1/…) with the
 * sign-in of its administrator.
 */
export { startWooStore, WooStore } from './store';
export type { OrderChanges, RecordedRequest, WooStoreOptions } from './store';
export type { AuthKind, KeyPermissions, WooApiKey } from './auth';
export type { CallbackAttempt } from './wc-auth';
export type { Address, BillingAddress, LineInput, Money, OrderInput, OrderNote, OrderStatus, WooOrder } from './orders';
export type { Delivery, WebhookState, WebhookStatus } from './webhooks';
export { companyOnlyOrder, guestJpyOrder, registeredEurOrder } from './fixtures';
