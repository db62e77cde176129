/**
 * Where a business's time comes from: the real time, unless the business's test mode has a frozen
 * time stored (`business_clocks`, which the collections issue will let integrators move, as Stripe's
 * test clocks). Live mode is the real time by construction: it is never read, never written, and the
 * table's check refuses a live row.
 */
import { LRUCache } from 'lru-cache';
import { Clock, frozenClock, systemClock, withBusinessClock } from '../clock';
import { Database } from './database';
import { selectRows } from './statement';
import { fromDbTime, toDbTime } from './time';

/** One business and mode, as an actor (a credential, a system actor) names them. */
export interface Tenancy {
  businessId: number;
  livemode: boolean;
}

/**
 * Work that falls due with time for a business and mode: recurring issuance, and the follow-ups
 * (reminders, `invoice.overdue`). The sweeps do it on the real time across every business; a test
 * clock's advance (server/test-clock/) calls `runDue` for one test mode at the moments it stops at,
 * in order, so that each thing happens once and is dated at the moment it was due.
 */
export interface TimeDrivenWork {
  /**
   * Does everything due for `tenancy` at or before `at` that is not done yet, each dated at the
   * moment it was due (its day's 00:00 UTC), not at `at`. Safe to run from several processes at once.
   */
  runDue(tenancy: Tenancy, at: Date): Promise<void>;
  /**
   * The first moment after `after` at which `runDue` would have something to do for `tenancy`, as
   * things stand now (null: nothing is scheduled); something due already is due at the first
   * midnight after `after`. Optional, but it is what keeps an advance fast: an advance stops only at
   * the moments its issuance names (a year of a dozen monthly invoices is 144 stops, not 365); an
   * issuance work without it makes the advance stop at every midnight.
   */
  nextDueAfter?(tenancy: Tenancy, after: Date): Promise<Date | null>;
}

/** A joined `business_clocks` row's frozen UTC date, as SQL (stored as `YYYY-MM-DD HH:MM:SS.mmm` on both drivers): what a sweep judges a frozen test mode's due dates by. */
export const FROZEN_DATE_SQL = 'substr(business_clocks.frozen_time, 1, 10)';

const FROZEN_TIME = 'select frozen_time from business_clocks where business_id = ? and livemode = 0';

export class BusinessClocks {
  /**
   * Each test mode's clock by business id, kept `cacheTtlMs` (as API keys are): reading the row on
   * every request cost a cached GET about a third of its throughput (bench:api). A move made in this process is seen at
   * once; another process sees it within the TTL, as it sees a key's revocation.
   */
  private readonly cache: LRUCache<number, Clock> | null;

  constructor(
    private readonly db: Database,
    options: { cacheTtlMs: number },
    /** The real time (injected in tests). */
    private readonly system: Clock = systemClock,
  ) {
    this.cache = options.cacheTtlMs > 0 ? new LRUCache({ max: 10_000, ttl: options.cacheTtlMs }) : null;
  }

  /** The clock of a business and mode: live mode's is the real time, without a read. */
  async of(tenancy: Tenancy): Promise<Clock> {
    if (tenancy.livemode) return this.system;
    const cached = this.cache?.get(tenancy.businessId);
    if (cached) return cached;
    const [row] = await selectRows<{ frozen_time: string | Date }>(this.db.current, FROZEN_TIME, [tenancy.businessId]);
    const clock = row ? frozenClock(new Date(fromDbTime(row.frozen_time)!)) : this.system;
    this.cache?.set(tenancy.businessId, clock);
    return clock;
  }

  /** Runs `work` acting for this business and mode: the records it writes are dated by its clock. */
  async actFor<T>(tenancy: Tenancy, work: () => Promise<T>): Promise<T> {
    const clock = await this.of(tenancy);
    return withBusinessClock(clock, work);
  }

  /** A test mode's stored time, read from the table, not the cache (what an advance starts from); null: it runs on the real time. */
  async storedTestTime(businessId: number): Promise<Date | null> {
    const [row] = await selectRows<{ frozen_time: string | Date }>(this.db.current, FROZEN_TIME, [businessId]);
    return row ? new Date(fromDbTime(row.frozen_time)!) : null;
  }

  /**
   * Freezes a business's test-mode time at `at`, wherever it was (there is no live-mode
   * counterpart): a test sets a clock up with it; the API moves one only forward (`moveTestModeForward`).
   */
  async freezeTestMode(businessId: number, at: Date): Promise<void> {
    await this.insertTestClock(businessId, at).merge(['frozen_time', 'updated_at']);
    this.cache?.delete(businessId);
  }

  /**
   * Moves a business's test-mode time to `to` unless it is there or later already: a conditional
   * write, so two moves racing, in one process or several, leave the later time, never an earlier
   * one. Resolves with the stored time afterwards.
   */
  async moveTestModeForward(businessId: number, to: Date): Promise<Date> {
    await this.insertTestClock(businessId, to).ignore();
    await this.db
      .current('business_clocks')
      .where({ business_id: businessId, livemode: 0 })
      .andWhere('frozen_time', '<', toDbTime(to))
      .update({ frozen_time: toDbTime(to), updated_at: toDbTime(this.system.now()) });
    this.cache?.delete(businessId);
    return (await this.storedTestTime(businessId))!;
  }

  private insertTestClock(businessId: number, at: Date) {
    const now = toDbTime(this.system.now());
    return this.db.current('business_clocks')
      .insert({ business_id: businessId, livemode: 0, frozen_time: toDbTime(at), created_at: now, updated_at: now })
      .onConflict(['business_id', 'livemode']);
  }

  /** The real time (injected in tests): where an advance starts from a test mode that has no stored time. */
  realTime(): Date {
    return this.system.now();
  }
}
