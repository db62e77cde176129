/**
 * Long polls of the event log (`GET /events?wait=`): at most 5 wait at once per credential, and the
 * waiting polls of a business and mode share one look at the database per interval, however many.
 */
import { Knex } from 'knex';
import { EVENT_WATCH_INTERVAL_MS, MAX_WAITS_PER_CREDENTIAL } from '../../server/events/watch';
import { aDraft, startApp, Tenant, TestApp, useApp } from '../support/app';
import { eventually } from '../support/eventually';

const ctx = useApp();

/** Counts the statements that read the events table on `app`'s database, from now on. */
function countEventReads(app: TestApp): { readonly n: number; reset(): void; stop(): void } {
  let n = 0;
  const onQuery = (query: Knex.Sql) => {
    if (/[`"]events[`"]/.test(query.sql)) n += 1;
  };
  app.db.knex.on('query', onQuery);
  return {
    get n() {
      return n;
    },
    reset: () => {
      n = 0;
    },
    stop: () => app.db.knex.off('query', onQuery),
  };
}

async function newestEventId(t: Tenant): Promise<number> {
  return ((await t.api.get('/events')).body.data.at(-1)?.id as number | undefined) ?? 0;
}

/** Starts `count` polls of `t` waiting for an event after `newest`. */
function startWaiting(t: Tenant, newest: number, count: number, waitSeconds: number) {
  return Array.from({ length: count }, () => t.api.get(`/events?after=${newest}&wait=${waitSeconds}`));
}

/** Each waiting poll reads the log once (a page and its count) before it waits; a business's watch reads once as it begins. */
const readsBeforeWaiting = (polls: number) => 2 * polls + 1;

describe('waiting for events', () => {
  test('when a key already has 5 waiting polls, then a 6th answers at once with what there is, and another key of the business still waits', async () => {
    // Arrange: five waiting polls of one key, each past its first read
    const t = await ctx.app.tenant();
    const other = await ctx.app.tenant({ businessId: t.businessId });
    const newest = await newestEventId(t);
    const reads = countEventReads(ctx.app);
    const polls = startWaiting(t, newest, MAX_WAITS_PER_CREDENTIAL, 25);
    const answered: number[] = [];
    polls.forEach((poll, i) => void poll.then(() => answered.push(i)));
    await eventually(() => reads.n >= readsBeforeWaiting(MAX_WAITS_PER_CREDENTIAL), 10_000);
    reads.stop();

    // Act
    const started = Date.now();
    const sixth = await t.api.get(`/events?after=${newest}&wait=25`);
    const tookMs = Date.now() - started;
    const otherKeys = other.api.get(`/events?after=${newest}&wait=25`);

    // Assert: the sixth did not wait; the five still do
    expect(sixth.status).toBe(200);
    expect(sixth.body.data).toEqual([]);
    expect(tookMs).toBeLessThan(10_000);
    expect(answered).toEqual([]);

    // Act: an event wakes every waiting poll, the other key's too
    const draft = await aDraft(t);

    // Assert
    for (const res of [...(await Promise.all(polls)), await otherKeys]) {
      expect(res.body.data.map((e: { data: { invoice: { id: number } } }) => e.data.invoice.id)).toEqual([draft.id]);
    }
  });

  test('when the clients of waiting polls go away, then their places are freed and the key can wait again', async () => {
    // Arrange: a key's five waiting polls, each past its first read
    const t = await ctx.app.tenant();
    const reads = countEventReads(ctx.app);
    const gone = new AbortController();
    const polls = Array.from({ length: MAX_WAITS_PER_CREDENTIAL }, () =>
      fetch(`${ctx.app.url}/api/v1/partner/events?wait=25`, { headers: { authorization: `Bearer ${t.key}` }, signal: gone.signal }).catch(() => undefined),
    );
    await eventually(() => reads.n >= readsBeforeWaiting(MAX_WAITS_PER_CREDENTIAL), 10_000);
    reads.stop();

    // Act
    gone.abort();
    await Promise.all(polls);

    // Assert: a new poll of the key waits (it is not answered at once as a sixth would be)
    await eventually(async () => {
      const started = Date.now();
      await t.api.get('/events?wait=2');
      return Date.now() - started >= 1500;
    }, 10_000);
  });

  test('when many polls of one business wait, then the database is read once per interval for all of them, not once per poll', async () => {
    // Arrange: two keys, five waiting polls each, all past their first read
    const keys = [await ctx.app.tenant()];
    keys.push(await ctx.app.tenant({ businessId: keys[0].businessId }));
    const newest = await newestEventId(keys[0]);
    const reads = countEventReads(ctx.app);
    const polls = keys.flatMap((t) => startWaiting(t, newest, MAX_WAITS_PER_CREDENTIAL, 20));
    await eventually(() => reads.n >= readsBeforeWaiting(polls.length), 10_000);

    // Act: watch the reads while they wait
    reads.reset();
    const started = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const counted = reads.n;
    const elapsed = Date.now() - started;
    reads.stop();

    // Assert: a look per interval (one more for a look under way at either end), none per poll
    expect(counted).toBeLessThanOrEqual(Math.ceil(elapsed / EVENT_WATCH_INTERVAL_MS) + 2);
    await aDraft(keys[0]);
    const answers = await Promise.all(polls);
    expect(answers.map((res) => res.body.data.length)).toEqual(answers.map(() => 1));
  });

  test('when another server process commits an event, then a poll waiting on this one answers with it within a few seconds', async () => {
    // Arrange: a second process over the same database (this one only reads meanwhile: SQLite has one writer)
    const t = await ctx.app.tenant();
    const second = await startApp({}, { keepDatabase: { url: ctx.app.databaseUrl, drop: () => Promise.resolve() } });
    try {
      const polls = startWaiting(t, await newestEventId(t), 1, 25);
      await new Promise((resolve) => setTimeout(resolve, 500));

      // Act
      const started = Date.now();
      const draft = await aDraft({ ...t, api: second.api(t.key) });
      const [res] = await Promise.all(polls);

      // Assert
      expect(res.body.data.map((e: { data: { invoice: { id: number } } }) => e.data.invoice.id)).toEqual([draft.id]);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await second.stop();
    }
  });
});
