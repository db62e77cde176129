/**
 * Payment reminders (contract, "Collections on a clock" and its clarifications): a business's
 * reminder offsets (`business update --reminders`, days from the due date); each reminder an e-mail
 * to the client with the amount due and the payment link in live mode, none in test mode; once per
 * invoice and offset however many sweeps run; never for a paid or void invoice; not for a day already
 * past when the invoice was issued or the offsets were set; dated on the day it was due; shown in
 * `reminders_sent` and `invoice.reminder_sent`.
 */
import pino from 'pino';
import { frozenClock } from '../../server/clock';
import { migrateDown, migrateLatest } from '../../server/db/migrate';
import { InvoiceLinks } from '../../server/invoices/links';
import { CollectionSteps } from '../../server/invoices/collection-steps';
import { ReminderSweep } from '../../server/invoices/reminders';
import { aClient, anInvoice, eventsOf, startApp, Tenant, TestApp } from '../support/app';
import { runCli } from '../support/cli';
import { scratchDatabase, ScratchDatabase, testDriver } from '../support/database';
import { startSmtpServer, TestSmtp } from '../support/smtp';

/** A UTC date `days` from today's (the real time: live mode's). */
function daysFromToday(days: number): string {
  const d = new Date();
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

const midnight = (day: string) => `${day}T00:00:00.000Z`;

describe('payment reminders', () => {
  let smtp: TestSmtp;
  let scratch: ScratchDatabase;
  let app: TestApp;
  /** On MariaDB a second server over the same database (another process's pool); on SQLite a second sweeper on the app's handle (see overdue.test.ts). */
  let other: TestApp | undefined;
  let sweepers: ReminderSweep[];

  beforeAll(async () => {
    smtp = await startSmtpServer();
    scratch = await scratchDatabase({ migrated: true });
    app = await startApp({ smtpUrl: smtp.url, baseUrl: 'https://pay.example.com' }, { keepDatabase: scratch });
    if (testDriver() === 'mysql') other = await startApp({ smtpUrl: smtp.url, baseUrl: 'https://pay.example.com' }, { keepDatabase: scratch });
    const services = app.server.services;
    sweepers = [
      services.reminders,
      other?.server.services.reminders ?? new ReminderSweep(app.db, new CollectionSteps(app.db, services.outbox, services.emails, new InvoiceLinks(app.url)), pino({ level: 'silent' })),
    ];
  });
  afterAll(async () => {
    await other?.stop();
    await app?.stop();
    await scratch?.drop();
    await smtp?.stop();
  });

  const cli = (...args: string[]) => runCli(app.databaseUrl, args, {}, 20_000);
  const sweep = () => app.server.services.reminders.sweep();
  /** Both sweepers at once, twice each. */
  const sweepTogether = () => Promise.all([...sweepers, ...sweepers].map((sweeper) => sweeper.sweep()));

  async function setReminders(t: Tenant, offsets: string): Promise<void> {
    const res = await cli('business', 'update', String(t.businessId), '--reminders', offsets, '--json');
    if (res.code !== 0) throw new Error(`business update --reminders ${offsets}: ${res.stderr}`);
  }

  /** A sent invoice of the tenant with these dates, and its client. */
  async function aSentInvoice(t: Tenant, dates: { issue_date: string; due_date: string }): Promise<{ invoice: any; client: any }> {
    const client = (await t.api.post('/clients', aClient())).body.client;
    const draft = (await t.api.post('/invoices', anInvoice(client.id, dates))).body.invoice;
    const sent = await t.api.post(`/invoices/${draft.id}/send`);
    if (sent.status !== 200) throw new Error(`could not send: ${sent.status} ${sent.text}`);
    return { invoice: sent.body.invoice, client };
  }

  async function reminderEvents(businessId: number) {
    return (await eventsOf(app, businessId)).filter((event) => event.type === 'invoice.reminder_sent');
  }

  /** Each invoice's reminders as GET /invoices/{id} shows them. */
  async function remindersOf(t: Tenant, ...invoices: { id: number }[]) {
    return Promise.all(invoices.map(async (invoice) => (await t.api.get(`/invoices/${invoice.id}`)).body.invoice.reminders_sent));
  }

  /** A test-mode tenant whose clock is frozen at `at`, reminding on `offsets` set then. */
  async function aFrozenTenant(at: string, offsets: string): Promise<Tenant> {
    const t = await app.tenant();
    await app.server.services.clocks.freezeTestMode(t.businessId, new Date(at));
    await setReminders(t, offsets);
    return t;
  }

  const moveClock = (t: Tenant, to: string) => app.server.services.clocks.freezeTestMode(t.businessId, new Date(to));

  test('when offsets are set with business update --reminders, then business show and GET /business list them; none clears them; a malformed list is a usage error', async () => {
    // Arrange
    const t = await app.tenant();

    // Act
    const set = await cli('business', 'update', String(t.businessId), '--reminders', '7,-3,1', '--json');
    const shown = await cli('business', 'show', String(t.businessId));
    const read = await t.api.get('/business');
    const cleared = await cli('business', 'update', String(t.businessId), '--reminders', 'none', '--json');
    const notNumbers = await cli('business', 'update', String(t.businessId), '--reminders', '1,soon');
    const tooFar = await cli('business', 'update', String(t.businessId), '--reminders', '-3,400');
    const twice = await cli('business', 'update', String(t.businessId), '--reminders', '1,1');

    // Assert
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout).reminder_offsets).toEqual([-3, 1, 7]);
    expect(shown.stdout).toContain('\nreminders: -3, 1, 7 days from the due date\n');
    expect(read.body.business.reminder_offsets).toEqual([-3, 1, 7]);
    expect(JSON.parse(cleared.stdout).reminder_offsets).toEqual([]);
    expect((await t.api.get('/business')).body.business.reminder_offsets).toEqual([]);
    expect(notNumbers.code).toBe(2);
    expect(notNumbers.stderr).toContain('--reminders "1,soon": must be whole days relative to the due date, comma-separated (e.g. -3,1,7), or none');
    expect(tooFar.code).toBe(2);
    expect(tooFar.stderr).toContain('--reminders');
    expect(tooFar.stderr).toContain('each offset must be between -365 and 365 days');
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('an offset is given twice');
  });

  test('when a live invoice reaches a reminder day, then its client gets an e-mail with the amount due and the payment link, before and after the due date', async () => {
    // Arrange: one invoice due yesterday (offset 1 is today), one due in three days (offset -3 is today)
    const live = await app.tenant({ mode: 'live' });
    await setReminders(live, '-3,1');
    const late = await aSentInvoice(live, { issue_date: daysFromToday(-20), due_date: daysFromToday(-1) });
    const soon = await aSentInvoice(live, { issue_date: daysFromToday(-1), due_date: daysFromToday(3) });
    // A live part-payment arrives through a gateway: arranged in the database.
    await app.db.knex('invoices').where('id', late.invoice.id).update({ amount_paid: 10000, status: 'partial' });
    const lateLink = late.invoice.payment_url as string;
    // The invoices themselves, e-mailed by /send.
    await Promise.all([late, soon].map(({ client }) => smtp.nextMessage({ to: client.email })));

    // Act
    const sent = await sweep();

    // Assert
    expect(sent).toBe(2);
    const overdueMail = await smtp.nextMessage({ to: late.client.email });
    expect(overdueMail.subject).toBe(`Reminder: invoice ${late.invoice.number} from Test Business is overdue since ${daysFromToday(-1)}`);
    for (const part of [overdueMail.text ?? '', String(overdueMail.html)]) {
      expect(part).toContain('$50.00');
      expect(part).toContain(lateLink);
      expect(part).toContain(`is overdue since ${daysFromToday(-1)}`);
    }
    expect(overdueMail.attachments).toEqual([]);
    const dueMail = await smtp.nextMessage({ to: soon.client.email });
    expect(dueMail.text).toContain(`is due on ${daysFromToday(3)}`);
    expect(dueMail.text).toContain('$150.00');
    expect(dueMail.text).toContain(soon.invoice.payment_url);
    expect(await remindersOf(live, late.invoice, soon.invoice)).toEqual([
      [{ offset_days: 1, sent_at: midnight(daysFromToday(0)) }],
      [{ offset_days: -3, sent_at: midnight(daysFromToday(0)) }],
    ]);
  });

  test('when a test-mode reminder comes due, then no e-mail is written: it shows in reminders_sent, the list and invoice.reminder_sent only', async () => {
    // Arrange
    const t = await aFrozenTenant('2031-03-01T09:00:00.000Z', '1');
    const { invoice } = await aSentInvoice(t, { issue_date: '2031-03-01', due_date: '2031-03-10' });
    await moveClock(t, '2031-03-11T08:00:00.000Z');

    // Act
    await sweep();

    // Assert
    const reminder = { offset_days: 1, sent_at: '2031-03-11T00:00:00.000Z' };
    expect((await t.api.get(`/invoices/${invoice.id}`)).body.invoice.reminders_sent).toEqual([reminder]);
    expect((await t.api.get('/invoices')).body.data.find((row: { id: number }) => row.id === invoice.id).reminders_sent).toEqual([reminder]);
    const events = await reminderEvents(t.businessId);
    expect(events).toHaveLength(1);
    expect(events[0].data.reminder).toEqual(reminder);
    expect(events[0].data.invoice).toMatchObject({ id: invoice.id, amount_due: 150, overdue: true, reminders_sent: [reminder] });
    const logged = await t.api.get('/events?type=invoice.reminder_sent');
    expect(logged.status).toBe(200);
    expect(logged.body.data).toHaveLength(1);
    expect(await app.db.knex('email_messages').where('business_id', t.businessId)).toEqual([]);
  });

  test('when two server processes sweep at once after days without a sweep, then each reminder goes out once per invoice and offset, dated on the day it was due', async () => {
    // Arrange
    const t = await aFrozenTenant('2031-03-01T09:00:00.000Z', '-3,1,7');
    const invoices = await Promise.all([1, 2, 3].map(async () => (await aSentInvoice(t, { issue_date: '2031-03-01', due_date: '2031-03-10' })).invoice));
    await moveClock(t, '2031-03-20T15:00:00.000Z');

    // Act
    await sweepTogether();
    await sweepTogether();

    // Assert
    const expected = [
      { offset_days: -3, sent_at: '2031-03-07T00:00:00.000Z' },
      { offset_days: 1, sent_at: '2031-03-11T00:00:00.000Z' },
      { offset_days: 7, sent_at: '2031-03-17T00:00:00.000Z' },
    ];
    expect(await remindersOf(t, ...invoices)).toEqual([expected, expected, expected]);
    const events = await reminderEvents(t.businessId);
    expect(events).toHaveLength(9);
    const key = (id: number, reminder: { offset_days: number; sent_at: string }) => `${id} ${reminder.offset_days} ${reminder.sent_at}`;
    expect(events.map((event) => key(event.data.invoice.id, event.data.reminder)).sort()).toEqual(invoices.flatMap((invoice) => expected.map((reminder) => key(invoice.id, reminder))).sort());
    // Each event shows the invoice as it was on the reminder's day: before the due date it was not overdue.
    const beforeDue = events.filter((event) => event.data.reminder.offset_days === -3);
    expect(beforeDue.map((event) => event.data.invoice.overdue)).toEqual([false, false, false]);
    expect(events.filter((event) => event.data.reminder.offset_days === 7).map((event) => event.data.invoice.overdue)).toEqual([true, true, true]);
  });

  test('when an invoice is paid, voided or still a draft, then it gets no reminder; a partly paid one does, and one paid after a reminder gets no more', async () => {
    // Arrange
    const t = await aFrozenTenant('2031-03-01T09:00:00.000Z', '-3,1');
    const dates = { issue_date: '2031-03-01', due_date: '2031-03-10' };
    const paid = (await aSentInvoice(t, dates)).invoice;
    await t.api.post(`/invoices/${paid.id}/simulate-payment`, {});
    const voided = (await aSentInvoice(t, dates)).invoice;
    expect((await t.api.post(`/invoices/${voided.id}/void`, {})).status).toBe(200);
    const partlyPaid = (await aSentInvoice(t, dates)).invoice;
    await t.api.post(`/invoices/${partlyPaid.id}/simulate-payment`, { amount: 50 });
    const paidLater = (await aSentInvoice(t, dates)).invoice;
    const client = (await t.api.post('/clients', aClient())).body.client;
    const draft = (await t.api.post('/invoices', anInvoice(client.id, dates))).body.invoice;
    await moveClock(t, '2031-03-08T00:00:00.000Z');
    await sweep();
    await t.api.post(`/invoices/${paidLater.id}/simulate-payment`, {});

    // Act
    await moveClock(t, '2031-03-12T00:00:00.000Z');
    await sweep();

    // Assert
    const [ofPaid, ofVoided, ofPartlyPaid, ofPaidLater, ofDraft] = await remindersOf(t, paid, voided, partlyPaid, paidLater, draft);
    expect(ofPaid).toEqual([]);
    expect(ofVoided).toEqual([]);
    expect(ofDraft).toEqual([]);
    expect(ofPartlyPaid.map((reminder: { offset_days: number }) => reminder.offset_days)).toEqual([-3, 1]);
    expect(ofPaidLater.map((reminder: { offset_days: number }) => reminder.offset_days)).toEqual([-3]);
    const events = await reminderEvents(t.businessId);
    expect(events.map((event) => [event.data.invoice.id, event.data.reminder.offset_days])).toEqual([
      [partlyPaid.id, -3],
      [paidLater.id, -3],
      [partlyPaid.id, 1],
    ]);
    expect(events[0].data.invoice.amount_due).toBe(100);
  });

  test('when a reminder day had passed when the invoice was issued, or when the offsets were set, then that reminder never goes out; later ones do', async () => {
    // Arrange: an invoice issued two days before its due date (offset -3 is before its issue date),
    // and one due before the business set its offsets (offsets -3 and 1 had passed then)
    const t = await aFrozenTenant('2031-03-01T09:00:00.000Z', '-3,1');
    const issuedLate = (await aSentInvoice(t, { issue_date: '2031-03-08', due_date: '2031-03-10' })).invoice;
    const later = await app.tenant();
    await app.server.services.clocks.freezeTestMode(later.businessId, new Date('2031-03-01T09:00:00.000Z'));
    const beforeSetting = (await aSentInvoice(later, { issue_date: '2031-03-01', due_date: '2031-03-10' })).invoice;
    await moveClock(later, '2031-03-12T10:00:00.000Z');
    await setReminders(later, '-3,1,2,7');

    // Act
    await moveClock(t, '2031-03-31T00:00:00.000Z');
    await moveClock(later, '2031-03-31T00:00:00.000Z');
    await sweep();
    await sweep();

    // Assert
    const [ofIssuedLate] = await remindersOf(t, issuedLate);
    const [ofBeforeSetting] = await remindersOf(later, beforeSetting);
    expect(ofIssuedLate).toEqual([{ offset_days: 1, sent_at: '2031-03-11T00:00:00.000Z' }]);
    // Offset 2 falls on the day the offsets were set: not before it, so it goes out.
    expect(ofBeforeSetting).toEqual([
      { offset_days: 2, sent_at: '2031-03-12T00:00:00.000Z' },
      { offset_days: 7, sent_at: '2031-03-17T00:00:00.000Z' },
    ]);
  });

  test('when an invoice dated earlier is sent after some of its reminder days, then those reminders never go out; later ones do', async () => {
    // Arrange: offsets set on 03-01; an invoice dated 03-01, due 03-05, only sent on 03-15 (offsets 1 and 7 had passed then)
    const t = await aFrozenTenant('2031-03-01T09:00:00.000Z', '1,7,20');
    await moveClock(t, '2031-03-15T09:00:00.000Z');
    const { invoice } = await aSentInvoice(t, { issue_date: '2031-03-01', due_date: '2031-03-05' });
    await moveClock(t, '2031-03-26T00:00:00.000Z');

    // Act
    await sweep();

    // Assert
    expect((await t.api.get(`/invoices/${invoice.id}`)).body.invoice.reminders_sent).toEqual([{ offset_days: 20, sent_at: '2031-03-25T00:00:00.000Z' }]);
    expect((await reminderEvents(t.businessId)).map((event) => event.data.reminder.offset_days)).toEqual([20]);
  });

  test('when one reminder of a sweep cannot be recorded, then the others of its transaction are sent all the same, and the next sweep sends it once it can be', async () => {
    // Arrange: three live invoices due yesterday; the second one's client is moved to another business (its e-mail cannot be addressed)
    const live = await app.tenant({ mode: 'live' });
    const elsewhere = await app.tenant({ mode: 'live' });
    await setReminders(live, '1');
    const sent: { invoice: any; client: any }[] = [];
    for (let i = 0; i < 3; i++) sent.push(await aSentInvoice(live, { issue_date: daysFromToday(-10), due_date: daysFromToday(-1) }));
    await app.db.knex('clients').where('id', sent[1].client.id).update({ business_id: elsewhere.businessId });

    // Act
    await sweep();
    const whileBroken = await remindersOf(live, ...sent.map(({ invoice }) => invoice));
    await app.db.knex('clients').where('id', sent[1].client.id).update({ business_id: live.businessId });
    await sweep();

    // Assert
    const today = [{ offset_days: 1, sent_at: midnight(daysFromToday(0)) }];
    expect(whileBroken).toEqual([today, [], today]);
    expect(await remindersOf(live, ...sent.map(({ invoice }) => invoice))).toEqual([today, today, today]);
    expect((await reminderEvents(live.businessId)).map((event) => event.data.invoice.id)).toEqual([sent[0].invoice.id, sent[2].invoice.id, sent[1].invoice.id]);
  });

  test('when the live sweep runs days late, then each reminder missed goes out once, dated on the day it was due', async () => {
    // Arrange: a sweeper whose real time is five days ahead, as after downtime
    const live = await app.tenant({ mode: 'live' });
    await setReminders(live, '1,3');
    const { invoice, client } = await aSentInvoice(live, { issue_date: daysFromToday(-10), due_date: daysFromToday(-1) });
    await smtp.nextMessage({ to: client.email });
    const late = new ReminderSweep(app.db, new CollectionSteps(app.db, app.server.services.outbox, app.server.services.emails, new InvoiceLinks(app.url)), pino({ level: 'silent' }), {
      clock: frozenClock(new Date(`${daysFromToday(5)}T06:00:00.000Z`)),
    });

    // Act
    await late.sweep();
    const again = await late.sweep();

    // Assert
    expect(again).toBe(0);
    expect((await live.api.get(`/invoices/${invoice.id}`)).body.invoice.reminders_sent).toEqual([
      { offset_days: 1, sent_at: midnight(daysFromToday(0)) },
      { offset_days: 3, sent_at: midnight(daysFromToday(2)) },
    ]);
    const mails = [await smtp.nextMessage({ to: client.email }), await smtp.nextMessage({ to: client.email })];
    expect(mails.map((mail) => mail.subject).every((subject) => (subject ?? '').includes(`is overdue since ${daysFromToday(-1)}`))).toBe(true);
  });

  test('when the follow-ups of a test mode run, then every reminder due by then is sent in day order, each dated on its day, and a second run sends nothing', async () => {
    // Arrange
    const t = await aFrozenTenant('2031-03-01T09:00:00.000Z', '-3,7');
    const first = (await aSentInvoice(t, { issue_date: '2031-03-01', due_date: '2031-03-12' })).invoice;
    const second = (await aSentInvoice(t, { issue_date: '2031-03-01', due_date: '2031-03-10' })).invoice;
    const tenancy = { businessId: t.businessId, livemode: false };

    // Act
    await app.server.services.followUps.runDue(tenancy, new Date('2031-03-17T00:00:00.000Z'));
    await app.server.services.followUps.runDue(tenancy, new Date('2031-03-17T00:00:00.000Z'));

    // Assert: -3 of the second (03-07), -3 of the first (03-09), 7 of the second (03-17); 7 of the first (03-19) is not due yet
    const events = await reminderEvents(t.businessId);
    expect(events.map((event) => [event.data.invoice.id, event.data.reminder.sent_at])).toEqual([
      [second.id, '2031-03-07T00:00:00.000Z'],
      [first.id, '2031-03-09T00:00:00.000Z'],
      [second.id, '2031-03-17T00:00:00.000Z'],
    ]);
  });
});

