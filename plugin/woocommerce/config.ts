/**
 * The bridge's configuration file (default ./data/woocommerce.json): both ends' credentials and the
 * webhook secret, so it is written with mode 0600, atomically (a temporary file renamed over it).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Joi from 'joi';
import { systemClock } from '../../server/clock';

export const DEFAULT_CONFIG_FILE = './data/woocommerce.json';

export interface BridgeConfig {
  store_url: string;
  consumer_key: string;
  consumer_secret: string;
  api_url: string;
  api_key: string;
  bridge_url: string;
  /** A short hash of the store URL: part of idempotency keys (and of the earlier bridge's invoice markers). */
  store_id: string;
  webhook_id: number;
  webhook_secret: string;
  connected_at: string;
  /** Orders modified after this time are polled next (moved on after each clean poll). */
  poll_cursor?: string;
  /** CONFIG_FORMAT; a file without it was written by the earlier bridge. */
  format?: number;
  /**
   * Set when a file of the earlier bridge is first used: orders created before then may have an
   * invoice that bridge made without recording it on the order, found by the marker in its notes.
   */
  legacy_orders_before?: string;
  /** The order meta key of a B2B buyer's VAT number (`woo connect --vat-meta-key`); unset: `_billing_vat_number`. */
  vat_meta_key?: string;
}

/** 2: orders are found by metadata. The earlier bridge's files have no format. */
export const CONFIG_FORMAT = 2;

const schema = Joi.object<BridgeConfig>({
  store_url: Joi.string().uri({ scheme: ['http', 'https'] }).required(),
  consumer_key: Joi.string().required(),
  consumer_secret: Joi.string().required(),
  api_url: Joi.string().uri({ scheme: ['http', 'https'] }).required(),
  api_key: Joi.string().required(),
  bridge_url: Joi.string().uri({ scheme: ['http', 'https'] }).required(),
  store_id: Joi.string().hex().required(),
  webhook_id: Joi.number().integer().positive().required(),
  webhook_secret: Joi.string().required(),
  connected_at: Joi.string().isoDate().required(),
  poll_cursor: Joi.string().isoDate(),
  format: Joi.number().integer().min(CONFIG_FORMAT),
  legacy_orders_before: Joi.string().isoDate(),
  vat_meta_key: Joi.string().trim().min(1).max(255),
}).unknown(true);

export class BridgeConfigError extends Error {}

export function readBridgeConfig(file: string): BridgeConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    throw new BridgeConfigError(missing ? `${file} does not exist: run \`invoicing woo connect\` first` : `${file} is not valid JSON`);
  }
  const result = schema.validate(raw, { abortEarly: false });
  if (result.error) throw new BridgeConfigError(`${file}: ${result.error.details.map((d) => d.message).join('; ')}`);
  return result.value;
}

export function writeBridgeConfig(file: string, config: BridgeConfig): void {
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 });
  // A new file of an unguessable name ('wx' neither follows nor reuses one), synced, then renamed over the old.
  const temporary = `${file}.${randomBytes(8).toString('hex')}.tmp`;
  const fd = fs.openSync(temporary, 'wx', 0o600);
  try {
    fs.writeSync(fd, `${JSON.stringify(config, null, 2)}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temporary, file);
}

/**
 * A configuration of the earlier bridge brought to this format: its orders from before now may have
 * invoices known only by their notes' marker. One of this format is returned as it is.
 */
export function upgradedConfig(config: BridgeConfig, now = systemClock.now()): BridgeConfig {
  return config.format === undefined ? { ...config, format: CONFIG_FORMAT, legacy_orders_before: now.toISOString() } : config;
}

/** Reads the configuration, writing it back first upgraded when the earlier bridge wrote it. */
export function openBridgeConfig(file: string): BridgeConfig {
  const config = readBridgeConfig(file);
  const upgraded = upgradedConfig(config);
  if (upgraded !== config) writeBridgeConfig(file, upgraded);
  return upgraded;
}

/**
 * Records the poll's progress in the file as it is now: a `woo connect` run since the bridge started
 * keeps its webhook and secret.
 */
export function savePollCursor(file: string, cursor: string): void {
  writeBridgeConfig(file, { ...readBridgeConfig(file), poll_cursor: cursor });
}
