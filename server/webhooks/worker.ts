/**
 * The delivery worker. A sweep claims due deliveries (`FOR UPDATE SKIP LOCKED` on MySQL, so several
 * processes share the work; SQLite's single writer needs no locks), commits the claim, sends, then
 * records the result. No row lock is held across an HTTP call. A claim pushes the delivery's due
 * time past a lease: if the process dies mid-delivery, the delivery comes due again and another
 * sweep retries it (receivers deduplicate on the event's idempotency_key).
 */
import { Logger } from 'pino';
import { Clock } from '../clock';
import { Database } from '../db/database';
import { acrossTenants } from '../auth/actor';
import { claimDue } from '../jobs/lease';
import { Sweeper } from '../jobs/sweeper';
import { Event, toEventPayload } from '../events/outbox';
import { KeyService } from '../keys/service';
import { AppService } from '../oauth/apps';
import { WebhookAttempt, WebhookDelivery } from './model';
import { nextAttemptAfter } from './schedule';
import { AttemptResult, isSuccess, sendWebhook } from './sender';
import { signBody, signBodyWithTime } from './signing';

const WORKER = acrossTenants('webhook worker');

export interface WorkerOptions {
  allowPrivate: boolean;
  leaseSeconds: number;
  clock: Clock;
  /** Deliveries claimed, and sent side by side, per round of a sweep. */
  batchSize?: number;
  /** Tests shorten it; the contract's is 10 seconds. */
  timeoutMs?: number;
}

export class WebhookWorker extends Sweeper<WebhookDelivery> {
  constructor(
    private readonly db: Database,
    private readonly keys: KeyService,
    private readonly apps: AppService,
    logger: Logger,
    private readonly options: WorkerOptions,
  ) {
    super(logger, 'webhook');
  }

  protected claim(): Promise<WebhookDelivery[]> {
    return claimDue(this.db, WebhookDelivery, {
      access: WORKER,
      leaseSeconds: this.options.leaseSeconds,
      clock: this.options.clock,
      limit: this.options.batchSize ?? 50,
      counters: ['last_attempt_number'],
    });
  }

  protected async work(delivery: WebhookDelivery): Promise<void> {
    const startedAt = this.options.clock.now();
    const event = await Event.acrossTenants(WORKER, this.db.current).findById(delivery.event_id);
    let secret: string | null;
    try {
      secret = delivery.app_id !== null ? await this.apps.webhookSecret(delivery.app_id, { businessId: delivery.business_id, livemode: delivery.livemode }) : await this.keys.webhookSecret(delivery.api_key_id!);
    } catch (err) {
      // E.g. sealed under another APP_SECRET_KEY: recorded as a failed attempt, so the log says why.
      return this.record(delivery, startedAt, { statusCode: null, durationMs: 0, excerpt: null, error: (err as Error).message.slice(0, 500) });
    }
    let result: AttemptResult;
    if (!event || !secret) {
      result = { statusCode: null, durationMs: 0, excerpt: null, error: !event ? 'the event no longer exists' : 'the receiver has no webhook secret (or its authorization was revoked)' };
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
      await WebhookAttempt.ofDeliveries([delivery], trx).insert({
        delivery_id: delivery.id,
        attempt: delivery.last_attempt_number,
        started_at: startedAt.toISOString(),
        duration_ms: result.durationMs,
        status_code: result.statusCode,
        response_excerpt: result.excerpt,
        error: result.error,
      });
      await WebhookDelivery.acrossTenants(WORKER, trx)
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