describe('payment reminders at the upgrade', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app?.stop());

  test('when an invoice was under way before the upgrade, then offsets set after it remind of no day already past, only of days to come', async () => {
    // Arrange: an invoice due 2031-03-10, then the database as it was before reminders
    const t = await app.tenant();
    await app.server.services.clocks.freezeTestMode(t.businessId, new Date('2031-03-01T09:00:00.000Z'));
    const client = (await t.api.post('/clients', aClient())).body.client;
    const draft = (await t.api.post('/invoices', anInvoice(client.id, { issue_date: '2031-03-01', due_date: '2031-03-10' }))).body.invoice;
    await t.api.post(`/invoices/${draft.id}/send`);
    await migrateDown(app.db.knex, '20261204110000_add_reminders');

    // Act: upgraded on 2031-03-12, offsets set then, swept later
    await migrateLatest(app.db.knex);
    await app.server.services.clocks.freezeTestMode(t.businessId, new Date('2031-03-12T09:00:00.000Z'));
    const set = await runCli(app.databaseUrl, ['business', 'update', String(t.businessId), '--reminders', '-3,1,7'], {}, 20_000);
    await app.server.services.clocks.freezeTestMode(t.businessId, new Date('2031-03-20T00:00:00.000Z'));
    await app.server.services.reminders.sweep();

    // Assert
    expect(set.code).toBe(0);
    expect((await t.api.get(`/invoices/${draft.id}`)).body.invoice.reminders_sent).toEqual([{ offset_days: 7, sent_at: '2031-03-17T00:00:00.000Z' }]);
  });
});
