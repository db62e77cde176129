/** Starts a serving process: database, optional Redis, the app on a port, the scheduler; and stops it cleanly. */
import { AddressInfo } from 'node:net';
import { Server } from 'node:http';
import Redis from 'ioredis';
import pino, { Logger } from 'pino';
import { createApp } from './app';
import { answerClientErrors } from './http/client-error';
import { Config, ConfigError } from './config';
import { Database } from './db/database';
import { loggableDbError } from './db/errors';
import { STORED_SECRETS_UNOPENABLE } from './keys/app-key';
import { startScheduler } from './scheduler';
import { createServices, prepareSchema, Services } from './services';
import { Clock, systemClock } from './clock';
import { WebhookWorker } from './webhooks/worker';

/** How often pending refunds are looked at for reconciliation (each is read back a few minutes after the last time). */
const REFUND_SWEEP_SECONDS = 180;

export interface RunningServer {
  url: string;
  port: number;
  db: Database;
  services: Services;
  webhooks: WebhookWorker;
  stop(): Promise<void>;
}

/**
 * The server's log, one JSON line per request and event, on standard output. Written asynchronously:
 * lines that come while a write is under way go out together in the next write, where a synchronous
 * write cost a system call per request (about 5 % of a busy server's time). pino flushes what is
 * left when the process exits.
 */
export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({ level: config.logLevel }, pino.destination({ dest: 1, sync: false }));
}

/** Every error the server logs: a database error without the values of its statement (see loggableDbError). */
function withSafeErrors(logger: Logger): Logger {
  return logger.child({}, { serializers: { err: (err: Error) => loggableDbError(err) ?? pino.stdSerializers.err(err) } });
}

/**
 * Redis must answer at boot (the rate-limit scripts are loaded then). During a later outage a
 * command fails at once instead of queueing (no offline queue, a short timeout), so the rate limit
 * counts in memory (server/http/rate-limit.ts, which logs the outage once) and requests do not wait.
 */
async function connectRedis(url: string, logger: Logger): Promise<Redis> {
  const redis = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 1000 });
  // Each reconnection attempt emits an error: the rate limiter reports the outage, once.
  redis.on('error', (err) => logger.debug({ err }, 'redis connection error'));
  try {
    await redis.connect();
    await redis.ping();
    return redis;
  } catch (err) {
    redis.disconnect();
    throw new Error(`REDIS_URL is set but Redis does not answer: ${(err as Error).message}`);
  }
}

/**
 * A listening address as the host of a URL: an IPv6 one in brackets, and every interface
 * (`0.0.0.0`, `::`) as `wildcard`, a name that reaches it from this machine.
 */
export function urlHost(address: string, wildcard: string): string {
  if (address === '0.0.0.0' || address === '::') return wildcard;
  return address.includes(':') ? `[${address}]` : address;
}

export async function startServer(
  config: Config,
  options: {
    logger?: Logger;
    db?: Database;
    scheduler?: boolean;
    clock?: Clock;
    /** Tests shorten the contract's 10-second delivery timeout. */
    webhookTimeoutMs?: number;
    /**
     * How long an idle kept-alive connection stays open (Node's 5 s by default). Tests lengthen it:
     * their client shares the process, and when its event loop stalls past the timeout (synchronous
     * SQLite on a loaded machine), the server's timer and the client's next request on that
     * connection come due together, and the request meets a closed connection (ECONNRESET).
     */
    keepAliveTimeoutMs?: number;
  } = {},
): Promise<RunningServer> {
  const logger = withSafeErrors(options.logger ?? createLogger(config));
  const db = options.db ?? Database.open(config.databaseUrl, { logger, busyTimeoutMs: config.databaseBusyTimeoutMs });
  const clock = options.clock ?? systemClock;
  let services: Services;
  let redis: Redis | undefined;
  try {
    await prepareSchema(db, config);
    services = createServices(db, config, clock, logger);
    // Refused rather than served: every delivery would fail, and secrets set meanwhile would be
    // sealed under the wrong key, leaving the database with secrets under two keys.
    if (!(await services.keys.opensStoredSecrets())) throw new ConfigError(STORED_SECRETS_UNOPENABLE);
    redis = config.redisUrl ? await connectRedis(config.redisUrl, logger) : undefined;
  } catch (err) {
    if (!options.db) await db.close();
    throw err;
  }
  const webhooks = new WebhookWorker(db, services.keys, services.oauthApps, logger, {
    allowPrivate: config.webhookAllowPrivate,
    leaseSeconds: config.webhookLeaseSeconds,
    slots: config.webhookConcurrency,
    perReceiver: config.webhookReceiverConcurrency,
    clock,
    timeoutMs: options.webhookTimeoutMs,
  });
  services.outbox.onDeliveriesDue(() => webhooks.nudge());
  services.outbox.dispatchTo(webhooks);
  const app = createApp({ config, db, services, logger, redis });

  const server: Server = await new Promise((resolve, reject) => {
    // Express 5 calls back on a listen error too (an address in use or not of this machine).
    const s = app.listen(config.port, config.host, (err?: Error) => (err ? reject(err) : resolve(s)));
    if (options.keepAliveTimeoutMs !== undefined) s.keepAliveTimeout = options.keepAliveTimeoutMs;
    answerClientErrors(s);
  });
  const scheduler =
    options.scheduler === false
      ? undefined
      : startScheduler(db, logger, [
          [webhooks, config.webhookSweepSeconds],
          [services.emails, config.webhookSweepSeconds],
          // Pending refunds whose outcome at the gateway is not known.
          [services.refunds.reconciliation, REFUND_SWEEP_SECONDS],
          // Connected WooCommerce stores: orders to bring up to date (retries), and each store's poll when due.
          [services.woocommerce.orders, config.webhookSweepSeconds],
          [services.woocommerce.polls, 60],
          // Invoices whose due date has ended: invoice.overdue, once per invoice.
          [services.overdue, config.overdueSweepSeconds],
          // Recurring invoices whose next date has come: one invoice per date.
          [services.recurringSweep, config.recurringSweepSeconds],
          // Payment reminders that have come due: each once per invoice and offset.
          [services.reminders, config.reminderSweepSeconds],
        ]);
  // Deliveries and e-mails committed while the process was down are due now.
  webhooks.nudge();
  services.emails.nudge();
  const { port, address } = server.address() as AddressInfo;
  // The bridge of connected stores calls this process's own partner API.
  services.woocommerce.serveAt(`http://${urlHost(address, '127.0.0.1')}:${port}/api/v1/partner`);

  return {
    url: `http://${urlHost(address, '127.0.0.1')}:${port}`,
    port,
    db,
    services,
    webhooks,
    async stop() {
      scheduler?.stop();
      await webhooks.stop();
      await services.emails.stop();
      await services.refunds.reconciliation.stop();
      await services.woocommerce.polls.stop();
      await services.woocommerce.orders.stop();
      await services.overdue.stop();
      await services.recurringSweep.stop();
      await services.reminders.stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      // After the requests under way have their PDFs and their imported documents read.
      await services.documents.close();
      await services.expenses.close();
      await redis?.quit();
      if (!options.db) await db.close();
    },
  };
}
