/** The one place that reads the environment: every setting, its doc and its default, checked at boot. */
import os from 'node:os';
import Joi from 'joi';

export const APP_SECRET_KEY_REQUIRED =
  'APP_SECRET_KEY is required with MySQL/MariaDB: set the same key on every server and CLI (generate one with: openssl rand -base64 32)';

/** The settings as they come out of validation: converted, and defaulted where the schema gives a default. */
interface Env {
  DATABASE_URL: string;
  DATABASE_BUSY_TIMEOUT_MS: number;
  PORT: number;
  HOST: string;
  BASE_URL?: string;
  REDIS_URL?: string;
  STRIPE_API_URL?: string;
  REDIS_PREFIX: string;
  RATE_LIMIT_PER_MINUTE: number;
  AUTH_FAILURES_PER_MINUTE: number;
  KEY_CACHE_TTL_MS: number;
  WEBHOOK_ALLOW_PRIVATE: boolean;
  WEBHOOK_SWEEP_SECONDS: number;
  OVERDUE_SWEEP_SECONDS: number;
  RECURRING_SWEEP_SECONDS: number;
  REMINDER_SWEEP_SECONDS: number;
  WOO_POLL_SECONDS: number;
  WEBHOOK_LEASE_SECONDS: number;
  WEBHOOK_CONCURRENCY: number;
  WEBHOOK_RECEIVER_CONCURRENCY: number;
  EMAIL_FIRST_ATTEMPT_WAIT_MS: number;
  PDF_THREADS: number;
  PDF_DOWNLOADS_PER_MINUTE: number;
  IDEMPOTENCY_LEASE_MS: number;
  APP_SECRET_KEY?: string;
  TRUST_PROXY: string;
  SMTP_URL?: string;
  MAIL_FROM: string;
  MAIL_OUTBOX_DIR: string;
  LOG_LEVEL: string;
}

/** An IP address or a host name (RFC 1123), as HOST and `invoicing serve --host` take it. */
export const hostAddress = Joi.string()
  .hostname()
  .messages({ 'string.hostname': '{{#label}} must be an IP address or a host name, e.g. 127.0.0.1, not "{{#value}}"' });

/** How often a node-cron sweep runs: a divisor of a minute, or whole minutes that divide an hour, so the sweeps come at even intervals. */
const sweepSeconds = Joi.number()
  .integer()
  .min(1)
  .max(3600)
  .custom((value: number, helpers) => ((value < 60 ? 60 % value === 0 : value % 60 === 0 && 60 % (value / 60) === 0) ? value : helpers.error('any.invalid')))
  .messages({ 'any.invalid': '{{#label}} must divide a minute (below 60) or be whole minutes that divide an hour, so the sweeps come at even intervals' })
  .default(60);

