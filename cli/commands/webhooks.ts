import { Command } from 'commander';
import { EVENT_TYPES, EventType } from '../../server/events/model';
import { EVENT_READ_SCOPES } from '../../server/events/outbox';
import { DELIVERY_STATUSES, DeliveryStatus } from '../../server/webhooks/model';
import { MAX_LOG_LIMIT, WebhookService } from '../../server/webhooks/service';
import { DeliveryView } from '../../server/webhooks/schema';
import { systemActor } from '../../server/auth/actor';
import { startStopwatch } from '../../server/clock';
import { loadAppKey } from '../../server/keys/app-key';
import { KeyService } from '../../server/keys/service';
import { NotFound } from '../../server/errors';
import { listen, listenSecret } from '../listen';
import { cliConfig, testBusiness, withContext } from '../context';
import { output, shorten, shortTime, table } from '../output';
import { CliFailure, UsageError } from '../errors';
import { cliIo } from '../io';
import { parseSince, positiveId } from '../options';
import { apiUrlOf, requireServer } from '../running-server';
import { groupCommand } from './groups';

interface LogsOptions {
  business?: string;
  key?: string;
  app?: string;
  event?: string;
  status?: string;
  since?: string;
  limit?: string;
  json?: boolean;
}

interface ListenCommandOptions {
  forwardTo?: string;
  events?: string;
  business?: string;
  apiUrl?: string;
  printJson?: boolean;
  key?: string;
}

interface ReplayOptions {
  failed?: boolean;
  includeRetrying?: boolean;
  since?: string;
  business?: string;
  key?: string;
  wait?: boolean;
  timeout?: string;
  apiUrl?: string;
  json?: boolean;
}

function parseStatus(value: string): DeliveryStatus {
  if (!(DELIVERY_STATUSES as readonly string[]).includes(value)) throw new UsageError(`--status must be one of: ${DELIVERY_STATUSES.join(', ')}`);
  return value as DeliveryStatus;
}

function parseEvent(value: string, flag = '--event'): EventType {
  if (!(EVENT_TYPES as readonly string[]).includes(value)) throw new UsageError(`${flag} must be one of: ${EVENT_TYPES.join(', ')}`);
  return value as EventType;
}

function parseLimit(value: string): number {
  const limit = positiveId(value, '--limit');
  if (limit > MAX_LOG_LIMIT) throw new UsageError(`--limit must be at most ${MAX_LOG_LIMIT}`);
  return limit;
}

function lastOutcome(d: DeliveryView): string {
  if (d.last_status_code !== null && d.last_error) return shorten(`${d.last_status_code} ${d.last_error}`, 60);
  if (d.last_status_code !== null) return String(d.last_status_code);
  return d.last_error ? shorten(d.last_error, 60) : '-';
}

function logLines(list: DeliveryView[]): string[] {
  if (!list.length) return ['No webhook deliveries'];
  return table(
    ['ID', 'CREATED', 'EVENT', 'KEY', 'URL', 'STATUS', 'ATTEMPTS', 'LAST'],
    list.map((d) => [
      String(d.id),
      shortTime(d.created_at),
      d.event_type,
      d.app_id !== null ? `app ${d.app_id}` : String(d.api_key_id),
      shorten(d.url, 48),
      d.status === 'pending' && d.attempts > 0 ? 'pending (retrying)' : d.status,
      String(d.attempts),
      lastOutcome(d),
    ]),
  );
}

interface WaitSummary {
  succeeded: number;
  failed: number;
  /** The replayed attempt failed; the delivery is pending again on its retry schedule. */
  retrying: number;
  /** Not attempted yet when the wait ended. */
  pending: number;
  timed_out: boolean;
}

