/**
 * The delivery worker: a pool of delivery slots kept full. A delivery comes to it in one of two ways:
 * straight from the commit that created it, already leased to this process by the outbox (the
 * common path: no claim between the commit and the first attempt), or from a claim of due
 * deliveries (`FOR UPDATE SKIP LOCKED` on MySQL, so several processes share the work; SQLite's
 * single writer needs no locks) when slots are free: retries, replays, and what another process
 * left behind. Each is sent as soon as a slot is free. A finished send frees its slot at once, so a
 * receiver that stalls holds only its own slots, never a batch; and no receiver URL gets more than
 * `perReceiver` slots, so one slow partner cannot take them all. Results are written in batches:
 * one transaction for all that finished meanwhile.
 *
 * No row lock is held across an HTTP call: a lease pushes the delivery's due time past it. If the
 * process dies before recording a result, the delivery comes due again after the lease and any
 * process retries it (receivers deduplicate on the event's idempotency_key).
 */
import cron, { ScheduledTask } from 'node-cron';
import { Logger } from 'pino';
import { Clock } from '../clock';
import { Database } from '../db/database';
import { StoredRow } from '../db/statement';
import { toDbTime } from '../db/time';
import { acrossTenants } from '../auth/actor';
import { outcomePatch } from '../jobs/engine';
import { claimDue, handBack, LeaseOptions } from '../jobs/lease';
import { Event } from '../events/model';
import { DirectDispatch, DispatchedDelivery } from '../events/outbox';
import { toEventPayload } from '../events/view';
import { SecretBoxError } from '../keys/secret-box';
import { KeyService } from '../keys/service';
import { AppService } from '../oauth/apps';
import { WebhookAttempt, WebhookDelivery } from './model';
import { nextAttemptAfter } from '../jobs/retry-schedule';
import { AttemptResult, DELIVERY_TIMEOUT_MS, isSuccess, sendWebhook } from './sender';
import { deliveryHeaders } from './signing';
import { ReceiverSlots } from './slots';

const WORKER = acrossTenants('webhook worker');
/** Results written per transaction at most. */
const RECORD_BATCH = 500;
/** A waiting delivery starts only if its lease outlasts the attempt by this much. */
const LEASE_MARGIN_MS = 2000;
const NO_SECRET = 'the receiver has no webhook secret (or its authorization was revoked)';
/** A delivery's outcome written as the engine writes every job's: the contract's schedule, then `failed`. */
const DELIVERIES = { schedule: nextAttemptAfter, statuses: { done: 'succeeded', failed: 'failed' } };

export interface WorkerOptions {
  allowPrivate: boolean;
  leaseSeconds: number;
  clock: Clock;
  /** Deliveries in flight at once. */
  slots: number;
  /** Deliveries in flight at once to one URL. */
  perReceiver: number;
  /** Tests shorten it; the contract's is 10 seconds. */
  timeoutMs?: number;
}

interface Finished {
  delivery: WebhookDelivery;
  startedAt: Date;
  result: AttemptResult;
}

/** A receiver's signing secret, or why there is none to sign with. */
type Secret = { secret: string } | { error: string };

/** A leased delivery with what sending it takes. */
interface Held {
  delivery: WebhookDelivery;
  event: Event | undefined;
  secret: Secret;
  /** When the lease ends (ms since the epoch). */
  leaseEnds: number;
}

