/**
 * The delivery pool: slots are freed one by one, and one receiver's slots are capped, so a receiver
 * that stalls cannot hold up the others; deliveries the worker holds when it stops are handed back.
 */
import { aDraft, startApp, TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { startReceiver, TestReceiver } from '../support/receiver';

const PER_RECEIVER = 2;

describe('webhook delivery pool', () => {
  let app: TestApp;
  let stalling: TestReceiver;
  let answering: TestReceiver;

  beforeEach(async () => {
    stalling = await startReceiver();
    answering = await startReceiver();
    stalling.answer({ hang: true });
  });
  afterEach(async () => {
    // The stalled receiver goes first: closing its connections ends the deliveries it holds at once.
    await stalling?.stop();
    await app?.stop();
    await answering?.stop();
  });

  /** The app, whose deliveries give up on a receiver after `timeoutMs`. */
  async function startPool(timeoutMs: number): Promise<void> {
    app = await startApp({ webhookConcurrency: 4, webhookReceiverConcurrency: PER_RECEIVER }, { webhookTimeoutMs: timeoutMs });
  }

  test('when one receiver stalls, another receiver still gets its events at once', async () => {
    // Far longer than the test, and within the 60 s lease: its two stalled deliveries are still in
    // flight when the receiver's count is checked (with 3 s, a CI run saw them time out and the next two sent).
    await startPool(30_000);
    const slow = await app.tenant({ webhookUrl: stalling.url });
    const healthy = await app.tenant({ webhookUrl: answering.url });
    for (let i = 0; i < 6; i += 1) await aDraft(slow);
    await eventually(() => stalling.received.length === PER_RECEIVER, 2000);

    for (let i = 0; i < 3; i += 1) await aDraft(healthy);

    const waited = await eventually(() => answering.received.length === 3, 1500);
    expect(waited).toBeLessThan(1500);
    // The stalled receiver has no more than its own slots, even with slots free.
    expect(stalling.received).toHaveLength(PER_RECEIVER);
  });

  test('when the worker stops, the deliveries it was holding are handed back, due at once', async () => {
    await startPool(3000);
    const slow = await app.tenant({ webhookUrl: stalling.url });
    for (let i = 0; i < 6; i += 1) await aDraft(slow);
    await eventually(() => stalling.received.length === PER_RECEIVER, 2000);

    await app.server.webhooks.stop();

    const rows: { lease_id: string | null; status: string; attempts: number }[] = await app.db.knex('webhook_deliveries').select('lease_id', 'status', 'attempts');
    expect(rows).toHaveLength(6);
    // The two that timed out wait for their retry; every other one is free for any process, no attempt counted.
    expect(rows.filter((row) => row.lease_id !== null)).toEqual([]);
    expect(rows.filter((row) => row.attempts === 0)).toHaveLength(6 - PER_RECEIVER);
  });
});