/** `[########------------]`: how much of the replay the server has attempted. */
function progressBar(done: number, total: number, width = 24): string {
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls until every replayed delivery has had its attempt (succeeded, failed for good, or failed
 * and waiting for its next retry), or the timeout passes. The server process does the sending.
 */
async function waitFor(webhooks: WebhookService, ids: number[], timeoutMs: number, showProgress: boolean): Promise<WaitSummary> {
  const waiting = startStopwatch();
  let summary: WaitSummary;
  for (;;) {
    const rows = await webhooks.progress(ids);
    summary = { succeeded: 0, failed: 0, retrying: 0, pending: 0, timed_out: false };
    for (const row of rows) {
      if (row.status === 'succeeded') summary.succeeded += 1;
      else if (row.status === 'failed') summary.failed += 1;
      else if (row.attempts > 0 && !row.under_way) summary.retrying += 1;
      else summary.pending += 1;
    }
    if (showProgress) {
      const done = ids.length - summary.pending;
      cliIo().stderr.write(
        `\r\x1b[2K${progressBar(done, ids.length)} ${done}/${ids.length} attempted (${summary.succeeded} delivered, ${summary.failed + summary.retrying} failed)`,
      );
    }
    if (summary.pending === 0) break;
    if (waiting.elapsedMs() >= timeoutMs) {
      summary.timed_out = true;
      break;
    }
    await sleep(Math.min(500, Math.max(0, timeoutMs - waiting.elapsedMs())));
  }
  if (showProgress) cliIo().stderr.write('\r\x1b[2K');
  return summary;
}

function summaryLines(s: WaitSummary): string[] {
  return [
    `Delivered: ${s.succeeded}, failed: ${s.failed + s.retrying}${s.retrying ? ` (${s.retrying} will be retried on the schedule)` : ''}`,
    ...(s.timed_out ? [`${s.pending} not attempted yet: is \`invoicing serve\` running against this database?`] : []),
  ];
}

export function webhooksCommand(): Command {
  const webhooks = groupCommand('webhooks');

  webhooks
    .command('logs')
    .description('List webhook deliveries, newest first')
    .option('--business <id>', 'only this business')
    .option('--key <id>', 'only deliveries to this key')
    .option('--app <id>', 'only deliveries to this OAuth app')
    .option('--event <type>', `only this event type (${EVENT_TYPES.join(', ')})`)
    .option('--status <status>', `only this status (${DELIVERY_STATUSES.join(', ')})`)
    .option('--since <time>', 'only deliveries created at or after this ISO 8601 date or time')
    .option('--limit <n>', `at most this many (default 100, at most ${MAX_LOG_LIMIT})`)
    .option('--json', 'machine-readable output')
    .addHelpText(
      'after',
      `
Examples:
  $ invoicing webhooks logs --status failed
  $ invoicing webhooks logs --key 3 --event invoice.paid --since 2026-11-22T09:00:00Z --json

--json prints an array of { id, event_id, event_type, idempotency_key, api_key_id, app_id, url, status,
attempts, next_attempt_at, last_status_code, last_error, delivered_at, livemode, created_at }.`,
    )
    .action(async (opts: LogsOptions) => {
      const filter = {
        businessId: opts.business === undefined ? undefined : positiveId(opts.business, '--business'),
        keyId: opts.key === undefined ? undefined : positiveId(opts.key, '--key'),
        appId: opts.app === undefined ? undefined : positiveId(opts.app, '--app'),
        event: opts.event === undefined ? undefined : parseEvent(opts.event),
        status: opts.status === undefined ? undefined : parseStatus(opts.status),
        since: opts.since === undefined ? undefined : parseSince(opts.since),
        limit: opts.limit === undefined ? undefined : parseLimit(opts.limit),
      };
      const list = await withContext(({ services }) => services.webhooks.log(filter));
      output(opts.json, list, () => logLines(list));
    });

  webhooks
    .command('replay [delivery-id]')
    .description('Send deliveries again: one by id, or every failed one (--failed); the running server delivers them')
    .option('--failed', 'replay every failed delivery (narrowed by --since, --business, --key)')
    .option('--include-retrying', 'with --failed: also the deliveries still retrying on their schedule (pending after a failed attempt), now')
    .option('--since <time>', 'with --failed: only deliveries created at or after this ISO 8601 date or time')
    .option('--business <id>', 'with --failed: only this business')
    .option('--key <id>', 'with --failed: only deliveries to this key')
    .option('--wait', 'wait until the server has attempted them, then print what happened')
    .option('--timeout <seconds>', 'with --wait: give up waiting after this long (default 60; exit 1 if some were not attempted)')
    .option('--api-url <url>', "with --wait: the running server's partner API, checked first (default: BASE_URL's, or http://localhost:$PORT's)")
    .option('--json', 'machine-readable output')
    .addHelpText(
      'after',
      `
Examples:
  $ invoicing webhooks replay 42
  $ invoicing webhooks replay --failed --since 2026-11-22T09:00:00Z --wait
  $ invoicing webhooks replay --failed --include-retrying

A delivery is failed once its retries have run out; until then it is retrying (pending), and
--failed leaves it to its schedule unless --include-retrying is given.`,
    )
    .action(async (rawId: string | undefined, opts: ReplayOptions) => {
      if (rawId === undefined && !opts.failed) throw new UsageError('give a delivery id, or --failed to replay every failed delivery');
      if (rawId !== undefined && opts.failed) throw new UsageError('give either a delivery id or --failed, not both');
      if (rawId !== undefined && (opts.since !== undefined || opts.business !== undefined || opts.key !== undefined)) {
        throw new UsageError('--since, --business and --key go with --failed, not with a delivery id');
      }
      if (opts.timeout !== undefined && !opts.wait) throw new UsageError('--timeout goes with --wait');
      if (opts.apiUrl !== undefined && !opts.wait) throw new UsageError('--api-url goes with --wait');
      if (opts.includeRetrying && !opts.failed) throw new UsageError('--include-retrying goes with --failed');
      const id = rawId === undefined ? undefined : positiveId(rawId, 'delivery id');
      const filter = {
        businessId: opts.business === undefined ? undefined : positiveId(opts.business, '--business'),
        keyId: opts.key === undefined ? undefined : positiveId(opts.key, '--key'),
        since: opts.since === undefined ? undefined : parseSince(opts.since),
        includeRetrying: Boolean(opts.includeRetrying),
      };
      const timeoutMs = opts.timeout === undefined ? 60_000 : positiveId(opts.timeout, '--timeout') * 1000;
      // Only the server sends: waiting on one that does not answer would end in a timeout, having queued for nobody.
      if (opts.wait) await requireServer(apiUrlOf(cliConfig(), opts.apiUrl), 'nothing was queued');

      await withContext(async ({ services }) => {
        let ids: number[];
        let retrying = 0;
        const lines: string[] = [];
        if (id !== undefined) {
          const { delivery, replayed } = await services.webhooks.replayOne(id);
          ids = replayed ? [id] : [];
          lines.push(
            replayed
              ? `Queued delivery ${id} (${delivery.event_type} to ${delivery.url}) for the server to send again`
              : `Delivery ${id} is being sent right now; it was left to finish`,
          );
        } else {
          ids = await services.webhooks.replayFailed(filter);
          retrying = filter.includeRetrying ? 0 : await services.webhooks.retrying(filter);
          const what = filter.includeRetrying ? 'failed or retrying' : 'failed';
          lines.push(ids.length ? `Queued ${ids.length} ${what} deliver${ids.length === 1 ? 'y' : 'ies'} for the server to send again` : `No ${what} deliveries to replay`);
          if (retrying) {
            lines.push(
              `${retrying} deliver${retrying === 1 ? 'y is' : 'ies are'} still retrying on their schedule (pending after a failed attempt), not failed yet, so left as they are: add --include-retrying to send them now too`,
            );
          }
        }
        const waiting = Boolean(opts.wait && ids.length);
        // People see what was queued before the wait; --json prints one document at the end.
        if (!opts.json) output(false, null, () => lines);
        const result = waiting ? await waitFor(services.webhooks, ids, timeoutMs, !opts.json && Boolean(cliIo().stderr.isTTY)) : undefined;
        if (opts.json) output(true, { queued: ids.length, ids, ...(opts.failed ? { still_retrying: retrying } : {}), ...(result ? { result } : {}) }, () => []);
        else if (result) output(false, null, () => summaryLines(result));
        if (result?.timed_out) throw new CliFailure(`the wait ended after ${timeoutMs / 1000} s with ${result.pending} not attempted`);
      });
    });

  webhooks
    .command('listen')
    .description('Forward the test-mode events of a business from the running server to a local URL, signed as real deliveries')
    .option('--forward-to <url>', 'where each event is POSTed, e.g. http://localhost:4242/webhooks')
    .option('--events <list>', `only these event types, comma-separated (${EVENT_TYPES.join(', ')})`)
    .option('--business <id>', "the business (default: --key's, else the only one; made when there is none)")
    .option('--api-url <url>', "the running server's partner API (default: BASE_URL's, or http://localhost:$PORT's)")
    .option('--print-json', 'print each event as a JSON line instead of forwarding it')
    .option('--key <id>', "sign with this test-mode key's webhook secret instead of the local one, so one handler verifies both these and the server's deliveries")
    .addHelpText(
      'after',
      `
Examples:
  $ invoicing webhooks listen --forward-to http://localhost:4242/webhooks
  $ invoicing webhooks listen --events invoice.paid,payment.received --print-json

The first line is the local signing secret (whsec_…), the same on every run for the business:
verify x-service-signature with it. The server never connects to the local URL. Stop with Ctrl-C.`,
    )
    .action(async (opts: ListenCommandOptions) => {
      if (!opts.forwardTo && !opts.printJson) throw new UsageError('give --forward-to <url> to forward events, or --print-json to print them');
      if (opts.forwardTo) checkForwardUrl(opts.forwardTo);
      const types = opts.events === undefined ? undefined : opts.events.split(',').map((type) => parseEvent(type.trim(), '--events'));
      const businessFlag = opts.business === undefined ? undefined : positiveId(opts.business, '--business');
      const keyFlag = opts.key === undefined ? undefined : positiveId(opts.key, '--key');
      await withContext(async ({ config, services }) => {
        // --key is checked before anything is made, and names the business too: the key's.
        const signing = keyFlag === undefined ? undefined : await keySecret(services.keys, keyFlag, businessFlag);
        const business = await testBusiness(services, businessFlag ?? signing?.businessId);
        const actor = systemActor('cli', { businessId: business.id, livemode: false });
        const secret = signing?.secret ?? listenSecret(loadAppKey(config), business.id);
        // Reads every event type, so every event is forwarded; nothing more (it cannot write).
        const key = await services.keys.create({ businessId: business.id, mode: 'test', scopes: [...EVENT_READ_SCOPES] });
        const apiUrl = apiUrlOf(config, opts.apiUrl);
        const say = (line: string) => cliIo().stdout.write(`${line}\n`);
        const about = `business ${business.id}${business.created ? ', just made' : ''}, test mode`;
        // A key's secret is the partner's own, kept out of the terminal: it is shown only when made.
        say(keyFlag === undefined ? `Ready! Your webhook signing secret is ${secret} (${about})` : `Ready! Events are signed with key ${keyFlag}'s webhook secret (${about})`);
        say(opts.printJson ? `Printing events from ${apiUrl}; Ctrl-C to stop` : `Forwarding events from ${apiUrl} to ${opts.forwardTo}; Ctrl-C to stop`);
        const stopped = new Promise<void>((resolve) => {
          process.once('SIGINT', resolve);
          process.once('SIGTERM', resolve);
        });
        try {
          await listen({
            apiUrl,
            key: key.key,
            after: await services.events.newestId(actor),
            // --print-json prints instead of forwarding, even with --forward-to.
            forwardTo: opts.printJson ? undefined : opts.forwardTo,
            secret,
            types,
            write: say,
            stopped,
          });
        } finally {
          // The key existed only for this run.
          await services.keys.revoke(key.id);
        }
      });
    });

  return webhooks;
}

/**
 * The webhook secret of `keyId`, a working test-mode key (of `businessId`, when given): what
 * `listen --key` signs with, and the business it forwards the events of.
 */
async function keySecret(keys: KeyService, keyId: number, businessId: number | undefined): Promise<{ secret: string; businessId: number }> {
  const key = await keys.get(keyId).catch((err: unknown) => {
    if (err instanceof NotFound) return undefined;
    throw err;
  });
  const of = businessId === undefined ? '' : ` of business ${businessId}`;
  if (!key || (businessId !== undefined && key.business_id !== businessId) || key.mode !== 'test' || key.status !== 'active') {
    throw new UsageError(`--key ${keyId} is not a working test-mode key${of} (see invoicing keys list --business ${businessId ?? key?.business_id ?? 'ID'})`);
  }
  const secret = await keys.webhookSecret(keyId);
  if (!secret) throw new UsageError(`key ${keyId} has no webhook secret: give it one with invoicing keys update ${keyId} --generate-webhook-secret`);
  return { secret, businessId: key.business_id };
}

/** `--forward-to` is an http(s) URL; it may be private (it is this machine's), since the server never connects to it. */
function checkForwardUrl(value: string): void {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol)) throw new UsageError('--forward-to must be an http:// or https:// URL, e.g. http://localhost:4242/webhooks');
}
