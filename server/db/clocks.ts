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
 * Work that falls due with time for a business and mode: `invoice.overdue`, reminders, recurring
 * issuance. The sweeps do it on the real time across every business; a test clock's advance calls
 * `runDue` for one test mode at each midnight (UTC) it passes, in order, so that each thing happens
 * once and is dated at the moment it was due.
 */
export interface TimeDrivenWork {
  /**
   * Does everything due for `tenancy` at or before `at` that is not done yet, each dated at the
   * moment it was due (its day's 00:00 UTC), not at `at`. Safe to run from several processes at once.
   */
  runDue(tenancy: Tenancy, at: Date): Promise<void>;
}

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

  /** Freezes a business's test-mode time at `at` (there is no live-mode counterpart). */
  async freezeTestMode(businessId: number, at: Date): Promise<void> {
    const now = toDbTime(this.system.now());
    await this.db.current('business_clocks')
      .insert({ business_id: businessId, livemode: 0, frozen_time: toDbTime(at), created_at: now, updated_at: now })
      .onConflict(['business_id', 'livemode'])
      .merge(['frozen_time', 'updated_at']);
    this.cache?.delete(businessId);
  }
}
