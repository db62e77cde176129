/**
 * The job engine over the real database (both drivers), with queued e-mail rows as its leased table:
 * an attempt is counted only when it is made. A row whose preparation outlasted its lease is left to
 * the claim that took it over, uncounted; a row whose work was not attempted is handed back due now,
 * with all its retries; a failed attempt is due again by the schedule, and fails after the last.
 */
import pino from 'pino';
import { acrossTenants } from '../../server/auth/actor';
import { systemClock } from '../../server/clock';
import { EmailMessage } from '../../server/email/queue';
import { JobKind, JobQueue, Outcome } from '../../server/jobs/engine';
import { toDbTime } from '../../server/db/time';
import { aDraft, startApp, TestApp } from '../support/app';

const PAST = '2000-01-01 00:00:00.000';

describe('the job engine', () => {
  let app: TestApp;

  beforeAll(async () => {
    // startApp runs no scheduled sweeps: only the tests' queues claim these rows.
    app = await startApp();
  });
  afterAll(async () => {
    await app?.stop();
  });

  /** A pending message row, due now, of a new business's draft invoice. */
  async function aDueRow(): Promise<number> {
    const t = await app.tenant({ mode: 'live' });
    const draft = await aDraft(t);
    const now = toDbTime(new Date());
    const [id] = await app.db.knex('email_messages').insert({
      business_id: t.businessId,
      livemode: true,
      invoice_id: draft.id,
      recipient: 'client@example.com',
      subject: 'Invoice',
      text_body: 'text',
      html_body: '<p>html</p>',
      message_id: `<${draft.id}-${Math.random()}@example.com>`,
      status: 'pending',
      attempts: 0,
      next_attempt_at: now,
      lease_id: null,
      last_error: null,
      sent_at: null,
      created_at: now,
      updated_at: now,
    });
    return id;
  }

  const row = (id: number): Promise<{ status: string; attempts: number; lease_id: string | null; next_attempt_at: unknown; last_error: string | null }> =>
    app.db.knex('email_messages').where({ id }).first();

  /** A queue over the messages table; the tests run it by id only (`runNow`), so other rows stay as they are. */
  function aQueue(kind: Pick<JobKind<EmailMessage, unknown>, 'work'> & Partial<JobKind<EmailMessage, unknown>>): JobQueue<EmailMessage, unknown> {
    return new JobQueue<EmailMessage, unknown>(app.db, pino({ level: 'silent' }), {
      label: 'test job',
      model: EmailMessage,
      access: acrossTenants('email queue'),
      batch: 5,
      leaseSeconds: 60,
      clock: systemClock,
      schedule: (attemptsMade, now) => (attemptsMade < 2 ? new Date(now.getTime() + 60_000) : null),
      statuses: { done: 'sent', failed: 'failed' },
      ...kind,
    });
  }

  test('when a preparation waits past its lease and another claim takes the row over, then the row is worked once and one attempt is counted', async () => {
    // Arrange: a queue whose preparation waits at a gate (as behind a busy PDF thread), and a second
    // queue (another process) whose preparation is quick
    const id = await aDueRow();
    let prepared!: () => void;
    const preparing = new Promise<void>((resolve) => (prepared = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const worked: string[] = [];
    const slow = aQueue({
      prepare: async () => {
        prepared();
        await gate;
      },
      work: (): Promise<Outcome> => {
        worked.push('slow');
        return Promise.resolve({ done: {} });
      },
    });
    const quick = aQueue({
      prepare: () => Promise.resolve(undefined),
      work: (): Promise<Outcome> => {
        worked.push('quick');
        return Promise.resolve({ done: {} });
      },
    });

    // Act: the slow queue claims the row and prepares; its lease runs out, the quick queue takes
    // the row over and works it; then the slow preparation ends
    const slowRun = slow.runNow(id);
    await preparing;
    expect(await row(id)).toMatchObject({ attempts: 0 });
    await app.db.knex('email_messages').where({ id }).update({ next_attempt_at: PAST });
    const tookOver = await quick.drain();
    release();

    // Assert
    expect(tookOver).toBe(1);
    expect(await slowRun).toBe('not-attempted');
    expect(worked).toEqual(['quick']);
    expect(await row(id)).toMatchObject({ status: 'sent', attempts: 1, lease_id: null });
  });

  test('when an attempt is not made, then the row is handed back due now with no attempt counted, and the next claim makes it', async () => {
    // Arrange
    const id = await aDueRow();
    const outcomes: Outcome[] = ['not-attempted', { done: { last_error: null } }];
    const queue = aQueue({ work: () => Promise.resolve(outcomes.shift()!) });

    // Act
    const first = await queue.runNow(id);
    const handedBack = await row(id);
    const dueNow = await app.db.knex('email_messages').where({ id }).where('next_attempt_at', '<=', toDbTime(new Date())).first();
    const second = await queue.runNow(id);

    // Assert
    expect(first).toBe('not-attempted');
    expect(handedBack).toMatchObject({ status: 'pending', attempts: 0, lease_id: null });
    expect(dueNow).toBeDefined();
    expect(second).toEqual({ done: { last_error: null } });
    expect(await row(id)).toMatchObject({ status: 'sent', attempts: 1, lease_id: null });
  });

  test('when attempts fail, then each is counted and due again by the schedule, and the row fails after the last', async () => {
    // Arrange
    const id = await aDueRow();
    const queue = aQueue({ work: (): Promise<Outcome> => Promise.resolve({ failed: { last_error: 'refused' } }) });

    // Act
    await queue.runNow(id);
    const afterFirst = await row(id);
    await app.db.knex('email_messages').where({ id }).update({ next_attempt_at: PAST });
    await queue.runNow(id);

    // Assert
    expect(afterFirst).toMatchObject({ status: 'pending', attempts: 1, lease_id: null, last_error: 'refused' });
    expect(await row(id)).toMatchObject({ status: 'failed', attempts: 2, lease_id: null, last_error: 'refused' });
  });
});
