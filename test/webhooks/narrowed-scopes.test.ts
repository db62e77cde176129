/**
 * A key whose scopes are narrowed after an event was written: its retries of that event stop, and it
 * cannot replay it, since it could no longer read what the event carries.
 */
import { aDraft, useApp } from '../support/app';
import { eventually } from '../support/eventually';
import { startReceiver, TestReceiver } from '../support/receiver';

const ctx = useApp();

describe('a receiver whose scopes are narrowed', () => {
  let receiver: TestReceiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver?.stop());

  test('when a key loses the scope an event needs, then its pending delivery of that event fails at once, and replaying it is a 403', async () => {
    // Arrange: an invoice event whose first attempt failed, so its delivery waits for a retry
    receiver.answer({ status: 500 });
    const owner = await ctx.app.tenant();
    const partner = await ctx.app.tenant({ businessId: owner.businessId, scopes: ['invoices:read', 'expenses:read'], webhookUrl: receiver.url });
    await aDraft(owner);
    const pending = async () => (await partner.api.get('/webhook-deliveries')).body.data[0];
    await eventually(async () => (await pending())?.attempts === 1 && (await pending())?.last_status_code === 500);

    // Act
    await ctx.app.server.services.keys.update(partner.keyId, { scopes: ['expenses:read'] });

    // Assert
    const delivery = await pending();
    expect(delivery).toMatchObject({ event_type: 'invoice.created', status: 'failed', last_error: expect.stringContaining('invoices:read') });
    receiver.answer({ status: 200 });
    const replay = await partner.api.post(`/webhook-deliveries/${delivery.id}/replay`);
    expect(replay.status).toBe(403);
    expect(replay.body).toMatchObject({ error: 'forbidden', required_scope: 'invoices:read' });
    expect((await partner.api.get(`/webhook-deliveries/${delivery.id}`)).body.delivery.status).toBe('failed');
  });
});