export class WebhookWorker implements DirectDispatch {
  /** Leased deliveries waiting for a slot: their receiver is at its limit, or every slot is taken. */
  private readonly waiting: Held[] = [];
  /** Claimed deliveries whose events and secrets are being read. */
  private preparing = 0;
  /** Hand-backs of leases being written. */
  private handingBack = 0;
  /** What each receiver holds and sends. */
  private readonly slots: ReceiverSlots;
  /** Receivers whose refused deliveries were reported already (once per process). */
  private readonly refusedReceivers = new Set<string>();
  private claiming: Promise<void> | null = null;
  private claimAgain = false;
  /**
   * Whether to claim again past receivers that reached their limit in a claim, for other receivers'
   * rows beyond theirs: after a nudge (a commit, a replay, the schedule), not on every freed slot,
   * where that scan would mostly find nothing.
   */
  private lookBeyond = false;
  /** The last claim may have left due deliveries behind (no slot, or their receiver at its limit): claim again when a slot frees. */
  private backlog = false;
  private readonly finished: Finished[] = [];
  private recording: Promise<void> | null = null;
  private readonly idleWaiters: (() => void)[] = [];
  private task?: ScheduledTask;
  private stopped = false;

  constructor(
    private readonly db: Database,
    private readonly keys: KeyService,
    private readonly apps: AppService,
    private readonly logger: Logger,
    private readonly options: WorkerOptions,
  ) {
    this.slots = new ReceiverSlots(options);
  }

  get lease(): LeaseOptions {
    return this.leaseOptions();
  }

  /** Looks for due deliveries every `seconds` (node-cron): retries, and anything a nudge missed. */
  start(seconds: number): void {
    this.task = cron.schedule(`*/${seconds} * * * * *`, () => this.nudge());
  }

  /** Deliveries may have become due (a commit, a replay, the schedule): fill the free slots. */
  nudge(): void {
    this.lookBeyond = true;
    this.refill();
  }

  /** Fills the free slots. */
  private refill(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = this.fill().finally(() => {
      this.claiming = null;
      this.settle();
    });
  }

  /** Sends what is due now and resolves once every delivery under way is sent and recorded. */
  sweep(): Promise<void> {
    this.nudge();
    return this.whenIdle();
  }

  /** Takes no more, hands the deliveries still waiting back to any process, and waits for those in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.task?.stop();
    await this.handBack(this.waiting.splice(0).map(({ delivery }) => delivery));
    await this.whenIdle();
  }

  /** A new delivery is taken while its receiver has few waiting and the process is not swamped; the rest are claimed when due. */
  takes(url: string): boolean {
    return !this.stopped && this.slots.takes(url, this.waiting.length);
  }

  dispatch(event: Event, deliveries: DispatchedDelivery[]): void {
    const held = deliveries.map(({ delivery, sealedSecret }) => ({
      delivery,
      event,
      secret: this.openSecret(delivery, sealedSecret),
      leaseEnds: Date.parse(delivery.next_attempt_at),
    }));
    this.reserve(held.map(({ delivery }) => delivery));
    this.enqueue(held);
  }

  private async fill(): Promise<void> {
    try {
      do {
        this.claimAgain = false;
        const lookBeyond = this.lookBeyond;
        this.lookBeyond = false;
        while (!this.stopped) {
          const free = this.slots.free(this.waiting.length + this.preparing);
          if (free <= 0 || (!lookBeyond && this.slots.everyReceiverFull())) break;
          const { claimed, leaseEnds, more } = await this.claim(free);
          if (claimed.length) this.prepare(claimed, leaseEnds);
          if (!more || !lookBeyond) break;
        }
      } while (this.claimAgain && !this.stopped);
    } catch (err) {
      this.logger.error({ err }, 'claiming webhook deliveries failed; the next sweep retries');
    }
  }

