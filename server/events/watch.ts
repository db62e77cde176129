/**
 * The waiting polls of the event log (`GET /events?wait=`), watched together per business and mode:
 * one read of the newest event id per interval for all of a tenant's waiting polls (however many),
 * and a wake-up as soon as this process commits one of its events. A poll that is woken reads the
 * log once; one that is not reads it only at its deadline. Events committed by another process are
 * seen at the next look, so within an interval. At most MAX_WAITS_PER_CREDENTIAL polls of one
 * credential wait at once in a process; more answer at once with what there is.
 */
import { Credential, Tenancy } from '../auth/credential';
import { Database } from '../db/database';
import { Event } from './model';
import { EventWaiters } from './outbox';

/** Waiting polls of one credential at once; more answer at once. */
export const MAX_WAITS_PER_CREDENTIAL = 5;
/** How often a business and mode's waiting polls look for events other processes committed: one read for all of them. */
export const EVENT_WATCH_INTERVAL_MS = 250;

/** One waiting poll, between its reads of the log. */
export interface WaitingPoll {
  /** The changes its business and mode's watch has seen: taken before each read of the log. */
  readonly version: number;
  /** Resolves once the watch sees a change after `version` (at once if it has), after `ms`, or when `gone` aborts. */
  changed(version: number, ms: number, gone?: AbortSignal): Promise<void>;
  /** The poll answered: frees its place. */
  leave(): void;
}

interface TenantWatch {
  /** The credential of the poll that began the watch: only its business and mode are read. */
  tenancy: Credential;
  /** The first look, before the first poll reads the log, so an event committed in between is seen as new. */
  ready: Promise<void>;
  newest: number;
  version: number;
  polls: number;
  wakers: Set<() => void>;
  timer?: NodeJS.Timeout;
}

const tenantKey = (tenancy: Tenancy) => `${tenancy.businessId}:${tenancy.livemode ? 'live' : 'test'}`;

export class EventWatch implements EventWaiters {
  private readonly watches = new Map<string, TenantWatch>();
  private readonly pollsBySubject = new Map<string, number>();

  constructor(private readonly db: Database) {}

  /** A place for one waiting poll of `cred`, or null when the credential has MAX_WAITS_PER_CREDENTIAL waiting already. */
  async join(cred: Credential): Promise<WaitingPoll | null> {
    const held = this.pollsBySubject.get(cred.subject) ?? 0;
    if (held >= MAX_WAITS_PER_CREDENTIAL) return null;
    this.pollsBySubject.set(cred.subject, held + 1);
    const key = tenantKey(cred);
    const watch = this.watches.get(key) ?? this.begin(key, cred);
    watch.polls += 1;
    let left = false;
    const poll: WaitingPoll = {
      get version() {
        return watch.version;
      },
      changed: (version, ms, gone) => waitForChange(watch, version, ms, gone),
      leave: () => {
        if (left) return;
        left = true;
        this.leave(key, watch, cred.subject);
      },
    };
    try {
      await watch.ready;
    } catch (err) {
      poll.leave();
      throw err;
    }
    return poll;
  }

  waitsFor(tenancy: Tenancy): boolean {
    return this.watches.has(tenantKey(tenancy));
  }

  /** This process committed `eventId` for the business and mode: its waiting polls read the log now. */
  committed(tenancy: Tenancy, eventId: number): void {
    const watch = this.watches.get(tenantKey(tenancy));
    if (!watch || eventId <= watch.newest) return;
    watch.newest = eventId;
    wake(watch);
  }

  private begin(key: string, tenancy: Credential): TenantWatch {
    const watch: TenantWatch = { tenancy, ready: Promise.resolve(), newest: 0, version: 0, polls: 0, wakers: new Set() };
    watch.ready = this.newestOf(tenancy).then((newest) => {
      watch.newest = Math.max(watch.newest, newest);
      this.schedule(key, watch);
    });
    this.watches.set(key, watch);
    return watch;
  }

  private leave(key: string, watch: TenantWatch, subject: string): void {
    const held = (this.pollsBySubject.get(subject) ?? 1) - 1;
    if (held > 0) this.pollsBySubject.set(subject, held);
    else this.pollsBySubject.delete(subject);
    watch.polls -= 1;
    if (watch.polls > 0) return;
    clearTimeout(watch.timer);
    if (this.watches.get(key) === watch) this.watches.delete(key);
  }

  private schedule(key: string, watch: TenantWatch): void {
    if (this.watches.get(key) !== watch) return;
    watch.timer = setTimeout(() => void this.look(key, watch), EVENT_WATCH_INTERVAL_MS);
  }

  /** One read for every waiting poll of the business and mode; a failed read is tried again at the next interval (each poll still reads at its deadline). */
  private async look(key: string, watch: TenantWatch): Promise<void> {
    try {
      const newest = await this.newestOf(watch.tenancy);
      if (newest > watch.newest) {
        watch.newest = newest;
        wake(watch);
      }
    } catch {
      // Nothing to tell a poll: it answers with its own read, at the latest at its deadline.
    }
    this.schedule(key, watch);
  }

  private async newestOf(tenancy: Credential): Promise<number> {
    const row = (await Event.of(tenancy, this.db.current).max('events.id as newest').first()) as unknown as { newest: number | null } | undefined;
    return Number(row?.newest ?? 0);
  }
}

function wake(watch: TenantWatch): void {
  watch.version += 1;
  [...watch.wakers].forEach((wakeOne) => wakeOne());
}

function waitForChange(watch: TenantWatch, version: number, ms: number, gone?: AbortSignal): Promise<void> {
  if (watch.version !== version || gone?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      watch.wakers.delete(done);
      gone?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    watch.wakers.add(done);
    gone?.addEventListener('abort', done, { once: true });
  });
}
