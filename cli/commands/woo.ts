/** `invoicing woo …`: connect a WooCommerce store, run the bridge, backfill, and see how it is doing. */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { Command, Option } from 'commander';
import pino from 'pino';
import { systemClock } from '../../server/clock';
import { normalHttpUrl, REQUIRED_SCOPES, storeIdOf, WEBHOOK } from '../../plugin/woocommerce/connection';
import {
  BridgeConfig,
  BridgeConfigError,
  CONFIG_FORMAT,
  DEFAULT_CONFIG_FILE,
  openBridgeConfig,
  readBridgeConfig,
  savePollCursor,
  upgradedConfig,
  writeBridgeConfig,
} from '../../plugin/woocommerce/config';
import { invoiceIdOf } from '../../plugin/woocommerce/order';
import { PartnerApi, PartnerError, PartnerUnavailable } from '../../plugin/woocommerce/partner';
import { Bridge } from '../../plugin/woocommerce/runner';
import { StoreError, WooStore } from '../../plugin/woocommerce/store';
import type { ConnectedStore } from '../../server/woocommerce/schema';
import { BUSINESS_QUESTION, cliConfig, withContext } from '../context';
import { CliFailure, UsageError } from '../errors';
import { cliIo } from '../io';
import { parseMode, parseSince, positiveId, refusedAsUsage, validBody } from '../options';
import { examples, output, shortTime, table } from '../output';
import { ensureOptions } from '../prompt';
import { groupCommand } from './groups';

interface ConnectOptions {
  import?: string;
  storeUrl?: string;
  consumerKey?: string;
  consumerSecret?: string;
  apiKey?: string;
  apiUrl?: string;
  bridgeUrl?: string;
  vatMetaKey?: string;
  config: string;
  json?: boolean;
}


/**
 * The configuration file, as a usage failure when it is missing or wrong. The commands that work on
 * orders `open` it, which upgrades a file of the earlier bridge in place; `woo status` only reads it.
 */
function loadBridgeConfig(file: string, load: (file: string) => BridgeConfig = openBridgeConfig): BridgeConfig {
  try {
    return load(file);
  } catch (err) {
    if (err instanceof BridgeConfigError) throw new CliFailure(err.message);
    throw err;
  }
}

/** The configuration this file held for the same store, if any (upgraded, if the earlier bridge wrote it). */
function previousConfig(file: string, storeUrl: string): BridgeConfig | null {
  try {
    const config = readBridgeConfig(file);
    return config.store_url === storeUrl ? upgradedConfig(config) : null;
  } catch {
    return null;
  }
}

/** Store and API failures as one line naming which end failed. */
async function step<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof StoreError || err instanceof PartnerError || err instanceof PartnerUnavailable) throw new CliFailure(`${what}: ${err.message}`);
    throw err;
  }
}

function urlOption(value: string, flag: string): string {
  const url = normalHttpUrl(value);
  if (!url) throw new UsageError(`${flag} must be an http(s) URL without credentials, query or fragment`);
  return url;
}

/**
 * `woo connect --import FILE`: the separate bridge's store moved into the server's database, so
 * every server process serves it; its webhook is pointed at the server and `woo serve` can stop.
 */
async function importConfig(file: string, json: boolean | undefined): Promise<void> {
  if (!fs.existsSync(file)) throw new UsageError(`--import: ${file} does not exist`);
  // The store's webhook is pointed at BASE_URL: a default of localhost would cut a real store off.
  if (!cliIo().env.BASE_URL) throw new UsageError('woo connect --import needs BASE_URL, the server\'s public address the store will deliver to');
  const config = loadBridgeConfig(file);
  const store = await withContext(({ services }) => step(`importing ${config.store_url}`, () => services.woocommerce.importConfig(config)));
  output(json, store, () => [
    `Imported ${store.store_url} into business ${store.business_id} (${store.livemode ? 'live' : 'test'} mode) as store ${store.id}`,
    `Its webhook ${store.webhook_id} now delivers to the server at ${cliConfig().baseUrl}; the bridge there acts with a key of its own.`,
    'Keep `invoicing woo serve` for this file stopped: two bridges on one store would invoice an order twice.',
  ]);
}

