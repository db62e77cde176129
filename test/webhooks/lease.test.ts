/**
 * A delivery counts an attempt only when one is made: a delivery that waited for a slot until its
 * lease was too short to send under is handed back, not counted, so a backlog does not eat into
 * its five retries.
 */
import { aDraft, startApp, TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { startReceiver, TestReceiver } from '../support/receiver';

describe('webhook delivery leases', () => {
  let app: TestApp;
  let stalling: TestReceiver;

  beforeEach(async () => {
    stalling = await startReceiver();
    stalling.answer({ hang: true });
    // One slot: each delivery waits out the one before it (2 s timeout), leaving less lease than an attempt needs.
    app = await startApp({ webhookConcurrency: 1, webhookReceiverConcurrency: 1, webhookLeaseSeconds: 5 }, { webhookTimeoutMs: 2000 });
  });
  afterEach(async () => {
    await app?.stop();
    await stalling?.stop();
  });

  test('when deliveries wait for a slot until their lease is too short to send, then they are handed back and no attempt is counted for them', async () => {
    // Arrange
    const t = await app.tenant({ webhookUrl: stalling.url });
    for (let i = 0; i < 3; i += 1) await aDraft(t);

    // Act: the first attempt times out; the deliveries that waited behind it find too little lease left
    await eventually(async () => Number((await app.db.knex('webhook_attempts').count({ n: '*' }).first())?.n) >= 1, 15_000);
    await app.server.webhooks.stop();

    // Assert: every counted attempt is one that was made, and no lease is left behind
    const deliveries: { id: number; attempts: number; lease_id: string | null }[] = await app.db.knex('webhook_deliveries').select('id', 'attempts', 'lease_id').orderBy('id');
    const made: { delivery_id: number; n: number }[] = await app.db.knex('webhook_attempts').select('delivery_id').count({ n: '*' }).groupBy('delivery_id');
    const madeBy = new Map(made.map((row) => [row.delivery_id, Number(row.n)]));
    expect(deliveries).toHaveLength(3);
    expect(deliveries.map((d) => ({ id: d.id, attempts: d.attempts, lease_id: d.lease_id }))).toEqual(deliveries.map((d) => ({ id: d.id, attempts: madeBy.get(d.id) ?? 0, lease_id: null })));
  });
});
