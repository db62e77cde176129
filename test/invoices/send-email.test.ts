import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import pino from 'pino';
import { systemClock } from '../../server/clock';
import { createMailer } from '../../server/email/mailer';
import { EmailQueue } from '../../server/email/queue';
import { aDraft, eventsOf, startApp, Tenant, TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { pdfText } from '../support/pdf';
import { startSmtpServer, TestSmtp } from '../support/smtp';

/**
 * How long /send waits for the first attempt (its PDF, then SMTP) before answering `queued`. The
 * wait ends as soon as the attempt does, so the tests that expect `sent` give it far longer than
 * any machine's PDF and SMTP take (4 s was not always enough on a loaded 2-core machine). The tests
 * that expect `queued` hold the mail server's answer (smtp.holdAnswers) instead of outwaiting it,
 * on a server whose wait is short.
 */
const FIRST_ATTEMPT_WAIT_MS = 20_000;
const SHORT_FIRST_ATTEMPT_WAIT_MS = 3000;

const withKey = (key: string) => ({ headers: { 'Idempotency-Key': key } });

describe('sending an invoice by e-mail through a real SMTP server', () => {
  let smtp: TestSmtp;
  let app: TestApp;

  beforeAll(async () => {
    smtp = await startSmtpServer({ user: 'mailer', password: 's3cret' });
    app = await startApp({ smtpUrl: smtp.url, baseUrl: 'https://pay.example.com', emailFirstAttemptWaitMs: FIRST_ATTEMPT_WAIT_MS });
  });
  afterAll(async () => {
    await app?.stop();
    await smtp?.stop();
  });

  test('when a live draft is sent, then the client receives the number, total, due date and payment link, and the invoice as a PDF', async () => {
    const live = await app.tenant({ mode: 'live' });
    const draft = await aDraft(live);
    const link = (await live.api.post(`/invoices/${draft.id}/initiate-payment`)).body.payment_url;
    const client = (await live.api.get(`/clients/${draft.client_id}`)).body.client;

    const res = await live.api.post(`/invoices/${draft.id}/send`);

    expect(res.status).toBe(200);
    expect(res.body.email).toEqual({ to: client.email, status: 'sent' });
    const mail = await smtp.nextMessage({ to: client.email });
    expect(mail.rcptTo).toEqual([client.email]);
    expect(mail.subject).toContain('INV-000001');
    for (const part of [mail.text ?? '', String(mail.html)]) {
      expect(part).toContain('INV-000001');
      expect(part).toContain('$150.00');
      expect(part).toContain('2099-12-31');
      expect(part).toContain(link);
    }
    expect(mail.attachments.map(({ filename, contentType }) => ({ filename, contentType }))).toEqual([{ filename: 'INV-000001.pdf', contentType: 'application/pdf' }]);
    const pdf = await pdfText(mail.attachments[0].content);
    expect(pdf).toMatch(/Invoice number\s+INV-000001/);
    expect(pdf).toMatch(/Amount due\s+\$150\.00/);
    expect(pdf).toContain(client.name);
    expect(pdf).not.toContain('TEST MODE');
  });

  test('when a reminder goes out for a partly paid invoice, then it asks for what is left', async () => {
    const live = await app.tenant({ mode: 'live' });
    const draft = await aDraft(live);
    const to = (await live.api.get(`/clients/${draft.client_id}`)).body.client.email as string;
    await live.api.post(`/invoices/${draft.id}/send`);
    const first = await smtp.nextMessage({ to });
    // Arrange a live part-payment in the database: live payments arrive with a gateway, later.
    await app.db.knex('invoices').where('id', draft.id).update({ amount_paid: 10000, status: 'partial' });

    await live.api.post(`/invoices/${draft.id}/send`);

    const reminder = await smtp.nextMessage({ to });
    expect(first.text).toContain('$150.00');
    expect(reminder.text).toContain('$50.00');
    expect(reminder.text).not.toContain('$150.00');
  });

  test('when a test key sends, then nothing reaches the SMTP server and the response says suppressed', async () => {
    const t = await app.tenant({ mode: 'test' });
    const draft = await aDraft(t);
    const before = smtp.messages.length;

    const res = await t.api.post(`/invoices/${draft.id}/send`);

    expect(res.body.email.status).toBe('suppressed');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(smtp.messages.length).toBe(before);
  });

  /** Sends a live draft while the SMTP server refuses it, so its e-mail is left queued for a retry. */
  async function sendWhileRefused() {
    const live = await app.tenant({ mode: 'live' });
    const draft = await aDraft(live);
    smtp.refuseRecipients(true);
    try {
      return { live, draft, res: await live.api.post(`/invoices/${draft.id}/send`) };
    } finally {
      smtp.refuseRecipients(false);
    }
  }

  /** The invoice's queued e-mail is due now (its retry would come after about 10 s, or its lease end). */
  const bringForward = (invoiceId: number) => app.db.knex('email_messages').where('invoice_id', invoiceId).update({ next_attempt_at: '2000-01-01 00:00:00.000' });

  test('when the SMTP server refuses the message, then the invoice is sent, the e-mail queued, and a later sweep delivers it once', async () => {
    const { live, draft, res } = await sendWhileRefused();

    expect(res.status).toBe(200);
    expect(res.body.email.status).toBe('queued');
    expect(res.text).not.toContain(String(smtp.port));
    expect(res.body.invoice).toMatchObject({ status: 'sent', number: expect.stringMatching(/^INV-/) });
    await bringForward(draft.id);
    await app.server.services.emails.sweep();
    const mail = await smtp.nextMessage();
    expect(mail.subject).toContain(res.body.invoice.number);
    expect(mail.attachments.map((attachment) => attachment.filename)).toEqual([`${res.body.invoice.number}.pdf`]);
    expect((await eventsOf(app, live.businessId)).map((e) => e.type)).toEqual(['invoice.created', 'invoice.sent']);
    expect(await app.db.knex('email_messages').where('invoice_id', draft.id).first()).toMatchObject({ status: 'sent', attempts: 2 });
  });

  test('when a retry\'s PDF waits past its lease and another sweep takes the message over, then the message is sent once', async () => {
    // Arrange: a message queued after a refused first attempt, and a second queue over the same
    // database (another server process) whose PDFs wait at a gate, as behind a busy PDF thread
    const { draft, res: sent } = await sendWhileRefused();
    expect(sent.body.email.status).toBe('queued');
    const before = smtp.messages.length;
    const { documents, emails } = app.server.services;
    let pdfStarted!: () => void;
    const started = new Promise<void>((resolve) => (pdfStarted = resolve));
    let releasePdf!: () => void;
    const gate = new Promise<void>((resolve) => (releasePdf = resolve));
    const slow = new EmailQueue(app.db, createMailer({ smtpUrl: smtp.url, mailFrom: 'Invoices <invoices@example.com>', mailOutboxDir: '' }), pino({ level: 'silent' }), {
      clock: systemClock,
      leaseSeconds: 60,
      firstAttemptWaitMs: 0,
      messageIdHost: 'example.com',
      invoiceAttachments: async (actor, invoiceId) => {
        pdfStarted();
        await gate;
        return [{ ...(await documents.pdf(actor, invoiceId, { wait: true })), contentType: 'application/pdf' }];
      },
    });
    await bringForward(draft.id);

    // Act: the slow queue claims the message and waits for its PDF; its lease runs out meanwhile,
    // the other queue claims and sends the message, and then the slow PDF arrives
    const slowSweep = slow.sweep();
    await started;
    await bringForward(draft.id);
    await emails.sweep();
    releasePdf();
    await slowSweep;

    // Assert
    const mail = await smtp.nextMessage();
    expect(mail.subject).toContain(sent.body.invoice.number);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(smtp.messages.length).toBe(before + 1);
    expect(await app.db.knex('email_messages').where('invoice_id', draft.id).first()).toMatchObject({ status: 'sent', attempts: 2 });
  });

  test('when the mail server answers slowly, then the send answers queued at once, holds no database connection, and the e-mail arrives once', async () => {
    // A server whose /send waits briefly, and a mail server that answers only once the test lets it.
    const quick = await startApp({ smtpUrl: smtp.url, baseUrl: 'https://pay.example.com', emailFirstAttemptWaitMs: SHORT_FIRST_ATTEMPT_WAIT_MS });
    const release = smtp.holdAnswers();
    try {
      const live = await quick.tenant({ mode: 'live' });
      const draft = await aDraft(live);
      const to = (await live.api.get(`/clients/${draft.client_id}`)).body.client.email as string;
      const started = Date.now();
      const res = await live.api.post(`/invoices/${draft.id}/send`, undefined, { headers: { 'Idempotency-Key': `slow-${draft.id}` } });
      // The first attempt is still under way; the embedded database's one connection is free meanwhile.
      const read = await live.api.get(`/invoices/${draft.id}`);

      expect(res.status).toBe(200);
      expect(res.body.email.status).toBe('queued');
      expect(Date.now() - started).toBeLessThan(SHORT_FIRST_ATTEMPT_WAIT_MS + 2000);
      expect(read.body.invoice.status).toBe('sent');
      // A sweep while the first attempt holds its lease sends nothing more.
      await quick.server.services.emails.sweep();
      release();
      await smtp.nextMessage({ to });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(smtp.messages.filter((m) => m.rcptTo.includes(to))).toHaveLength(1);
      const replayed = await live.api.post(`/invoices/${draft.id}/send`, undefined, { headers: { 'Idempotency-Key': `slow-${draft.id}` } });
      expect(replayed.headers.get('idempotent-replayed')).toBe('true');
      expect((await eventsOf(quick, live.businessId)).filter((e) => e.type === 'invoice.sent')).toHaveLength(1);
    } finally {
      release();
      await quick.stop();
    }
  });

  test('when a send under an Idempotency-Key waits for the mail server, then a retry meanwhile gets 409, the response is stored once, and a replay returns exactly it', async () => {
    // Arrange: a mail server that answers only after the retry made during the first attempt
    const live = await app.tenant({ mode: 'live' });
    const draft = await aDraft(live);
    const key = `once-${draft.id}`;
    const responseWrites: string[] = [];
    const countResponseWrites = ({ sql }: { sql: string }) => {
      if (/^update\s+\W?idempotency_keys\W?\s/i.test(sql) && sql.includes('response_body')) responseWrites.push(sql);
    };
    app.db.knex.on('query', countResponseWrites);
    const release = smtp.holdAnswers();
    try {
      // Act
      const first = live.api.post(`/invoices/${draft.id}/send`, undefined, withKey(key));
      await eventually(async () => (await app.db.knex('invoices').where('id', draft.id).first()).status === 'sent', FIRST_ATTEMPT_WAIT_MS);
      const during = await live.api.post(`/invoices/${draft.id}/send`, undefined, withKey(key));
      release();
      const res = await first;
      const replay = await live.api.post(`/invoices/${draft.id}/send`, undefined, withKey(key));

      // Assert
      expect(during.status).toBe(409);
      expect(during.body.error).toBe('idempotency_key_in_use');
      expect(res.status).toBe(200);
      expect(res.body.email.status).toBe('sent');
      expect(replay.status).toBe(200);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.text).toBe(res.text);
      expect(responseWrites).toHaveLength(1);
      await smtp.nextMessage();
    } finally {
      release();
      app.db.knex.off('query', countResponseWrites);
    }
  });

  test('when a retry took over a send that stalled after its commit and stored its answer, then the stalled request answers that too, not 409', async () => {
    // Arrange: a send waiting for the mail server after its commit, whose claim a retry then took
    // over (the first request stalled past its lease) and completed with its own answer
    const live = await app.tenant({ mode: 'live' });
    const draft = await aDraft(live);
    const key = `taken-${draft.id}`;
    const release = smtp.holdAnswers();
    try {
      const first = live.api.post(`/invoices/${draft.id}/send`, undefined, withKey(key));
      await eventually(async () => (await app.db.knex('idempotency_keys').where({ idempotency_key: key }).first())?.state === 'committed', FIRST_ATTEMPT_WAIT_MS);
      const invoice = (await live.api.get(`/invoices/${draft.id}`)).body.invoice;
      const takenOver = JSON.stringify({ invoice, email: { to: 'client@example.com', status: 'queued' } });
      await app.db.knex('idempotency_keys').where({ idempotency_key: key }).update({ owner: randomUUID(), state: 'completed', response_status: 200, response_body: takenOver });

      // Act
      release();
      const res = await first;

      // Assert
      expect(res.status).toBe(200);
      expect(res.text).toBe(takenOver);
      await smtp.nextMessage();
    } finally {
      release();
    }
  });

  /**
   * A live send under `key`, its e-mail received, then its key left as a process leaves it that died
   * between the commit and the stored response, its lease run out. Resolves with the send's answer.
   */
  async function aSendThatDied(live: Tenant, invoiceId: number, key: string) {
    const first = await live.api.post(`/invoices/${invoiceId}/send`, undefined, withKey(key));
    await smtp.nextMessage();
    await app.db
      .knex('idempotency_keys')
      .where({ idempotency_key: key })
      .update({ state: 'committed', owner: randomUUID(), response_status: null, response_body: null, updated_at: '2000-01-01 00:00:00.000' });
    return first;
  }

  test('when the process died after a send committed and before its response was stored, then a retry sends nothing again and answers what was sent, and a replay returns exactly that', async () => {
    // Arrange: a send whose key is left as a process leaves it that died between the commit and
    // the stored response, its lease run out
    const live = await app.tenant({ mode: 'live' });
    const draft = await aDraft(live);
    const key = `died-${draft.id}`;
    const first = await aSendThatDied(live, draft.id, key);
    const before = smtp.messages.length;

    // Act
    const retry = await live.api.post(`/invoices/${draft.id}/send`, undefined, withKey(key));
    const replay = await live.api.post(`/invoices/${draft.id}/send`, undefined, withKey(key));

    // Assert
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual(first.body);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(retry.text);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(smtp.messages.length).toBe(before);
    expect((await eventsOf(app, live.businessId)).filter((e) => e.type === 'invoice.sent')).toHaveLength(1);
  });

  test('when a payment reminder is still queued as a retry of a died send comes, then the retry answers the invoice e-mail, sent, not the reminder', async () => {
    // Arrange: a send that died before its response was stored, then a reminder the mail server has not answered yet
    const live = await app.tenant({ mode: 'live' });
    await app.server.services.businesses.update(live.businessId, { reminder_offsets: [1] });
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const draft = await aDraft(live, { issue_date: new Date(Date.now() - 10 * 86_400_000).toISOString().slice(0, 10), due_date: yesterday });
    const key = `reminded-${draft.id}`;
    const first = await aSendThatDied(live, draft.id, key);
    const release = smtp.holdAnswers();
    try {
      expect(await app.server.services.reminders.sweep()).toBe(1);

      // Act
      const retry = await live.api.post(`/invoices/${draft.id}/send`, undefined, withKey(key));

      // Assert
      expect(first.body.email.status).toBe('sent');
      expect(retry.status).toBe(200);
      expect(retry.body.email).toEqual(first.body.email);
    } finally {
      release();
    }
    await smtp.nextMessage();
  });
});

