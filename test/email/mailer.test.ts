import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { createMailer, EmailFailed, OutgoingEmail } from '../../server/email/mailer';
import { formatMoney, InvoiceEmailInput, invoiceEmail } from '../../server/invoices/email';
import { startSmtpServer, TestSmtp } from '../support/smtp';

const FROM = 'Invoicing <invoices@example.test>';

function anEmail(overrides: Partial<OutgoingEmail> = {}): OutgoingEmail {
  return { to: 'client@example.com', subject: 'Invoice INV-000001 from Acme', text: 'Plain body', html: '<p>HTML body</p>', ...overrides };
}

function anInvoice(overrides: Partial<InvoiceEmailInput> = {}): InvoiceEmailInput {
  return {
    businessName: 'Acme Ltd',
    clientName: 'Jane Client',
    clientEmail: 'jane@example.com',
    number: 'INV-000001',
    amountDue: '$1,234.50',
    dueDate: '2026-12-31',
    paymentUrl: 'http://localhost:3000/pay/tok_123?x=1&y=2',
    notes: null,
    ...overrides,
  };
}

/** A port on which nothing listens: bound once to get a free number, then released. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

async function sendFailure(promise: Promise<unknown>): Promise<EmailFailed> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EmailFailed);
  return err as EmailFailed;
}

describe('createMailer with an SMTP server', () => {
  let smtp: TestSmtp;
  beforeAll(async () => {
    smtp = await startSmtpServer({ user: 'mailer', password: 's3cret:/@pass' });
  });
  afterAll(() => smtp.stop());
  afterEach(() => smtp.refuseRecipients(false));

  test('when a message is sent, then the server receives it for the recipient with subject, text and HTML', async () => {
    // Arrange
    const mailer = createMailer({ smtpUrl: smtp.url, mailFrom: FROM, mailOutboxDir: 'unused' });
    // Act
    const delivery = await mailer.send(anEmail());
    mailer.close();
    // Assert
    expect(delivery).toEqual({ status: 'sent', messageId: expect.stringMatching(/^<.+@.+>$/) });
    const received = await smtp.nextMessage();
    expect(received.rcptTo).toEqual(['client@example.com']);
    expect(received.messageId).toBe(delivery.messageId);
    expect(received.from?.value[0].address).toBe('invoices@example.test');
    expect(received.subject).toBe('Invoice INV-000001 from Acme');
    expect(received.text?.trim()).toBe('Plain body');
    expect(received.html).toContain('<p>HTML body</p>');
  });

  test('when the SMTP credentials are wrong, then sending fails with EmailFailed', async () => {
    // Arrange
    const mailer = createMailer({ smtpUrl: `smtp://mailer:wrong@127.0.0.1:${smtp.port}`, mailFrom: FROM, mailOutboxDir: 'unused' });
    // Act
    const err = await sendFailure(mailer.send(anEmail()));
    mailer.close();
    // Assert
    expect(err.name).toBe('EmailFailed');
    expect(err.reason).toMatch(/535/);
  });

  test('when the client does not log in to a server that requires it, then sending fails with EmailFailed', async () => {
    // Arrange
    const mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${smtp.port}`, mailFrom: FROM, mailOutboxDir: 'unused' });
    // Act
    const err = await sendFailure(mailer.send(anEmail()));
    mailer.close();
    // Assert
    expect(err.name).toBe('EmailFailed');
  });

  test('when the server refuses the recipient, then sending fails with EmailFailed', async () => {
    // Arrange
    const mailer = createMailer({ smtpUrl: smtp.url, mailFrom: FROM, mailOutboxDir: 'unused' });
    smtp.refuseRecipients(true);
    const before = smtp.messages.length;
    // Act
    const err = await sendFailure(mailer.send(anEmail()));
    mailer.close();
    // Assert
    expect(err.name).toBe('EmailFailed');
    expect(err.reason).toMatch(/550/);
    expect(smtp.messages).toHaveLength(before);
  });

  test('when nothing listens on the SMTP port, then sending fails quickly with a one-line EmailFailed', async () => {
    // Arrange
    const port = await closedPort();
    const mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${port}`, mailFrom: FROM, mailOutboxDir: 'unused' });
    const started = Date.now();
    // Act
    const err = await sendFailure(mailer.send(anEmail()));
    mailer.close();
    // Assert
    expect(Date.now() - started).toBeLessThan(2000);
    expect(err.name).toBe('EmailFailed');
    expect(err.reason).toBe(`connect ECONNREFUSED 127.0.0.1:${port}`);
  });
});

describe('createMailer without an SMTP server', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'outbox-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  test('when an invoice e-mail is sent, then a readable .eml file with the payment link appears in the outbox folder', async () => {
    // Arrange
    const outbox = path.join(dir, 'nested', 'outbox');
    const mailer = createMailer({ mailFrom: FROM, mailOutboxDir: outbox });
    const message = invoiceEmail(anInvoice());
    // Act
    const delivery = await mailer.send(message);
    mailer.close();
    // Assert
    expect(delivery).toMatchObject({ status: 'written', messageId: expect.any(String) });
    if (delivery.status !== 'written') throw new Error('expected a written e-mail');
    expect(await readdir(outbox)).toEqual([path.basename(delivery.file)]);
    expect(delivery.file).toMatch(/\.eml$/);
    const parsed = await simpleParser(await readFile(delivery.file));
    expect(parsed.messageId).toBe(delivery.messageId);
    expect(parsed.to).toMatchObject({ value: [{ address: 'jane@example.com' }] });
    expect(parsed.from?.value[0].address).toBe('invoices@example.test');
    expect(parsed.subject).toBe('Invoice INV-000001 from Acme Ltd');
    expect(parsed.text).toContain('http://localhost:3000/pay/tok_123?x=1&y=2');
    expect(parsed.html).toContain('href="http://localhost:3000/pay/tok_123?x=1&amp;y=2"');
  });

  test('when two e-mails are written at once, then each gets its own file', async () => {
    // Arrange
    const mailer = createMailer({ mailFrom: FROM, mailOutboxDir: dir });
    // Act
    const [a, b] = await Promise.all([mailer.send(anEmail()), mailer.send(anEmail())]);
    // Assert
    expect(a.status === 'written' && b.status === 'written' && a.file !== b.file).toBe(true);
    expect(await readdir(dir)).toHaveLength(2);
  });
});

describe('invoiceEmail', () => {
  test('when built, then both parts carry the number, the amount due, the due date and the payment link', () => {
    // Arrange
    const input = anInvoice();
    // Act
    const email = invoiceEmail(input);
    // Assert
    expect(email.to).toBe('jane@example.com');
    expect(email.subject).toBe('Invoice INV-000001 from Acme Ltd');
    for (const fact of ['INV-000001', '$1,234.50', '2026-12-31']) {
      expect(email.text).toContain(fact);
      expect(email.html).toContain(fact);
    }
    expect(email.text).toContain(input.paymentUrl);
    expect(email.html).toMatch(/<a href="http:\/\/localhost:3000\/pay\/tok_123\?x=1&amp;y=2"[^>]*>Pay this invoice<\/a>/);
    expect(email.html).not.toMatch(/<img/i);
  });

  test('when names and notes contain markup, then the HTML part shows them as text and the text part keeps them', () => {
    // Arrange
    const input = anInvoice({
      businessName: 'Tom & Jerry\'s "Shop"',
      clientName: '<script>alert(1)</script>',
      notes: 'Line <b>one</b>\nLine two',
    });
    // Act
    const email = invoiceEmail(input);
    // Assert
    expect(email.html).not.toContain('<script>');
    expect(email.html).not.toContain('<b>one</b>');
    expect(email.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(email.html).toContain('Tom &amp; Jerry&#39;s &quot;Shop&quot;');
    expect(email.html).toContain('Line &lt;b&gt;one&lt;/b&gt;<br>Line two');
    expect(email.text).toContain('Line <b>one</b>\nLine two');
    expect(email.text).toContain('Hello <script>alert(1)</script>,');
  });

  test('when a name or a note holds a right-to-left override, then the HTML part isolates it so it cannot reorder the sentence around it', () => {
    // Arrange: U+202E would otherwise display the rest of the paragraph right to left.
    const input = anInvoice({ clientName: 'Eve \u202Egnp.exe', notes: 'Pay by \u202E2099-12-31\nThanks' });
    // Act
    const email = invoiceEmail(input);
    // Assert
    expect(email.html).toContain('<p>Hello <bdi>Eve \u202Egnp.exe</bdi>,</p>');
    expect(email.html).toContain('<bdi>Pay by \u202E2099-12-31</bdi><br>Thanks');
    expect(email.html).toContain('<title>Invoice INV-000001</title>');
  });

  test('when there are no notes, then no notes section is shown', () => {
    // Act
    const email = invoiceEmail(anInvoice({ notes: null }));
    // Assert
    expect(email.text).not.toContain('Notes');
    expect(email.html).not.toContain('Notes');
  });

  test('when the payment link is not http(s), then building the e-mail is refused', () => {
    // Act / Assert
    expect(() => invoiceEmail(anInvoice({ paymentUrl: 'javascript:alert(1)' }))).toThrow(/http\(s\)/);
  });
});

describe('formatMoney', () => {
  test.each([
    [123450, 'USD', '$1,234.50'],
    [5, 'USD', '$0.05'],
    [-123450, 'USD', '-$1,234.50'],
    [1235, 'JPY', '¥1,235'],
    [1234567, 'KWD', 'KWD 1,234.567'],
    [999_999_999_999, 'USD', '$9,999,999,999.99'],
  ])('%d minor units of %s read %s', (minor, currency, expected) => {
    // Act / Assert (Intl puts a no-break space after a currency code)
    expect(formatMoney(minor, currency).replace(/\u00a0/g, ' ')).toBe(expected);
  });

  test('when the currency is unknown, then formatting is refused', () => {
    expect(() => formatMoney(100, 'XYZ')).toThrow(/not a known currency/);
  });
});