const schema = Joi.object<Env, true>({
  DATABASE_URL: Joi.string()
    .pattern(/^(mysql|mariadb):\/\/|^sqlite:/)
    .default('sqlite:./data/invoicing.sqlite3')
    .description('mysql://user:pass@host:port/db for MySQL or MariaDB, or sqlite:path for the embedded database'),
  DATABASE_BUSY_TIMEOUT_MS: Joi.number()
    .integer()
    .min(0)
    .max(60000)
    .default(5000)
    .description('SQLite only: how long a write waits for another process (a CLI command, another server) to finish its write; past it the request answers 503'),
  PORT: Joi.number().integer().min(0).max(65535).default(3000).description('HTTP port of `invoicing serve`'),
  HOST: hostAddress
    .default('0.0.0.0')
    .description('Address `invoicing serve` listens on: 127.0.0.1 for this machine only; 0.0.0.0 for every IPv4 interface (in a container, so the published port reaches it)'),
  BASE_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .description('Public address of the server, used in payment and signing links (default http://localhost:PORT)'),
  REDIS_URL: Joi.string()
    .uri({ scheme: ['redis', 'rediss'] })
    .description('Optional: a Redis server that holds rate-limit counters shared by every server process'),
  STRIPE_API_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .description('Where the Stripe SDK sends its requests (default: Stripe\'s own API); tests point it at a local double'),
  REDIS_PREFIX: Joi.string().default('invoicing:').description('Prefix of every Redis key this service writes'),
  RATE_LIMIT_PER_MINUTE: Joi.number().integer().min(1).default(120).description('Requests per credential per 60-second window'),
  AUTH_FAILURES_PER_MINUTE: Joi.number()
    .integer()
    .min(1)
    .default(30)
    .description('Failed authentications per client IP per minute before that IP gets 429'),
  KEY_CACHE_TTL_MS: Joi.number()
    .integer()
    .min(0)
    .max(5000)
    .default(5000)
    .description('How long a looked-up API key is cached; a revocation takes effect within this time'),
  WEBHOOK_ALLOW_PRIVATE: Joi.boolean().default(false).description('Allow webhook URLs, and connected WooCommerce stores, on private, loopback or link-local addresses'),
  WEBHOOK_SWEEP_SECONDS: Joi.number()
    .integer()
    .min(1)
    .max(59)
    .default(5)
    .description('How often each server process looks for webhook deliveries that are due (retries, and any first attempt it missed)'),
  OVERDUE_SWEEP_SECONDS: sweepSeconds.description('How often each server process looks for invoices that have become overdue and fires their invoice.overdue (once per invoice, whatever the number of processes)'),
  RECURRING_SWEEP_SECONDS: sweepSeconds.description('How often each server process looks for recurring invoices whose next date has come and issues them (each date once, whatever the number of processes)'),
  REMINDER_SWEEP_SECONDS: sweepSeconds.description('How often each server process looks for payment reminders that are due and sends them (once per invoice and offset, whatever the number of processes)'),
  WOO_POLL_SECONDS: Joi.number()
    .integer()
    .min(60)
    .max(3600)
    .default(300)
    .description('How often each connected WooCommerce store is polled for orders its deliveries missed'),
  WEBHOOK_LEASE_SECONDS: Joi.number()
    .integer()
    .min(15)
    .default(60)
    .description('How long a claimed delivery stays with its process; if the process dies, another retries it after this'),
  WEBHOOK_CONCURRENCY: Joi.number().integer().min(1).max(1000).default(100).description('Webhook deliveries each server process has in flight at once'),
  WEBHOOK_RECEIVER_CONCURRENCY: Joi.number()
    .integer()
    .min(1)
    .max(1000)
    .default(20)
    .description('Webhook deliveries each server process has in flight at once to one URL, so a slow receiver cannot hold up the others'),
  EMAIL_FIRST_ATTEMPT_WAIT_MS: Joi.number()
    .integer()
    .min(0)
    .max(10000)
    .default(3000)
    .description('How long POST /invoices/{id}/send waits for the e-mail\'s first attempt before answering email.status "queued"'),
  PDF_THREADS: Joi.number()
    .integer()
    .min(1)
    .max(64)
    .default(Math.max(1, Math.floor(os.availableParallelism() / 2)))
    .description('Worker threads each server process makes PDFs on (default: half the CPUs, at least one)'),
  PDF_DOWNLOADS_PER_MINUTE: Joi.number()
    .integer()
    .min(1)
    .default(30)
    .description('PDF downloads per client IP per minute from the payment page (GET /pay/{token}/pdf), which needs no key'),
  IDEMPOTENCY_LEASE_MS: Joi.number()
    .integer()
    .min(100)
    .max(600000)
    .default(30000)
    .description('How long a request running under an Idempotency-Key keeps its claim without renewing it (it renews every quarter of this); a retry may take over a claim left longer, whose request died'),
  APP_SECRET_KEY: Joi.string()
    .when('DATABASE_URL', { is: Joi.string().pattern(/^(mysql|mariadb):/), then: Joi.required() })
    .messages({ 'any.required': APP_SECRET_KEY_REQUIRED })
    .description(
      '32 bytes in base64 or hex (openssl rand -base64 32) that seal webhook secrets at rest. Required with MySQL/MariaDB, the same on every server and CLI; on the embedded database, unset: generated once into app-secret.key beside the database file (a key in ./data/app-secret.key from an earlier version is used, and copied there)',
    ),
  TRUST_PROXY: Joi.string().default('loopback').description("Express 'trust proxy' setting, for client IPs behind a proxy"),
  SMTP_URL: Joi.string()
    .uri({ scheme: ['smtp', 'smtps'] })
    .description('SMTP server for invoice e-mails (smtp://user:pass@host:port); unset: e-mails are written as .eml files to MAIL_OUTBOX_DIR'),
  MAIL_FROM: Joi.string().default('Invoicing <invoices@localhost>').description('From address of invoice e-mails'),
  MAIL_OUTBOX_DIR: Joi.string().default('./data/outbox').description('Folder that receives e-mails as .eml files when SMTP_URL is unset'),
  LOG_LEVEL: Joi.string()
    .valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent')
    .default('info')
    .description('pino log level'),
}).unknown();

