/**
 * Claims for background work kept in a table (webhook deliveries, queued e-mails): a row is due while
 * `status = 'pending'` and `next_attempt_at` has passed. A claim commits a lease id and pushes the
 * due time past the lease, so no row lock is held while the work calls out; if the process dies,
 * the row comes due again and another sweep takes it. MySQL skips rows another process is claiming
 * (`SKIP LOCKED`); SQLite's single writer needs no locks.
 */
import { randomBytes } from 'node:crypto';
import { CrossTenantAccess } from '../auth/actor';
import { Clock } from '../clock';
import { Database } from '../db/database';
import { TenantModel } from '../db/tenant-model';
import { toDbTime } from '../db/time';

/** The columns a leased job row has. */
export interface LeasedRow extends TenantModel {
  status: string;
  attempts: number;
  next_attempt_at: string;
  lease_id: string | null;
}

export interface LeaseOptions<M extends LeasedRow = LeasedRow> {
  access: CrossTenantAccess;
  leaseSeconds: number;
  clock: Clock;
  /** Rows claimed at most. */
  limit: number;
  /** Only this row (a first attempt right after its commit). */
  id?: number;
  /** Integer columns counted up with each claim besides `attempts` (e.g. a number no replay resets). */
  counters?: string[];
  /** Rows whose `column` has one of `values` are not claimed (e.g. receivers already at their limit). */
  skip?: { column: string; values: readonly string[] };
  /** Which of the locked candidates to lease; the rest stay due for a later claim. */
  choose?: (candidates: M[]) => M[];
}

/**
 * Extends the lease of a claimed row from now, before a step that must not be done twice (sending
 * a message after a slow preparation); false when the lease has passed to another claim, which then
 * does the step. A claim replaces the lease id under a row lock, so checking the id is enough.
 */
export async function renewLease<M extends LeasedRow>(db: Database, model: new () => M, row: M, options: Pick<LeaseOptions, 'access' | 'leaseSeconds' | 'clock'>): Promise<boolean> {
  const table = model as unknown as typeof TenantModel;
  const leaseEnds = new Date(options.clock.now().getTime() + options.leaseSeconds * 1000).toISOString();
  const renewed = await table
    .acrossTenants(options.access, db.current)
    .where({ id: row.id, lease_id: row.lease_id, status: 'pending' })
    .patch({ next_attempt_at: leaseEnds } as never);
  return renewed === 1;
}

/** Claims due rows of `model` and returns them with their lease id and the attempt number now made. */
export async function claimDue<M extends LeasedRow>(db: Database, model: new () => M, options: LeaseOptions<M>): Promise<M[]> {
  const table = model as unknown as typeof TenantModel;
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
    const leaseEnds = new Date(now.getTime() + options.leaseSeconds * 1000).toISOString();
    const counters = ['attempts', ...(options.counters ?? [])];
    await table
      .acrossTenants(options.access, trx)
      .whereIn(
        'id',
        rows.map((row) => row.id),
      )
      .patch({ lease_id: leaseId, next_attempt_at: leaseEnds, ...Object.fromEntries(counters.map((c) => [c, table.raw('?? + 1', [c])])) } as never);
    return rows.map((row) => {
      const counted = row as unknown as Record<string, number>;
      return Object.assign(row, { lease_id: leaseId, ...Object.fromEntries(counters.map((c) => [c, counted[c] + 1])) });
    });
  }, { readCommitted: true });
}
