/** Tenancy is enforced by the models: a query that does not say whose rows it may touch fails before any SQL is sent. */
import { acrossTenants, systemActor } from '../../server/auth/actor';
import { UnscopedQuery } from '../../server/db/tenant-model';
import { EmailMessage } from '../../server/email/queue';
import { Event } from '../../server/events/model';
import { Invoice, InvoiceItem } from '../../server/invoices/model';
import { Payment } from '../../server/payments/model';
import { WebhookAttempt, WebhookDelivery } from '../../server/webhooks/model';
import { aDraft, useApp } from '../support/app';

const ctx = useApp();

describe('tenant models', () => {
  test.each([
    ['Invoice', () => Invoice.query(ctx.app.db.knex)],
    ['Payment', () => Payment.query(ctx.app.db.knex).where('id', 1)],
    ['Event', () => Event.query(ctx.app.db.knex).insert({ type: 'invoice.created' } as never)],
    ['WebhookDelivery', () => WebhookDelivery.query(ctx.app.db.knex).patch({ status: 'failed' })],
    ['EmailMessage', () => EmailMessage.query(ctx.app.db.knex).delete()],
    ['InvoiceItem (a child, reached through its invoice)', () => InvoiceItem.query(ctx.app.db.knex)],
    ['WebhookAttempt (a child, reached through its delivery)', () => WebhookAttempt.query(ctx.app.db.knex)],
  ])('when %s is queried without a tenant, then it throws before reaching the database', async (_name, unscoped) => {
    await expect(unscoped()).rejects.toBeInstanceOf(UnscopedQuery);
  });

  test('when a tenant query names its actor, then it sees only that business and mode', async () => {
    const draft = await aDraft(ctx.t);
    const other = await ctx.app.tenant();
    const mine = systemActor('cli', { businessId: ctx.t.businessId, livemode: false });
    const theirs = systemActor('cli', { businessId: other.businessId, livemode: false });
    const live = systemActor('cli', { businessId: ctx.t.businessId, livemode: true });

    expect(await Invoice.of(mine, ctx.app.db.knex).findById(draft.id)).toMatchObject({ id: draft.id });
    expect(await Invoice.of(theirs, ctx.app.db.knex).findById(draft.id)).toBeUndefined();
    expect(await Invoice.of(live, ctx.app.db.knex).findById(draft.id)).toBeUndefined();
  });

  test('when a query reads across tenants, then it names its reason and children come through their parents', async () => {
    const draft = await aDraft(ctx.t);

    const invoice = await Invoice.acrossTenants(acrossTenants('payment page token lookup'), ctx.app.db.knex).findById(draft.id);
    const items = await InvoiceItem.ofInvoices([invoice!], ctx.app.db.knex);

    expect(items.map((item) => item.description)).toEqual(['Design', 'Hosting', 'Domain']);
  });
});