/** BASE_URL when it is not set: this machine, on the port the server listens on. */
export const defaultBaseUrl = (port: number) => `http://localhost:${port}`;

export interface Config {
  databaseUrl: string;
  databaseBusyTimeoutMs: number;
  port: number;
  host: string;
  baseUrl: string;
  redisUrl?: string;
  stripeApiUrl?: string;
  redisPrefix: string;
  rateLimitPerMinute: number;
  authFailuresPerMinute: number;
  keyCacheTtlMs: number;
  webhookAllowPrivate: boolean;
  webhookSweepSeconds: number;
  overdueSweepSeconds: number;
  recurringSweepSeconds: number;
  reminderSweepSeconds: number;
  wooPollSeconds: number;
  webhookLeaseSeconds: number;
  webhookConcurrency: number;
  webhookReceiverConcurrency: number;
  emailFirstAttemptWaitMs: number;
  pdfThreads: number;
  pdfDownloadsPerMinute: number;
  idempotencyLeaseMs: number;
  appSecretKey?: string;
  trustProxy: string;
  smtpUrl?: string;
  mailFrom: string;
  mailOutboxDir: string;
  logLevel: string;
}

export class ConfigError extends Error {}

/** Reads and validates the settings; throws ConfigError naming every bad key. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const result = schema.validate(env, { abortEarly: false, convert: true });
  if (result.error) {
    throw new ConfigError(`Invalid configuration: ${result.error.details.map((d) => d.message).join('; ')}`);
  }
  const value = result.value;
  return {
    databaseUrl: value.DATABASE_URL,
    databaseBusyTimeoutMs: value.DATABASE_BUSY_TIMEOUT_MS,
    port: value.PORT,
    host: value.HOST,
    baseUrl: (value.BASE_URL ?? defaultBaseUrl(value.PORT)).replace(/\/+$/, ''),
    redisUrl: value.REDIS_URL,
    stripeApiUrl: value.STRIPE_API_URL,
    redisPrefix: value.REDIS_PREFIX,
    rateLimitPerMinute: value.RATE_LIMIT_PER_MINUTE,
    authFailuresPerMinute: value.AUTH_FAILURES_PER_MINUTE,
    keyCacheTtlMs: value.KEY_CACHE_TTL_MS,
    webhookAllowPrivate: value.WEBHOOK_ALLOW_PRIVATE,
    webhookSweepSeconds: value.WEBHOOK_SWEEP_SECONDS,
    overdueSweepSeconds: value.OVERDUE_SWEEP_SECONDS,
    recurringSweepSeconds: value.RECURRING_SWEEP_SECONDS,
    reminderSweepSeconds: value.REMINDER_SWEEP_SECONDS,
    wooPollSeconds: value.WOO_POLL_SECONDS,
    webhookLeaseSeconds: value.WEBHOOK_LEASE_SECONDS,
    webhookConcurrency: value.WEBHOOK_CONCURRENCY,
    webhookReceiverConcurrency: value.WEBHOOK_RECEIVER_CONCURRENCY,
    emailFirstAttemptWaitMs: value.EMAIL_FIRST_ATTEMPT_WAIT_MS,
    pdfThreads: value.PDF_THREADS,
    pdfDownloadsPerMinute: value.PDF_DOWNLOADS_PER_MINUTE,
    idempotencyLeaseMs: value.IDEMPOTENCY_LEASE_MS,
    appSecretKey: value.APP_SECRET_KEY,
    trustProxy: value.TRUST_PROXY,
    smtpUrl: value.SMTP_URL,
    mailFrom: value.MAIL_FROM,
    mailOutboxDir: value.MAIL_OUTBOX_DIR,
    logLevel: value.LOG_LEVEL,
  };
}

/** The documented settings, for the README table and `invoicing --help`. */
export function describeConfig(): { key: string; doc: string; default?: unknown }[] {
  const described = schema.describe() as { keys: Record<string, { flags?: { description?: string; default?: unknown } }> };
  return Object.entries(described.keys).map(([key, d]) => ({ key, doc: d.flags?.description ?? '', default: d.flags?.default }));
}