  /**
   * Leases up to `free` due deliveries, and for no URL more than it may hold: its slots' worth in
   * flight and as many waiting to follow at once. `more` when another claim now may find more.
   */
  private async claim(free: number): Promise<{ claimed: WebhookDelivery[]; leaseEnds: number; more: boolean }> {
    const saturated = this.slots.saturated();
    let passedOver = false;
    let candidatesLeft = false;
    const leaseEnds = this.options.clock.now().getTime() + this.options.leaseSeconds * 1000;
    const claimed = await claimDue(this.db, WebhookDelivery, {
      ...this.leaseOptions(),
      limit: free,
      begin: true,
      skip: { column: 'url', values: saturated },
      choose: (candidates) => {
        const choice = this.slots.choose(candidates);
        passedOver = choice.passedOver;
        candidatesLeft = candidates.length === free;
        return choice.chosen;
      },
    });
    // Receivers at their limit were not looked at: they may have more due.
    this.backlog = claimed.length === free || passedOver || saturated.length > 0;
    // Rows passed over for a receiver now at its limit may hide other receivers' rows beyond them.
    return { claimed, leaseEnds, more: claimed.length > 0 && claimed.length < free && passedOver && candidatesLeft };
  }

  /** Counts claimed deliveries at once (the next claim sees them), then reads their events and secrets. */
  private prepare(deliveries: WebhookDelivery[], leaseEnds: number): void {
    this.reserve(deliveries);
    this.preparing += deliveries.length;
    Promise.all([this.eventsOf(deliveries), this.secretsOf(deliveries)])
      .then(
        ([events, secrets]) =>
          this.enqueue(deliveries.map((delivery) => ({ delivery, event: events.get(delivery.event_id), secret: secrets.get(secretKey(delivery))!, leaseEnds }))),
        (err: unknown) => {
          // Not sent: handed back with their attempts uncounted (or, if that fails too, retried after their lease).
          this.logger.error({ err }, 'reading webhook deliveries failed; they are handed back');
          void this.handBack(deliveries);
        },
      )
      .finally(() => {
        this.preparing -= deliveries.length;
        this.settle();
      });
  }

  private reserve(deliveries: WebhookDelivery[]): void {
    for (const { url } of deliveries) this.slots.hold(url);
  }

  private leaseOptions(): LeaseOptions {
    return { access: WORKER, leaseSeconds: this.options.leaseSeconds, clock: this.options.clock, counters: ['last_attempt_number'] };
  }

  /**
   * A receiver whose URL the address check refuses gets one warning per process, not one per
   * delivery: the most common cause is a local URL while WEBHOOK_ALLOW_PRIVATE is off.
   */
  private reportRefusal(delivery: WebhookDelivery, reason: string | null): void {
    const receiver = delivery.app_id !== null ? `app ${delivery.app_id}` : `key ${delivery.api_key_id}`;
    if (this.refusedReceivers.has(receiver)) return;
    this.refusedReceivers.add(receiver);
    this.logger.warn(
      { receiver, url: delivery.url, reason },
      'webhook deliveries refused by the address check (a private address): set WEBHOOK_ALLOW_PRIVATE=true on the server to deliver to private networks, or forward to a local handler with `invoicing webhooks listen`',
    );
  }

  private unreserve(delivery: WebhookDelivery): void {
    this.slots.release(delivery.url);
  }

  private enqueue(held: Held[]): void {
    this.waiting.push(...held);
    this.pump();
  }

  /**
   * Starts waiting deliveries, oldest first, while slots are free and their receivers under the
   * limit. One whose lease no longer outlasts an attempt is not sent (another process could be
   * sending it too once the lease ends): it is handed back, due now, and claimed afresh. A delivery
   * waits only behind sends in flight, each ending within its timeout and pumping, so a lease kept
   * here (more than a timeout and the margin left) is still this process's at the next pump.
   */
  private pump(): void {
    const expiring: Held[] = [];
    const now = this.options.clock.now().getTime();
    for (let i = 0; i < this.waiting.length && this.slots.hasFreeSlot(); ) {
      const held = this.waiting[i];
      if (held.leaseEnds - now < this.leaseNeeded()) {
        this.waiting.splice(i, 1);
        expiring.push(held);
        continue;
      }
      if (!this.slots.canSend(held.delivery.url)) {
        i += 1;
        continue;
      }
      this.waiting.splice(i, 1);
      this.startSending(held);
    }
    if (expiring.length) {
      void this.handBack(expiring.map(({ delivery }) => delivery)).then(() => {
        this.backlog = true;
        this.refill();
      });
    }
  }