async function connect(raw: ConnectOptions): Promise<void> {
  if (raw.import !== undefined) {
    // The keys may come from the environment (WOO_CONSUMER_KEY…): only what was typed is refused.
    const others = (['storeUrl', 'apiUrl', 'bridgeUrl', 'vatMetaKey'] as const).filter((key) => raw[key] !== undefined);
    if (others.length) throw new UsageError(`--import takes everything from the file: drop ${others.map((key) => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ')}`);
    return importConfig(raw.import, raw.json);
  }
  const opts = await ensureOptions(raw, [
    { key: 'storeUrl', flag: '--store-url', message: 'Store URL (https://shop.example.com)' },
    { key: 'consumerKey', flag: '--consumer-key', message: 'WooCommerce consumer key (ck_…)' },
    { key: 'consumerSecret', flag: '--consumer-secret', message: 'WooCommerce consumer secret (cs_…)' },
    { key: 'apiKey', flag: '--api-key', message: 'Partner API key (svc_live_… or svc_test_…)' },
    { key: 'bridgeUrl', flag: '--bridge-url', message: 'Public URL of this bridge, which the store calls' },
  ]);
  const storeUrl = urlOption(opts.storeUrl!, '--store-url');
  const bridgeUrl = urlOption(opts.bridgeUrl!, '--bridge-url');
  const apiUrl = opts.apiUrl ? urlOption(opts.apiUrl, '--api-url') : `${cliConfig().baseUrl}/api/v1/partner`;

  const partner = new PartnerApi({ apiUrl, apiKey: opts.apiKey!, retries: 1 });
  const ping = await step(`the partner API at ${apiUrl}`, () => partner.ping());
  const missing = REQUIRED_SCOPES.filter((scope) => !ping.scopes.includes(scope));
  if (missing.length) throw new CliFailure(`the partner API key lacks ${missing.join(' and ')}: create one with --scopes ${REQUIRED_SCOPES.join(',')}`);

  const store = new WooStore({ storeUrl, consumerKey: opts.consumerKey!, consumerSecret: opts.consumerSecret! });
  // system_status needs a shop manager's key; an orders read proves a narrower key works too.
  await step(`the store at ${storeUrl}`, () => store.systemStatus().catch(() => store.recentOrders(1)));
  const secret = randomBytes(32).toString('base64url');
  const webhook = await step(`registering the webhook at ${storeUrl}`, () =>
    store.createWebhook({ ...WEBHOOK, delivery_url: `${bridgeUrl}/woocommerce/webhook`, secret }),
  );
  // Connecting the same store again keeps its identity (idempotency keys, invoice markers), poll cursor
  // and the time before which orders may have invoices of the earlier bridge.
  const previous = previousConfig(opts.config, storeUrl);
  const config: BridgeConfig = {
    store_url: storeUrl,
    consumer_key: opts.consumerKey!,
    consumer_secret: opts.consumerSecret!,
    api_url: apiUrl,
    api_key: opts.apiKey!,
    bridge_url: bridgeUrl,
    store_id: previous?.store_id ?? storeIdOf(storeUrl),
    webhook_id: webhook.id,
    webhook_secret: secret,
    connected_at: previous?.connected_at ?? systemClock.now().toISOString(),
    ...(previous?.poll_cursor ? { poll_cursor: previous.poll_cursor } : {}),
    format: CONFIG_FORMAT,
    ...(previous?.legacy_orders_before ? { legacy_orders_before: previous.legacy_orders_before } : {}),
    ...(opts.vatMetaKey?.trim() ? { vat_meta_key: opts.vatMetaKey.trim() } : previous?.vat_meta_key ? { vat_meta_key: previous.vat_meta_key } : {}),
  };
  writeBridgeConfig(opts.config, config);
  // Connecting again replaces the webhook: the old one, signed with the old secret, would only be refused.
  if (previous && previous.webhook_id !== webhook.id) await store.deleteWebhook(previous.webhook_id).catch(() => undefined);
  const summary = {
    config_file: opts.config,
    store_url: storeUrl,
    api_url: apiUrl,
    business: ping.business,
    livemode: ping.livemode,
    webhook: { id: webhook.id, topic: webhook.topic, status: webhook.status, delivery_url: webhook.delivery_url },
  };
  output(opts.json, summary, () => [
    `Connected ${storeUrl} to business ${ping.business.id} (${ping.business.name}, ${ping.livemode ? 'live' : 'test'} mode)`,
    `Webhook ${webhook.id} (${webhook.topic}) delivers to ${webhook.delivery_url}`,
    `Configuration saved to ${opts.config} (readable only by you)`,
    `Next: invoicing woo serve --config ${opts.config}`,
  ]);
}

