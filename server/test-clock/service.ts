/**
 * Test clocks (contract, "Collections on a clock"): a business's test-mode time, read and moved
 * forward through the API (`GET /test-clock`, `POST /test-clock/advance`) and the CLI (`invoicing
 * clock show|advance`). Live mode and other businesses keep the real time.
 *
 * An advance runs everything time-driven for the business's test mode (the `TimeDrivenWork` list
 * server/services.ts builds: overdue, and reminders and recurring issuance as they come) at each
 * 00:00 UTC between the clock's time and `to`, in order, then at `to` itself, each step under a clock
 * frozen at that moment, so each record and event is dated at the moment it was due. A midnight at
 * which no work has anything to do is skipped, when every work can say when it next has
 * (`nextDueAfter`): a year is then a step per thing due, not 365 rounds of queries. It returns once
 * all of it is recorded, and then stores `to`.
 *
 * Two advances of one business at once:
 * - in one process they queue: the second starts from where the first left the clock (and is
 *   refused, 422, if its `to` is now behind);
 * - across processes they may run side by side. Nothing is done twice even so, because each work's
 *   step is itself a conditional claim (an invoice marked once, a date issued once: `runDue` is safe
 *   from several processes at once, as the sweeps are), and the stored time only moves forward (a
 *   conditional update), so the later `to` wins whichever commits last. No transaction or lock is
 *   held across an advance: a year is hundreds of short transactions, and holding one would block
 *   the business's requests (and on SQLite every writer) for the whole of it.
 * The stored time moves once, at the end (one write, not one per day); a step that fails leaves the
 * clock at the last step that finished, so a retry goes on from there.
 */
import { Actor, systemActor } from '../auth/actor';
import { Business } from '../businesses/model';
import { frozenClock, nextUtcMidnight, withBusinessClock } from '../clock';
import { Database } from '../db/database';
import { NotFound, ValidationFailed } from '../errors';
import { TestModeOnly } from '../invoices/payment-path';
import { BusinessClocks, Tenancy, TimeDrivenWork } from './model';
import { MAX_ADVANCE_YEARS, TestClockView } from './schema';
import { toTestClockView } from './view';

const DAY_MS = 86_400_000;

/** Where an advance goes: a moment, or a number of days after the clock's time (the CLI's `+30d`). */
export type AdvanceTarget = { to: Date } | { days: number };

function assertTestMode(actor: Actor): void {
  if (actor.livemode) throw new TestModeOnly('Test clocks exist only in test mode: use a test key (svc_test_…)');
}

export class TestClockService {
  /** Per business, the advance under way in this process: the next one waits for it. */
  private readonly advancing = new Map<number, Promise<unknown>>();

  constructor(
    private readonly db: Database,
    private readonly clocks: BusinessClocks,
    /** Run in this order at each moment (server/services.ts builds the list). */
    private readonly works: readonly TimeDrivenWork[],
  ) {}

  /** The test mode's clock as stored (not as this process's cache may still hold it for a second). */
  async get(actor: Actor): Promise<TestClockView> {
    assertTestMode(actor);
    return toTestClockView(await this.clocks.storedTestTime(actor.businessId), this.clocks.realTime());
  }

  /** Moves the test mode's time forward to `target`, running what fell due on the way; resolves once it is all recorded. */
  advance(actor: Actor, target: AdvanceTarget): Promise<TestClockView> {
    assertTestMode(actor);
    return this.oneAtATime(actor.businessId, () => this.advanceNow(actor, target));
  }

  /** The CLI's `clock show --business ID`. */
  async getForOwner(businessId: number): Promise<TestClockView> {
    return this.get(await this.testModeOf(businessId));
  }

  /** The CLI's `clock advance --business ID --to DATE|+Nd`. */
  async advanceForOwner(businessId: number, target: AdvanceTarget): Promise<TestClockView> {
    return this.advance(await this.testModeOf(businessId), target);
  }

  private async testModeOf(businessId: number): Promise<Actor> {
    if (!(await Business.query(this.db.current).findById(businessId))) throw new NotFound('Business', businessId);
    return systemActor('cli', { businessId, livemode: false });
  }

  private async advanceNow(tenancy: Tenancy, target: AdvanceTarget): Promise<TestClockView> {
    const from = (await this.clocks.storedTestTime(tenancy.businessId)) ?? this.clocks.realTime();
    const to = 'to' in target ? target.to : new Date(from.getTime() + target.days * DAY_MS);
    const limit = new Date(from.getTime());
    limit.setUTCFullYear(limit.getUTCFullYear() + MAX_ADVANCE_YEARS);
    if (to < from) throw new ValidationFailed({ to: [`must not be before the test clock's time, ${from.toISOString()}: a test clock only moves forward`] });
    if (to > limit) throw new ValidationFailed({ to: [`must be at most ${MAX_ADVANCE_YEARS} years after the test clock's time, ${from.toISOString()} (at most ${limit.toISOString()}); advance in several calls`] });
    let reached = from;
    try {
      do {
        const step = await this.nextStep(tenancy, reached, to);
        await withBusinessClock(frozenClock(step), () => this.runAt(tenancy, step));
        reached = step;
      } while (reached < to);
    } catch (err) {
      // What was done stays done and dated; the clock says how far it got, and a retry goes on from there.
      if (reached > from) await this.clocks.moveTestModeForward(tenancy.businessId, reached);
      throw err;
    }
    return toTestClockView(await this.clocks.moveTestModeForward(tenancy.businessId, to), to);
  }

  /**
   * The next moment after `after` the advance stops at: the first midnight after it (each midnight is
   * a moment something may fall due), unless every work says when it next has something to do, then
   * the earliest of those; `to` at the latest. The works are asked again after every step, as one
   * step's records (an invoice issued) may fall due at the next.
   */
  private async nextStep(tenancy: Tenancy, after: Date, to: Date): Promise<Date> {
    let next = to;
    for (const work of this.works) {
      const due = work.nextDueAfter ? await work.nextDueAfter(tenancy, after) : nextUtcMidnight(after);
      const at = due && (due > after ? due : nextUtcMidnight(after));
      if (at && at < next) next = at;
    }
    return next;
  }

  private async runAt(tenancy: Tenancy, at: Date): Promise<void> {
    for (const work of this.works) await work.runDue(tenancy, at);
  }

  private oneAtATime<T>(businessId: number, work: () => Promise<T>): Promise<T> {
    const before = this.advancing.get(businessId) ?? Promise.resolve();
    const run = before.then(work);
    const settled = run.catch(() => undefined);
    this.advancing.set(businessId, settled);
    void settled.then(() => {
      if (this.advancing.get(businessId) === settled) this.advancing.delete(businessId);
    });
    return run;
  }
}