  /** How much lease a delivery needs left to start: an attempt's timeout and a margin. */
  private leaseNeeded(): number {
    return (this.options.timeoutMs ?? DELIVERY_TIMEOUT_MS) + LEASE_MARGIN_MS;
  }

  private startSending(held: Held): void {
    const { delivery } = held;
    const startedAt = this.options.clock.now();
    this.slots.startSending(delivery.url);
    this.send(held, startedAt)
      .then((result) => {
        if (result.refusedAddress) this.reportRefusal(delivery, result.error);
        this.finished.push({ delivery, startedAt, result });
        this.record();
      })
      .catch((err: unknown) => this.logger.error({ err }, 'sending a webhook delivery failed; it is retried after its lease'))
      .finally(() => {
        this.slots.finishSending(delivery.url);
        this.unreserve(delivery);
        this.pump();
        if (this.backlog && this.slots.roomFor(delivery.url)) this.refill();
        this.settle();
      });
  }

  private async send({ delivery, event, secret }: Held, startedAt: Date): Promise<AttemptResult> {
    const failed = (error: string): AttemptResult => ({ statusCode: null, durationMs: 0, excerpt: null, error });
    if (!event) return failed('the event no longer exists');
    if ('error' in secret) return failed(secret.error);
    const body = Buffer.from(JSON.stringify(toEventPayload(event)));
    return sendWebhook(
      delivery.url,
      body,
      deliveryHeaders(body, { eventType: event.type, deliveryId: `${delivery.id}-${delivery.last_attempt_number}`, secret: secret.secret, at: startedAt }),
      { allowPrivate: this.options.allowPrivate, timeoutMs: this.options.timeoutMs },
    );
  }

  /** Hands back deliveries not sent (see jobs/lease.ts): their claim's attempt is uncounted and any process sends them now. */
  private async handBack(deliveries: WebhookDelivery[]): Promise<void> {
    if (!deliveries.length) return;
    deliveries.forEach((delivery) => this.unreserve(delivery));
    this.handingBack += 1;
    try {
      await handBack(this.db, WebhookDelivery, deliveries, { ...this.leaseOptions(), begun: true });
    } catch (err) {
      this.logger.error({ err }, 'handing back waiting webhook deliveries failed; they are sent after their lease');
    } finally {
      this.handingBack -= 1;
      this.settle();
    }
  }

  private async eventsOf(deliveries: WebhookDelivery[]): Promise<Map<number, Event>> {
    const ids = [...new Set(deliveries.map((delivery) => delivery.event_id))];
    const events = await Event.acrossTenants(WORKER, this.db.current).whereIn('id', ids);
    return new Map(events.map((event) => [event.id, event]));
  }

  /** Each receiver's secret once per claim, read when the delivery is sent: a rotated secret signs what is still due. */
  private async secretsOf(deliveries: WebhookDelivery[]): Promise<Map<string, Secret>> {
    const receivers = new Map(deliveries.map((delivery) => [secretKey(delivery), delivery]));
    const secrets = await Promise.all(
      [...receivers].map(async ([key, delivery]): Promise<[string, Secret]> => {
        try {
          const secret =
            delivery.app_id !== null
              ? await this.apps.webhookSecret(delivery.app_id, { businessId: delivery.business_id, livemode: delivery.livemode })
              : await this.keys.webhookSecret(delivery.api_key_id!);
          return [key, secret ? { secret } : { error: NO_SECRET }];
        } catch (err) {
          return [key, unopenable(err)];
        }
      }),
    );
    return new Map(secrets);
  }