interface ConnectLinkOptions {
  business?: string;
  mode: string;
  storeUrl?: string;
  json?: boolean;
}

/** `woo connect-link`: a link the shop owner opens to connect a store through WooCommerce's own approval. */
async function connectLink(raw: ConnectLinkOptions): Promise<void> {
  const opts = await ensureOptions(raw, [BUSINESS_QUESTION]);
  const flagOf = (field: string) => ({ businessId: '--business', mode: '--mode', storeUrl: '--store-url' })[field] ?? `--${field}`;
  const input = validBody(
    wooSchema().connectLinkSchema,
    { businessId: positiveId(String(opts.business), '--business'), mode: parseMode(opts.mode), ...(opts.storeUrl === undefined ? {} : { storeUrl: opts.storeUrl }) },
    flagOf,
  );
  // The service refuses a store in a private network: a refused value, named by its flag.
  const link = await refusedAsUsage(() => withContext(({ services }) => services.woocommerce.createLink(input)), input, flagOf);
  if (!link.callback_url.startsWith('https://')) {
    cliIo().stderr.write(`note: WooCommerce sends the keys only to a public https:// callback, and BASE_URL gives ${link.callback_url}: set BASE_URL to the server's public https address\n`);
  }
  output(opts.json, link, () => [
    `Open this link to connect ${link.store_url ?? 'a WooCommerce store'} to business ${link.business.id} (${link.business.name}, ${link.livemode ? 'live' : 'test'} mode):`,
    '',
    `  ${link.url}`,
    '',
    `It works until ${shortTime(link.expires_at)}, for one store. WordPress asks the store's administrator to approve; the store is then listed by \`invoicing woo status --business ${link.business.id}\`.`,
  ]);
}

// eslint-disable-next-line @typescript-eslint/no-require-imports -- required when the command runs, so that `--help` loads none of the server
const wooSchema = () => require('../../server/woocommerce/schema') as typeof import('../../server/woocommerce/schema');

function storeLines(stores: ConnectedStore[]): string[] {
  if (!stores.length) return ['No store connected: make a link with `invoicing woo connect-link`'];
  return table(
    ['STORE', 'MODE', 'URL', 'KEY', 'CONNECTED', 'LAST POLL', 'LAST ERROR'],
    stores.map((s) => [String(s.id), s.livemode ? 'live' : 'test', s.store_url, `…${s.consumer_key_ending}`, shortTime(s.connected_at), shortTime(s.last_polled_at), s.last_error ?? '-']),
  );
}

function bridgeLogger(level: string) {
  return pino({ level }, pino.destination(2));
}