describe('sending an invoice without SMTP_URL', () => {
  let app: TestApp;
  let outbox: string;

  beforeAll(async () => {
    outbox = fs.mkdtempSync(path.join(os.tmpdir(), 'invoicing-outbox-'));
    app = await startApp({ smtpUrl: undefined, mailOutboxDir: outbox, emailFirstAttemptWaitMs: FIRST_ATTEMPT_WAIT_MS });
  });
  afterAll(async () => {
    await app?.stop();
    fs.rmSync(outbox, { recursive: true, force: true });
  });

  test('when a live invoice is sent, then the message is written as an .eml file a mail program can open', async () => {
    const live = await app.tenant({ mode: 'live' });
    const draft = await aDraft(live);

    const res = await live.api.post(`/invoices/${draft.id}/send`);

    expect(res.body.email.status).toBe('sent');
    const files = fs.readdirSync(outbox).filter((f) => f.endsWith('.eml'));
    expect(files).toHaveLength(1);
    const mail = await simpleParser(fs.readFileSync(path.join(outbox, files[0])));
    expect(mail.subject).toContain('INV-000001');
    expect(mail.text).toContain('/pay/');
    expect(mail.attachments.map((attachment) => attachment.filename)).toEqual(['INV-000001.pdf']);
  });
});
