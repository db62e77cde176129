/**
 * The delivery worker. A sweep claims due deliveries (`FOR UPDATE SKIP LOCKED` on MySQL, so several
 * processes share the work; SQLite's single writer needs no locks), commits the claim, sends, then
 * records the result. No row lock is held across an HTTP call. A claim pushes the delivery's due
 * time past a lease: if the process dies mid-delivery, the delivery comes due again and another
 * sweep retries it (receivers deduplicate on the event's idempotency_key).
 */
import { randomBytes } from 'node:crypto';
import cron, { ScheduledTask } from 'node-cron';
import { Logger } from 'pino';
import { Clock } from '../clock';
import { Database } from '../db/database';
import { toDbTime } from '../db/time';
import { Event, toEventPayload } from '../events/outbox';
import { KeyService } from '../keys/service';
import { WebhookAttempt, WebhookDelivery } from './model';
import { nextAttemptAfter } from './schedule';
import { AttemptResult, isSuccess, sendWebhook } from './sender';
import { signBody, signBodyWithTime } from './signing';

export interface WorkerOptions {
  allowPrivate: boolean;
  leaseSeconds: number;
  clock: Clock;
  /** Deliveries claimed, and sent side by side, per round of a sweep. */
  batchSize?: number;
  /** Tests shorten it; the contract's is 10 seconds. */
  timeoutMs?: number;
}

export class WebhookWorker {
  private sweeping: Promise<number> | null = null;
  private again = false;
  private task?: ScheduledTask;
  private stopped = false;

  constructor(
    private readonly db: Database,
    private readonly keys: KeyService,
    private readonly logger: Logger,
    private readonly options: WorkerOptions,
  ) {}

  /** Sweeps every `seconds` (node-cron), for retries and for anything a nudge missed. */
  start(seconds: number): void {
    this.task = cron.schedule(`*/${seconds} * * * * *`, () => void this.sweep());
  }

  /** A transaction with deliveries committed: sweep now (or again right after the running sweep). */
  nudge(): void {
    if (!this.stopped) void this.sweep();
  }

  /** Delivers everything due, round after round, and resolves with how many attempts were made. */
  sweep(): Promise<number> {
    if (this.sweeping) {
      this.again = true;
      return this.sweeping;
    }
    this.sweeping = (async () => {
      let attempted = 0;
      try {
        do {
          this.again = false;
          for (;;) {
            const claimed = await this.claim();
            if (!claimed.length) break;
            await Promise.all(claimed.map((delivery) => this.deliver(delivery)));
            attempted += claimed.length;
          }
        } while (this.again && !this.stopped);
      } catch (err) {
        this.logger.error({ err }, 'webhook sweep failed; the next sweep retries');
      } finally {
        this.sweeping = null;
      }
      return attempted;
    })();
    return this.sweeping;
  }

  /** Stops sweeping and waits for the attempts under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.task?.stop();
    await this.sweeping;
  }

  private async claim(): Promise<WebhookDelivery[]> {
    if (this.stopped) return [];
    return this.db.transaction(async (trx) => {
      const now = this.options.clock.now();
      const due = WebhookDelivery.query(trx)
        .where('status', 'pending')
        .where('next_attempt_at', '<=', toDbTime(now))
        .orderBy('next_attempt_at')
        .limit(this.options.batchSize ?? 50)
        .forUpdate();
      // Rows another process has claimed but not yet committed are skipped, not waited for.
      if (this.db.dialect === 'mysql') due.skipLocked();
      const rows = await due;
      if (!rows.length) return [];
      const leaseId = randomBytes(16).toString('hex');
      const leaseEnds = new Date(now.getTime() + this.options.leaseSeconds * 1000).toISOString();
      await WebhookDelivery.query(trx)
        .whereIn(
          'id',
          rows.map((row) => row.id),
        )
        .patch({
          lease_id: leaseId,
          next_attempt_at: leaseEnds,
          attempts: WebhookDelivery.raw('attempts + 1') as unknown as number,
          last_attempt_number: WebhookDelivery.raw('last_attempt_number + 1') as unknown as number,
        });
      return rows.map((row) => Object.assign(row, { lease_id: leaseId, attempts: row.attempts + 1, last_attempt_number: row.last_attempt_number + 1 }));
    });
  }

  private async deliver(delivery: WebhookDelivery): Promise<void> {
    const startedAt = this.options.clock.now();
    const event = await Event.query(this.db.knex).findById(delivery.event_id);
    let secret: string | null;
    try {
      secret = await this.keys.webhookSecret(delivery.api_key_id);
    } catch (err) {
      // E.g. sealed under another APP_SECRET_KEY: recorded as a failed attempt, so the log says why.
      return this.record(delivery, startedAt, { statusCode: null, durationMs: 0, excerpt: null, error: (err as Error).message.slice(0, 500) });
    }
    let result: AttemptResult;
    if (!event || !secret) {
      result = { statusCode: null, durationMs: 0, excerpt: null, error: !event ? 'the event no longer exists' : 'the key has no webhook secret' };
    } else {
      const body = Buffer.from(JSON.stringify(toEventPayload(event)));
      result = await sendWebhook(
        delivery.url,
        body,
        {
          'content-type': 'application/json',
          'user-agent': 'invoicing-webhooks/1',
          'x-service-event': event.type,
          'x-service-delivery': `${delivery.id}-${delivery.last_attempt_number}`,
          'x-service-signature': signBody(body, secret),
          'x-service-signature-v2': signBodyWithTime(body, secret, Math.floor(startedAt.getTime() / 1000)),
        },
        { allowPrivate: this.options.allowPrivate, timeoutMs: this.options.timeoutMs },
      );
    }
    await this.record(delivery, startedAt, result);
  }

  /** Stores the attempt and moves the delivery on, unless its lease has passed to another claim. */
  private async record(delivery: WebhookDelivery, startedAt: Date, result: AttemptResult): Promise<void> {
    const now = this.options.clock.now();
    const succeeded = isSuccess(result);
    const retryAt = succeeded ? null : nextAttemptAfter(delivery.attempts, now);
    await this.db.transaction(async (trx) => {
      await WebhookAttempt.query(trx).insert({
        delivery_id: delivery.id,
        attempt: delivery.last_attempt_number,
        started_at: startedAt.toISOString(),
        duration_ms: result.durationMs,
        status_code: result.statusCode,
        response_excerpt: result.excerpt,
        error: result.error,
      });
      await WebhookDelivery.query(trx)
        .where({ id: delivery.id, lease_id: delivery.lease_id })
        .patch({
          lease_id: null,
          last_status_code: result.statusCode,
          last_error: result.error,
          ...(succeeded
            ? { status: 'succeeded', delivered_at: now.toISOString() }
            : retryAt
              ? { next_attempt_at: retryAt.toISOString() }
              : { status: 'failed' }),
        });
    });
  }
}