export function wooCommand(): Command {
  const woo = groupCommand('woo');
  const configOption = ['--config <file>', 'configuration file', DEFAULT_CONFIG_FILE] as const;

  woo
    .command('connect')
    .description('Check the store and the partner API, register the store webhook, and save the configuration')
    .option('--store-url <url>', 'the WooCommerce site, e.g. https://shop.example.com')
    // Secrets may come from the environment, out of `ps` and shell history.
    .addOption(new Option('--consumer-key <key>', 'WooCommerce REST API consumer key (read/write)').env('WOO_CONSUMER_KEY'))
    .addOption(new Option('--consumer-secret <secret>', 'WooCommerce REST API consumer secret').env('WOO_CONSUMER_SECRET'))
    .addOption(new Option('--api-key <key>', `partner API key with ${REQUIRED_SCOPES.join(' and ')}`).env('INVOICING_API_KEY'))
    .option('--api-url <url>', 'partner API address (default: BASE_URL/api/v1/partner)')
    .option('--bridge-url <url>', 'public address of `invoicing woo serve`, which the store calls')
    .option('--vat-meta-key <key>', 'the order meta key of a B2B buyer\'s VAT number: an order with one and no tax is invoiced under reverse charge (default: _billing_vat_number)')
    .option(...configOption)
    .option('--import <file>', 'move the store of a separate bridge\'s configuration file into the server (its API key names the business); the server then serves it')
    .option('--json', 'machine-readable output: { config_file, store_url, api_url, business, livemode, webhook }')
    .addHelpText(
      'after',
      examples(
        'invoicing woo connect --store-url https://shop.example.com --consumer-key ck_… --consumer-secret cs_… --api-key svc_live_… --bridge-url https://bridge.example.com',
        'invoicing woo connect --import ./data/woocommerce.json',
      ),
    )
    .action(connect);

  woo
    .command('connect-link')
    .description('A link the shop owner opens to connect a store: WordPress asks them to approve, and the server then invoices its orders')
    .option('--business <id>', 'the business whose invoices the orders become')
    .option('--mode <mode>', 'test or live: the mode of those invoices', 'live')
    .option('--store-url <url>', 'the store, e.g. https://shop.example.com (default: the page asks for it)')
    .option('--json', 'machine-readable output: { url, business, livemode, store_url, expires_at, callback_url }')
    .addHelpText('after', examples('invoicing woo connect-link --business 1', 'invoicing woo connect-link --business 1 --store-url https://shop.example.com --json'))
    .action(connectLink);

  woo
    .command('disconnect')
    .description('Stop invoicing a connected store\'s orders: its webhook is deleted and the bridge\'s API key revoked')
    .option('--business <id>', 'the business the store is connected to')
    .option('--store <id>', 'the store, as `woo status --business ID` lists it')
    .option('--json', 'machine-readable output: { store, webhook_deleted, webhook_error }')
    .addHelpText('after', examples('invoicing woo disconnect --business 1 --store 2'))
    .action(async (raw: { business?: string; store?: string; json?: boolean }) => {
      const opts = await ensureOptions(raw, [BUSINESS_QUESTION, { key: 'store', flag: '--store', message: 'Store id (woo status --business ID)' }]);
      const businessId = positiveId(String(opts.business), '--business');
      const storeId = positiveId(String(opts.store), '--store');
      const result = await withContext(({ services }) => services.woocommerce.disconnect(businessId, storeId));
      output(opts.json, result, () => [
        `Disconnected ${result.store.store_url} (store ${result.store.id}) from business ${businessId}`,
        result.webhook_deleted ? `Its webhook ${result.store.webhook_id} was deleted from the store` : `Its webhook ${result.store.webhook_id} could not be deleted (${result.webhook_error}): delete it in WooCommerce > Settings > Advanced > Webhooks`,
        `Revoke its key (ending …${result.store.consumer_key_ending}) in WooCommerce > Settings > Advanced > REST API: WooCommerce has no API to do it.`,
      ]);
    });

  woo
    .command('serve')
    .description('Receive the store webhook and poll for what missed deliveries left undone')
    .option('--port <n>', 'port to listen on', '3100')
    .option('--poll <cron>', 'when to poll for missed orders (cron expression)', '*/5 * * * *')
    .option(...configOption)
    .addHelpText('after', examples('invoicing woo serve', 'invoicing woo serve --port 8080 --poll "*/2 * * * *"'))
    .action(async (opts: { port: string; poll: string; config: string }) => {
      if (!/^\d{1,5}$/.test(opts.port) || Number(opts.port) > 65535) throw new UsageError('--port must be a port number');
      const config = loadBridgeConfig(opts.config);
      const logger = pino({ level: cliConfig().logLevel });
      const bridge = new Bridge(config, logger, { saveCursor: (cursor) => savePollCursor(opts.config, cursor) });
      let running;
      try {
        running = await bridge.start(Number(opts.port), opts.poll);
      } catch (err) {
        throw new CliFailure(`cannot start the bridge: ${(err as Error).message}`);
      }
      logger.info({ port: running.port, store: config.store_url }, `WooCommerce bridge listening on port ${running.port}`);
      const shutdown = () => void running.stop().then(() => process.exit(0));
      process.once('SIGINT', shutdown);
      process.once('SIGTERM', shutdown);
    });

  woo
    .command('backfill')
    .description('Bring every completed, cancelled or refunded order changed since a date up to date: invoice, payment, refunds, void')
    .option('--since <date>', 'ISO 8601 date or time')
    .option(...configOption)
    .option('--json', 'machine-readable output: { checked, invoiced, paid, refunded, voided, failed }')
    .addHelpText('after', examples('invoicing woo backfill --since 2026-11-01', 'invoicing woo backfill --since 2026-11-21T00:00:00Z --json'))
    .action(async (raw: { since?: string; config: string; json?: boolean }) => {
      const opts = await ensureOptions(raw, [{ key: 'since', flag: '--since', message: 'Since (ISO 8601 date)' }]);
      const since = parseSince(opts.since!);
      const bridge = new Bridge(loadBridgeConfig(opts.config), bridgeLogger('warn'));
      const { checked, invoiced, paid, refunded, voided, failed } = await step('backfill', () => bridge.reconcileChangedSince(since));
      output(opts.json, { checked, invoiced, paid, refunded, voided, failed }, () => [
        `Checked ${checked} order(s): ${invoiced} invoiced, ${paid} payment(s) and ${refunded} refund(s) recorded, ${voided} voided now; ${failed} failed (see the log above)`,
      ]);
      if (failed) throw new CliFailure(`${failed} order(s) could not be brought up to date; run the backfill again later`);
    });

  woo
    .command('status')
    .description('List the stores connected to a business (--business), or show a separate bridge\'s connection, webhook and latest orders (--config)')
    .option('--business <id>', 'list the stores connected to this business in the server')
    .option(...configOption)
    .option('--json', 'machine-readable output: with --business [{ id, business_id, livemode, store_url, consumer_key_ending, key_permissions, webhook_id, connected_at, last_polled_at, last_error }], else { store_url, api_url, partner, webhook, orders: [{ id, number, status, modified, invoice_id }] }')
    .addHelpText('after', examples('invoicing woo status --business 1', 'invoicing woo status --config ./data/woocommerce.json --json'))
    .action(async (opts: { business?: string; config: string; json?: boolean }) => {
      if (opts.business !== undefined) {
        const businessId = positiveId(opts.business, '--business');
        const stores = await withContext(({ services }) => services.woocommerce.list(businessId));
        output(opts.json, stores, () => storeLines(stores));
        return;
      }
      if (!fs.existsSync(opts.config)) throw new UsageError(`pass --business ID to list a business's stores (${opts.config}, the file of a bridge run apart, does not exist)`);
      const config = loadBridgeConfig(opts.config, readBridgeConfig);
      // A status is a snapshot: no retries.
      const { store, partner } = new Bridge(config, bridgeLogger('warn'), { partner: { retries: 0 } });
      const failure = (err: unknown) => ({ error: (err as Error).message });
      const [ping, webhook, orders] = await Promise.all([
        partner.ping().then((p) => ({ ok: true as const, business_id: p.business.id, livemode: p.livemode }), failure),
        store.webhook(config.webhook_id).then((w) => ({ id: w.id, status: w.status, topic: w.topic, delivery_url: w.delivery_url }), failure),
        store.recentOrders(10).then(
          (list) => list.map((o) => ({ id: o.id, number: o.number, status: o.status, modified: o.date_modified_gmt ?? null, invoice_id: invoiceIdOf(o) })),
          failure,
        ),
      ]);
      const status = { store_url: config.store_url, api_url: config.api_url, poll_cursor: config.poll_cursor ?? null, partner: ping, webhook, orders };
      output(opts.json, status, () => [
        `Store:       ${config.store_url}`,
        `Partner API: ${config.api_url} — ${'error' in ping ? `unreachable: ${ping.error}` : `ok (business ${ping.business_id}, ${ping.livemode ? 'live' : 'test'})`}`,
        `Webhook:     ${'error' in webhook ? `unknown: ${webhook.error}` : `${webhook.id} ${webhook.status} → ${webhook.delivery_url}`}`,
        `Last poll:   ${shortTime(config.poll_cursor ?? null)}`,
        '',
        ...('error' in orders
          ? [`Orders: cannot read them: ${orders.error}`]
          : orders.length
            ? table(
                ['ORDER', 'STATUS', 'MODIFIED', 'INVOICE'],
                orders.map((o) => [`#${o.number}`, o.status, shortTime(o.modified), o.invoice_id ? String(o.invoice_id) : o.status === 'completed' ? 'not yet' : '-']),
              )
            : ['No orders']),
      ]);
    });

  return woo;
}
