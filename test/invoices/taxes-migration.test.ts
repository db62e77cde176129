/**
 * 20261129100200 at the upgrade (contract, "Wave 3 clarifications"): issued invoices take their
 * seller and buyer snapshot from the values at migration time and no tax; drafts keep showing the
 * current values.
 */
import { migrateDown, migrateLatest } from '../../server/db/migrate';
import { aClient, anInvoice, startApp, TestApp } from '../support/app';

const MIGRATION = '20261129100200_add_taxes_and_parties_to_invoices';
let app: TestApp;

beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.stop());

describe('invoices at the upgrade to taxes', () => {
  test('when issued invoices from before taxes are migrated, then they get both parties as they are then and no tax', async () => {
    // Arrange: an issued invoice and a draft, then the database as it was before the migration
    const t = await app.tenant();
    await app.server.services.businesses.update(t.businessId, { legal_name: 'Upgrade GmbH', city: 'Hamburg' });
    const client = (await t.api.post('/clients', aClient({ name: 'Old Buyer', company: 'Old Co', address: 'Street 1' }))).body.client;
    const issued = (await t.api.post('/invoices', anInvoice(client.id))).body.invoice;
    await t.api.post(`/invoices/${issued.id}/initiate-payment`, {});
    const draft = (await t.api.post('/invoices', anInvoice(client.id))).body.invoice;
    await migrateDown(app.db.knex, MIGRATION);

    // Act
    await migrateLatest(app.db.knex);
    await t.api.patch(`/clients/${client.id}`, { name: 'Renamed Buyer' });

    // Assert
    const upgraded = (await t.api.get(`/invoices/${issued.id}`)).body.invoice;
    expect(upgraded).toMatchObject({ subtotal: 150, total_excluding_tax: 150, total_tax: 0, rounding_amount: 0, total: 150, tax_breakdown: [], tax_exempt: 'none' });
    expect(upgraded.items.map((item: { amount_excluding_tax: number }) => item.amount_excluding_tax)).toEqual([100, 30, 20]);
    expect(upgraded.seller).toMatchObject({ legal_name: 'Upgrade GmbH', city: 'Hamburg' });
    expect(upgraded.buyer).toMatchObject({ name: 'Old Buyer', company: 'Old Co', address: 'Street 1', tax_exempt: 'none' });
    expect((await t.api.get(`/invoices/${draft.id}`)).body.invoice.buyer.name).toBe('Renamed Buyer');
  });
});
