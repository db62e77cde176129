/**
 * Who receives an event: a key's webhook, an OAuth app and `GET /events` get an event only when the
 * credential could read what it carries (invoice, payment and credit note events: invoices:read;
 * contract events: contracts:read; a :write scope grants its :read).
 */
import { systemActor } from '../../server/auth/actor';
import { Scope } from '../../server/auth/scopes';
import { EventType } from '../../server/events/model';
import { TRIGGERS } from '../../cli/triggers';
import { useApp, Tenant } from '../support/app';
import { eventually } from '../support/eventually';
import { startReceiver, TestReceiver } from '../support/receiver';

const ctx = useApp();

/** Makes `type` happen for the tenant's business in test mode, through the services the API uses. */
async function fire(t: Tenant, type: EventType): Promise<void> {
  await TRIGGERS[type].fire(ctx.app.server.services, systemActor('cli', { businessId: t.businessId, livemode: false }));
}

/** The event types of the deliveries written for a receiver (`api_key_id` or `app_id`), oldest first. */
async function deliveredTypes(receiver: { api_key_id: number } | { app_id: number }): Promise<string[]> {
  const rows: { type: string }[] = await ctx.app.db
    .knex('webhook_deliveries')
    .join('events', 'events.id', 'webhook_deliveries.event_id')
    .where(Object.fromEntries(Object.entries(receiver).map(([column, id]) => [`webhook_deliveries.${column}`, id])))
    .orderBy('webhook_deliveries.id')
    .select('events.type');
  return rows.map((row) => row.type);
}

describe('event receivers and their scopes', () => {
  let receivers: TestReceiver[] = [];
  const aReceiver = async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    return receiver;
  };
  afterEach(async () => {
    await Promise.all(receivers.map((receiver) => receiver.stop()));
    receivers = [];
  });

  test('when an invoice event happens, then a key holding only expenses:read gets no delivery while an invoices:read key does', async () => {
    // Arrange
    const owner = await ctx.app.tenant();
    const expensesOnly = await aReceiver();
    const invoicesReader = await aReceiver();
    const narrow = await ctx.app.tenant({ businessId: owner.businessId, scopes: ['expenses:read'], webhookUrl: expensesOnly.url });
    const reader = await ctx.app.tenant({ businessId: owner.businessId, scopes: ['invoices:read'], webhookUrl: invoicesReader.url });

    // Act
    await fire(owner, 'invoice.created');
    await fire(owner, 'payment.received');

    // Assert: receivers are chosen when the event is written, so the rows say it all once committed
    await eventually(() => invoicesReader.received.some((r) => r.body.type === 'payment.received'));
    expect(await deliveredTypes({ api_key_id: narrow.keyId })).toEqual([]);
    expect(await deliveredTypes({ api_key_id: reader.keyId })).toEqual(['invoice.created', 'invoice.created', 'invoice.sent', 'payment.received']);
    expect(expensesOnly.received).toEqual([]);
  });

  test('when a contract is signed, then a key holding contracts:write receives it and a key holding invoices:write does not', async () => {
    const owner = await ctx.app.tenant();
    const contractsWriter = await ctx.app.tenant({ businessId: owner.businessId, scopes: ['contracts:write'], webhookUrl: (await aReceiver()).url });
    const invoicesWriter = await ctx.app.tenant({ businessId: owner.businessId, scopes: ['invoices:write'], webhookUrl: (await aReceiver()).url });

    await fire(owner, 'contract.signed');

    expect(await deliveredTypes({ api_key_id: contractsWriter.keyId })).toEqual(['contract.signed']);
    expect(await deliveredTypes({ api_key_id: invoicesWriter.keyId })).toEqual([]);
  });

  test('when an OAuth app is granted only contracts:read, then its webhook gets contract events but no invoice events', async () => {
    // Arrange: an app with a webhook, authorized by the business's owner for contracts:read only
    const owner = await ctx.app.tenant();
    const platform = await aReceiver();
    const app = await ctx.app.server.services.oauthApps.create({ name: 'Contracts Platform', redirectUris: ['https://platform.example/callback'], webhookUrl: platform.url });
    const person = await ctx.app.server.services.owners.create({ businessId: owner.businessId, email: `owner.${Date.now()}@acme.example`, password: 'a long owner password' });
    await ctx.app.server.services.oauthTokens.issueCode({
      appId: app.id,
      ownerId: person.id,
      businessId: owner.businessId,
      livemode: false,
      scopes: ['contracts:read'],
      redirectUri: 'https://platform.example/callback',
      codeChallenge: null,
    });

    // Act
    await fire(owner, 'invoice.created');
    await fire(owner, 'contract.signed');

    // Assert
    await eventually(() => platform.received.some((r) => r.body.type === 'contract.signed'));
    expect(await deliveredTypes({ app_id: app.id })).toEqual(['contract.signed']);
    expect(platform.received.map((r) => r.body.type)).toEqual(['contract.signed']);
  });

  test.each<[Scope, string[]]>([
    ['expenses:read', []],
    ['contracts:read', ['contract.signed']],
    ['invoices:read', ['invoice.created']],
    ['invoices:write', ['invoice.created']],
  ])('when a credential holding %s lists the events, then it sees only the types it may read', async (scope, expected) => {
    const owner = await ctx.app.tenant();
    const lister = await ctx.app.tenant({ businessId: owner.businessId, scopes: [scope] });
    await fire(owner, 'invoice.created');
    await fire(owner, 'contract.signed');

    const all = await lister.api.get('/events');
    const invoices = await lister.api.get('/events?type=invoice.created');

    expect(all.status).toBe(200);
    expect(all.body.data.map((e: { type: string }) => e.type)).toEqual(expected);
    expect(all.body.meta.total).toBe(expected.length);
    expect(invoices.status).toBe(200);
    expect(invoices.body.data.map((e: { type: string }) => e.type)).toEqual(expected.filter((type) => type === 'invoice.created'));
  });
});
