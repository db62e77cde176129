/**
 * What the WooCommerce connection takes: the CLI's connect link, the connect page's form (which
 * coerces, as page forms do), and the body WooCommerce posts to our callback once the owner approved.
 */
import Joi from 'joi';
import { normalHttpUrl } from '../../plugin/woocommerce/connection';
import { KEY_PERMISSIONS, KeyPermissions, WooConnectLink } from './model';

export const CALLBACK_PATH = '/woocommerce/connect/callback';
export const linkPath = (token: string) => `/woocommerce/connect/${encodeURIComponent(token)}`;
export const returnPath = (token: string) => `${linkPath(token)}/done`;
export const deliveryPath = (publicId: string) => `/woocommerce/stores/${publicId}/webhook`;

/** The connect page's state, found by the link's token. */
export type LinkState =
  | { kind: 'unknown' }
  | { kind: 'expired' }
  | { kind: 'open'; link: WooConnectLink; businessName: string; authorizeUrl: string | null }
  | { kind: 'connected'; link: WooConnectLink; businessName: string; storeUrl: string };

const storeUrl = Joi.string()
  .max(2048)
  .custom((value: string, helpers) => normalHttpUrl(value) ?? helpers.error('string.uri'))
  .messages({ 'string.uri': '{{#label}} must be the store\'s http(s) address, such as https://shop.example.com' });

export interface ConnectLinkInput {
  businessId: number;
  mode: 'test' | 'live';
  /** Normalised (normalStoreUrl); absent: the page asks for it. */
  storeUrl?: string;
}

export const connectLinkSchema = Joi.object<ConnectLinkInput>({
  businessId: Joi.number().integer().positive().required(),
  mode: Joi.string().valid('test', 'live').required(),
  storeUrl,
});

export interface CreatedConnectLink {
  url: string;
  business: { id: number; name: string };
  livemode: boolean;
  store_url: string | null;
  expires_at: string;
  /** Where WooCommerce posts the keys: it must be public https for a real store. */
  callback_url: string;
}

/** The connect page's form: the store's address as typed (the service reads it, so the page can show what was refused). */
export interface StoreForm {
  store_url: string;
}

export const storeFormFields = Joi.object<StoreForm>({
  store_url: Joi.string().allow('').trim().max(2048).failover('').default(''),
});

/** WooCommerce's return to us: `success` 1 when the owner approved, 0 when they denied. */
export interface ReturnQuery {
  success: '1' | '0' | null;
}

export const returnQuery = Joi.object<ReturnQuery>({
  success: Joi.string().valid('1', '0').failover(null).default(null),
});

/** WC_Auth::post_consumer_data(): what WooCommerce posts to the callback, as JSON. */
export interface CallbackBody {
  key_id: number;
  /** The `user_id` we gave WooCommerce: the connect link's token. */
  user_id: string;
  consumer_key: string;
  consumer_secret: string;
  key_permissions: KeyPermissions;
}

export const callbackBodySchema = Joi.object<CallbackBody>({
  key_id: Joi.number().integer().positive().required(),
  user_id: Joi.alternatives(Joi.string().max(64), Joi.number().integer()).required().custom((value: string | number) => String(value)),
  consumer_key: Joi.string().pattern(/^ck_[0-9a-f]{40}$/).required(),
  consumer_secret: Joi.string().pattern(/^cs_[0-9a-f]{40}$/).required(),
  key_permissions: Joi.string().valid(...KEY_PERMISSIONS).required(),
}).unknown(true);

/** A connected store, as the CLI shows it (no secret). */
export interface ConnectedStore {
  id: number;
  business_id: number;
  livemode: boolean;
  store_url: string;
  consumer_key_ending: string;
  key_permissions: string;
  webhook_id: number;
  connected_at: string;
  last_polled_at: string | null;
  last_error: string | null;
}
