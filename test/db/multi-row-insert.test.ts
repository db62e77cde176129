/**
 * One multi-row INSERT of many rows (a sweep's transaction records fifty events, each with its
 * deliveries): every row is written once, and the ids answered are the ones the rows got.
 */
import { randomUUID } from 'node:crypto';
import { systemActor } from '../../server/auth/actor';
import { toDbTime } from '../../server/db/time';
import { Event } from '../../server/events/model';
import { useApp } from '../support/app';

const ctx = useApp();

test('when more rows are inserted at once than SQLite takes in one statement, then each is written once and numbered as answered', async () => {
  // Arrange: 1,200 events (SQLite's compound SELECT takes 500 terms)
  const owner = systemActor('cli', { businessId: ctx.t.businessId, livemode: false });
  const now = toDbTime(new Date());
  const rows = Array.from({ length: 1200 }, (_, i) => ({
    owner,
    row: { type: 'invoice.created', idempotency_key: randomUUID(), data: JSON.stringify({ n: i }), created_at: now, updated_at: now },
  }));

  // Act
  const ids = await Event.insertOwned(ctx.app.db.knex, rows);

  // Assert
  const stored = await ctx.app.db.knex('events').where({ business_id: ctx.t.businessId }).orderBy('id').select('id', 'idempotency_key');
  expect(stored).toHaveLength(1200);
  expect(stored.map((row: { idempotency_key: string }) => row.idempotency_key)).toEqual(rows.map(({ row }) => row.idempotency_key));
  expect(ids).toEqual(stored.map((row: { id: number }) => row.id));
});
