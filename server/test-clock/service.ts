/**
 * Test clocks (contract, "Collections on a clock"): a business's test-mode time, read and moved
 * forward through the API (`GET /test-clock`, `POST /test-clock/advance`) and the CLI (`invoicing
 * clock show|advance`). Live mode and other businesses keep the real time.
 *
 * An advance runs everything time-driven for the business's test mode between the clock's time and
 * `to`, in time order, each record and event dated at the moment it was due. Two kinds of work, as
 * server/services.ts builds them:
 * - issuance (recurring invoices), which makes invoices: the advance stops at each moment it names
 *   (`nextDueAfter`; a work without it, at every midnight) and at `to`, and runs it there under a
 *   clock frozen at that moment;
 * - the follow-ups (reminders, `invoice.overdue`), which act only on invoices that exist: before each
 *   stop they run once for everything due before it, worked in time order many to a transaction,
 *   each step dated at its own moment; and once more at `to`, after issuance there.
 * So a year of 12 monthly invoices is one stop per invoice issued, not 365 rounds of every work's
 * queries, and nothing is done out of order: at one moment, issuance comes before the follow-ups.
 * It returns once all of it is recorded, and then stores `to`.
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
 * clock at the last moment by which everything due was done (just before the stop whose issuance
 * failed), so a retry goes on from there.
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

/** What an advance runs: the works that make invoices, and the work that follows up on them. */
export interface AdvanceWorks {
  /** Run at each moment they name, in this order. */
  issuance: readonly TimeDrivenWork[];
  /** For one advance to `until`: run before each stop for everything due before it, and at `until`. */
  followUps: { until(tenancy: Tenancy, until: Date): (at: Date) => Promise<void> };
}
function assertTestMode(actor: Actor): void {
  if (actor.livemode) throw new TestModeOnly('Test clocks exist only in test mode: use a test key (svc_test_…)');
}

export class TestClockService {
  /** Per business, the advance under way in this process: the next one waits for it. */
  private readonly advancing = new Map<number, Promise<unknown>>();

  constructor(
    private readonly db: Database,
    private readonly clocks: BusinessClocks,
    private readonly works: AdvanceWorks,
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
    // The last moment by which everything due is done: where the clock is left if a step fails.
    let done = from;
    const followUps = this.works.followUps.until(tenancy, to);
    try {
      do {
        const step = await this.nextStep(tenancy, reached, to);
        // Everything that fell due before the stop, then issuance at it (its follow-ups come with the next stop's).
        const justBefore = new Date(step.getTime() - 1);
        await withBusinessClock(frozenClock(step), () => followUps(justBefore));
        if (justBefore > done) done = justBefore;
        await withBusinessClock(frozenClock(step), () => this.runIssuance(tenancy, step));
        reached = step;
      } while (reached < to);
      await withBusinessClock(frozenClock(to), () => followUps(to));
    } catch (err) {
      // What was done stays done and dated; the clock says how far it got, and a retry goes on from there.
      if (done > from) await this.clocks.moveTestModeForward(tenancy.businessId, done);
      throw err;
    }
    return toTestClockView(await this.clocks.moveTestModeForward(tenancy.businessId, to), to);
  }

  /**
   * The next moment after `after` the advance stops at: the earliest that an issuance work names (the
   * first midnight after `after` for one that cannot say), `to` at the latest. They are asked again
   * after every stop, as one stop's invoices may make the next.
   */
  private async nextStep(tenancy: Tenancy, after: Date, to: Date): Promise<Date> {
    let next = to;
    for (const work of this.works.issuance) {
      const due = work.nextDueAfter ? await work.nextDueAfter(tenancy, after) : nextUtcMidnight(after);
      const at = due && (due > after ? due : nextUtcMidnight(after));
      if (at && at < next) next = at;
    }
    return next;
  }

  private async runIssuance(tenancy: Tenancy, at: Date): Promise<void> {
    for (const work of this.works.issuance) await work.runDue(tenancy, at);
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
