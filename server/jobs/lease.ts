/**
 * Claims for background work kept in a table (webhook deliveries, queued e-mails, pending refunds):
 * a row is due while `status = 'pending'` and `next_attempt_at` has passed. A claim commits a lease
 * id and pushes the due time past the lease, so no row lock is held while the work calls out; if the
 * process dies, the row comes due again and another claim takes it. MySQL skips rows another process
 * is claiming (`SKIP LOCKED`); SQLite's single writer needs no locks.
 *
 * An attempt is counted when it begins, under its lease, and only here: with the claim when the work
 * starts at once (`claimDue`), or after a preparation that may be repeated (`beginAttempt`). A row
 * handed back unworked (`handBack`) gives back what its claim counted, so a lease that was too short
 * never eats into the retries; a lease lost before its attempt began counted nothing.
 */
import { randomBytes } from 'node:crypto';
import { CrossTenantAccess } from '../auth/actor';
import { Clock } from '../clock';
import { Database } from '../db/database';
import { TenantModel } from '../db/tenant-model';
import { toDbTime } from '../db/time';

/** The columns a leased job row has (a TenantModel's row). */
export interface LeasedRow {
  id: number;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  lease_id: string | null;
}

export interface LeaseOptions {
  access: CrossTenantAccess;
  leaseSeconds: number;
  clock: Clock;
  /** Integer columns counted up with each attempt besides `attempts` (e.g. a number no replay resets). */
  counters?: readonly string[];
}

export interface ClaimOptions<M extends LeasedRow> extends LeaseOptions {
  /** Rows claimed at most. */
  limit: number;
  /** Whether the attempts begin with the claim (counted now); else each begins with `beginAttempt`. */
  begin: boolean;
  /** Only this row (a first attempt right after its commit). */
  id?: number;
  /** Rows whose `column` has one of `values` are not claimed (e.g. receivers already at their limit). */
  skip?: { column: string; values: readonly string[] };
  /** Which of the locked candidates to lease; the rest stay due for a later claim. */
  choose?: (candidates: M[]) => M[];
}

type Table = typeof TenantModel;

/** The attempt counters moved by `delta` (+1 as an attempt begins, −1 as a begun one is handed back unmade). */
function counting(table: Table, options: Pick<LeaseOptions, 'counters'>, delta: 1 | -1): Record<string, unknown> {
  return Object.fromEntries(attemptCounters(options).map((c) => [c, table.raw(delta > 0 ? '?? + 1' : '?? - 1', [c])]));
}

function attemptCounters(options: Pick<LeaseOptions, 'counters'>): string[] {
  return ['attempts', ...(options.counters ?? [])];
}

/** The same counters on the row in memory, as the database now has them. */
function countedIn<M extends LeasedRow>(row: M, options: Pick<LeaseOptions, 'counters'>): M {
  const counted = row as unknown as Record<string, number>;
  return Object.assign(row, Object.fromEntries(attemptCounters(options).map((c) => [c, counted[c] + 1])));
}

function leaseEnd(options: Pick<LeaseOptions, 'leaseSeconds' | 'clock'>): string {
  return new Date(options.clock.now().getTime() + options.leaseSeconds * 1000).toISOString();
}

/**
 * The columns of a row written already leased, its first attempt begun: what `claimDue` with `begin`
 * leaves on a row it claims (for a delivery that the commit creating it hands straight to the worker).
 */
export function leasedAtInsert(options: Pick<LeaseOptions, 'leaseSeconds' | 'clock' | 'counters'>): Record<string, string | number> {
  return {
    lease_id: randomBytes(16).toString('hex'),
    next_attempt_at: toDbTime(new Date(options.clock.now().getTime() + options.leaseSeconds * 1000)),
    ...Object.fromEntries(attemptCounters(options).map((column) => [column, 1])),
  };
}

/** Claims due rows of `model` and returns them with their lease id (and, with `begin`, the attempt number now made). */
export async function claimDue<M extends LeasedRow>(db: Database, model: new () => M, options: ClaimOptions<M>): Promise<M[]> {
  const table = model as unknown as Table;
  return db.transaction(async (trx) => {
    const now = options.clock.now();
    const due = table
      .acrossTenants(options.access, trx)
      .where('status', 'pending')
      .where('next_attempt_at', '<=', toDbTime(now))
      .orderBy('next_attempt_at')
      .limit(options.limit)
      .forUpdate();
    if (options.id !== undefined) due.where('id', options.id).whereNull('lease_id');
    if (options.skip?.values.length) due.whereNotIn(options.skip.column, options.skip.values);
    if (db.dialect === 'mysql') due.skipLocked();
    const candidates = (await due) as unknown as M[];
    const rows = options.choose ? options.choose(candidates) : candidates;
    if (!rows.length) return [];
    const leaseId = randomBytes(16).toString('hex');
    await table
      .acrossTenants(options.access, trx)
      .whereIn(
        'id',
        rows.map((row) => row.id),
      )
      .patch({ lease_id: leaseId, next_attempt_at: new Date(now.getTime() + options.leaseSeconds * 1000).toISOString(), ...(options.begin ? counting(table, options, 1) : {}) } as never);
    return rows.map((row) => {
      Object.assign(row, { lease_id: leaseId });
      return options.begin ? countedIn(row, options) : row;
    });
  }, { readCommitted: true });
}

/**
 * Begins the attempt of a row claimed without `begin`, after a preparation that may be repeated and
 * before a step that must not be done twice (sending a message): counts it and extends the lease from
 * now. False when the lease has passed to another claim, which then makes the attempt (and counts it);
 * this claim counted nothing. A claim replaces the lease id under a row lock, so checking the id is enough.
 */
export async function beginAttempt<M extends LeasedRow>(db: Database, model: new () => M, row: M, options: LeaseOptions): Promise<boolean> {
  const table = model as unknown as Table;
  const begun = await table
    .acrossTenants(options.access, db.current)
    .where({ id: row.id, lease_id: row.lease_id, status: 'pending' })
    .patch({ next_attempt_at: leaseEnd(options), ...counting(table, options, 1) } as never);
  if (begun !== 1) return false;
  countedIn(row, options);
  return true;
}

/**
 * Gives back the leases of rows whose attempt was not made (a lease too short for it, a process
 * stopping), due now for any process, as if never claimed: what their claim counted is given back,
 * so they keep all their retries. Rows whose lease passed to another claim are left to it.
 */
export async function handBack<M extends LeasedRow>(db: Database, model: new () => M, rows: M[], options: LeaseOptions & { begun: boolean }): Promise<void> {
  if (!rows.length) return;
  const table = model as unknown as Table;
  await table
    .acrossTenants(options.access, db.current)
    .whereIn(
      'id',
      rows.map((row) => row.id),
    )
    .whereIn('lease_id', [...new Set(rows.map((row) => row.lease_id!))])
    .patch({ lease_id: null, next_attempt_at: options.clock.now().toISOString(), ...(options.begun ? counting(table, options, -1) : {}) } as never);
}