  /** A secret read with the event, in the transaction that created the delivery. */
  private openSecret(delivery: WebhookDelivery, sealed: string | null): Secret {
    try {
      const secret =
        sealed === null
          ? null
          : delivery.app_id !== null
            ? this.apps.openWebhookSecret(sealed, delivery.app_id)
            : this.keys.openWebhookSecret(sealed, { id: delivery.api_key_id!, business_id: delivery.business_id });
      return secret ? { secret } : { error: NO_SECRET };
    } catch (err) {
      return unopenable(err);
    }
  }

  /** Writes the finished attempts, one transaction at a time, each taking all that finished meanwhile. */
  private record(): void {
    if (this.recording || !this.finished.length) return;
    this.recording = (async () => {
      while (this.finished.length) {
        const batch = this.finished.splice(0, RECORD_BATCH);
        try {
          await this.store(batch);
        } catch (err) {
          // Not lost: the deliveries are still leased, so they come due again and are sent once more.
          this.logger.error({ err }, 'recording webhook attempts failed; those deliveries are retried after their lease');
        }
      }
    })().finally(() => {
      this.recording = null;
      this.record();
      this.settle();
    });
  }

  /** Stores the attempts and moves each delivery on, unless its lease has passed to another claim. */
  private async store(batch: Finished[]): Promise<void> {
    const now = this.options.clock.now();
    await this.db.transaction(async (trx) => {
      await WebhookAttempt.insertOneEach(
        batch.map(({ delivery }) => delivery),
        trx,
        (delivery, i) => attemptRow(delivery, batch[i], now),
      );
      const succeeded = batch.filter(({ result }) => isSuccess(result));
      for (const statusCode of new Set(succeeded.map(({ result }) => result.statusCode))) {
        const group = succeeded.filter(({ result }) => result.statusCode === statusCode);
        await WebhookDelivery.acrossTenants(WORKER, trx)
          // Each id with the lease it was claimed under (an id list keeps to the primary key; a row-value IN may not).
          .whereIn(
            'id',
            group.map(({ delivery }) => delivery.id),
          )
          .whereIn('lease_id', [...new Set(group.map(({ delivery }) => delivery.lease_id!))])
          .patch(outcomePatch(DELIVERIES, group[0].delivery, { done: { delivered_at: now.toISOString(), last_status_code: statusCode, last_error: null } }, now) as never);
      }
      for (const { delivery, result } of batch.filter(({ result }) => !isSuccess(result))) {
        await WebhookDelivery.acrossTenants(WORKER, trx)
          .where({ id: delivery.id, lease_id: delivery.lease_id })
          .patch(outcomePatch(DELIVERIES, delivery, { failed: { last_status_code: result.statusCode, last_error: result.error } }, now) as never);
      }
    }, { readCommitted: true });
  }

  private settle(): void {
    if (this.claiming || this.recording || this.slots.inFlight || this.preparing || this.handingBack || this.waiting.length || this.finished.length) return;
    this.idleWaiters.splice(0).forEach((resolve) => resolve());
  }

  private whenIdle(): Promise<void> {
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve);
      this.settle();
    });
  }
}

/** Whose secret signs a delivery: its key's, or its app's as authorized by the delivery's business and mode. */
function secretKey(delivery: WebhookDelivery): string {
  return delivery.app_id !== null ? `app:${delivery.app_id}:${delivery.business_id}:${delivery.livemode}` : `key:${delivery.api_key_id}`;
}

function attemptRow(delivery: WebhookDelivery, { startedAt, result }: Finished, now: Date): StoredRow {
  return {
    attempt: delivery.last_attempt_number,
    started_at: toDbTime(startedAt),
    duration_ms: result.durationMs,
    status_code: result.statusCode,
    response_excerpt: result.excerpt,
    error: result.error,
    created_at: toDbTime(now),
    updated_at: toDbTime(now),
  };
}

/** E.g. a secret sealed under another APP_SECRET_KEY: recorded as a failed attempt, so the delivery log says why. */
function unopenable(err: unknown): Secret {
  if (!(err instanceof SecretBoxError)) throw err;
  return { error: err.message.slice(0, 500) };
}
