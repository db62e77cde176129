/**
 * Invoice e-mails leave after the change that sends them has committed, never inside a database
 * transaction: the message is written with the change, tried once right after the commit, and
 * retried on the webhook schedule (10 s, 30 s, 90 s, 270 s, 810 s) until it is sent or fails. The
 * messages are a job kind of the engine (jobs/engine.ts): the PDF is made before the attempt begins,
 * so a PDF that waited past the lease leaves the message to the claim that took it over, uncounted.
 */
import { randomBytes } from 'node:crypto';
import { Knex } from 'knex';
import { Logger } from 'pino';
import { acrossTenants, Actor, systemActor } from '../auth/actor';
import { Clock } from '../clock';
import { Database } from '../db/database';
import { TenantModel } from '../db/tenant-model';
import { JobQueue, Outcome } from '../jobs/engine';
import { nextAttemptAfter } from '../jobs/retry-schedule';
import { EmailFailed, Mailer, OutgoingEmail } from './mailer';

/** `sent`: the mail server took it; `queued`: it is retried later; `suppressed`: test mode, nothing leaves. */
export type EmailStatus = 'sent' | 'queued' | 'suppressed';

export class EmailMessage extends TenantModel {
  static override tableName = 'email_messages';
  static override timestampColumns = ['created_at', 'updated_at', 'next_attempt_at', 'sent_at'];
  static override booleanColumns = ['livemode', 'attach_invoice'];

  invoice_id!: number;
  /** Whether the message carries the invoice's files (the invoice e-mail), or the payment link alone (a reminder). */
  attach_invoice!: boolean;
  recipient!: string;
  subject!: string;
  text_body!: string;
  html_body!: string;
  message_id!: string;
  status!: 'pending' | 'sent' | 'failed';
  attempts!: number;
  next_attempt_at!: string;
  lease_id!: string | null;
  last_error!: string | null;
  sent_at!: string | null;
}

/**
 * Messages claimed, and made, at once. Each carries a PDF made on the PDF threads, up to half a
 * second for the longest invoice: a small round ends well within its lease (15 s at the least), so
 * no message is claimed again while its round is still making PDFs.
 */
const EMAILS_PER_ROUND = 5;

export interface EmailQueueOptions {
  clock: Clock;
  leaseSeconds: number;
  /** How long the request that sent the e-mail waits for the first attempt before answering `queued`. */
  firstAttemptWaitMs: number;
  /** The host part of generated Message-IDs. */
  messageIdHost: string;
  /**
   * The files each message carries (the PDF, or the business's e-invoice with or instead of it): made
   * at each attempt, outside any transaction, as the invoice is then.
   */
  invoiceAttachments(actor: Actor, invoiceId: number): Promise<MailAttachment[]>;
}

export type MailAttachment = NonNullable<OutgoingEmail['attachments']>[number];

/** What a failed attempt records when the message itself, not its delivery, failed: the details go to the log only. */
const UNMADE = 'the message could not be made';

/** A message's files, or why they could not be made (recorded as a failed attempt). */
type Attachment = { files: MailAttachment[] } | { error: string };

export class EmailQueue {
  private readonly jobs: JobQueue<EmailMessage, Attachment>;

  constructor(
    private readonly db: Database,
    private readonly mailer: Mailer,
    private readonly logger: Logger,
    private readonly options: EmailQueueOptions,
  ) {
    this.jobs = new JobQueue(db, logger, {
      label: 'invoice e-mail',
      model: EmailMessage,
      access: acrossTenants('email queue'),
      batch: EMAILS_PER_ROUND,
      leaseSeconds: options.leaseSeconds,
      clock: options.clock,
      schedule: nextAttemptAfter,
      statuses: { done: 'sent', failed: 'failed' },
      prepare: (message) => this.attachment(message),
      work: (message, attachment) => this.send(message, attachment),
    });
  }

  /**
   * Writes the message in `trx`, the transaction of the change that sends it; it leaves after the
   * commit. `attachInvoice: false`: without the invoice's files (a reminder).
   */
  async enqueue(trx: Knex.Transaction, actor: Actor, invoiceId: number, message: OutgoingEmail, { attachInvoice = true } = {}): Promise<EmailMessage> {
    return EmailMessage.of(actor, trx).insert({ ...EmailMessage.ownedBy(actor), ...this.newMessage(invoiceId, message, attachInvoice) });
  }

  /** `enqueue` for several messages, of any businesses, in one INSERT (a sweep's reminders); they leave after the commit. */
  async enqueueAll(trx: Knex.Transaction, messages: readonly { actor: Actor; invoiceId: number; message: OutgoingEmail; attachInvoice: boolean }[]): Promise<void> {
    const now = this.options.clock.now().toISOString();
    const rows = messages.map(({ actor, invoiceId, message, attachInvoice }) => ({
      owner: actor,
      // Written now, by the real time, as the job engine schedules them.
      row: EmailMessage.fromJson({ ...this.newMessage(invoiceId, message, attachInvoice), created_at: now, updated_at: now }, { skipValidation: true }).$toDatabaseJson(),
    }));
    await EmailMessage.insertOwned(trx, rows);
    this.db.afterCommit(() => this.nudge());
  }

  /** A new message's columns, as the model holds them. */
  private newMessage(invoiceId: number, message: OutgoingEmail, attachInvoice: boolean) {
    return {
      invoice_id: invoiceId,
      attach_invoice: attachInvoice,
      recipient: message.to,
      subject: message.subject,
      text_body: message.text,
      html_body: message.html,
      message_id: `<${randomBytes(16).toString('hex')}@${this.options.messageIdHost}>`,
      status: 'pending' as const,
      attempts: 0,
      next_attempt_at: this.options.clock.now().toISOString(),
      lease_id: null,
      last_error: null,
      sent_at: null,
    };
  }

  /**
   * The first attempt, made after the commit: `sent` when the mail server took the message within
   * the wait, else `queued` (the attempt goes on, and a failure is retried by the sweeps).
   */
  async deliverNow(id: number): Promise<'sent' | 'queued'> {
    const attempt = this.jobs.runNow(id);
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), this.options.firstAttemptWaitMs);
    });
    const outcome = await Promise.race([attempt, waited]).finally(() => clearTimeout(timer));
    return outcome !== null && typeof outcome === 'object' && 'done' in outcome ? 'sent' : 'queued';
  }

  /**
   * What the invoice's latest invoice e-mail has come to, read without an attempt: `sent` once it
   * left, else `queued` (the sweeps retry it, or gave up on it and logged why). Its payment
   * reminders (the messages without its files) are not what `/send` answers for.
   */
  async latestStatus(actor: Actor, invoiceId: number): Promise<'sent' | 'queued'> {
    const latest = await EmailMessage.of(actor, this.db.current).where({ invoice_id: invoiceId, attach_invoice: true }).orderBy('id', 'desc').first();
    return latest?.status === 'sent' ? 'sent' : 'queued';
  }

  /** Sweeps every `seconds` for retries and anything a nudge missed. */
  start(seconds: number): void {
    this.jobs.start(seconds);
  }

  /** Messages have become due: send them now. */
  nudge(): void {
    this.jobs.nudge();
  }

  /** Sends everything due; resolves with how many messages were tried. */
  sweep(): Promise<number> {
    return this.jobs.sweep();
  }

  /** Stops sweeping and waits for the attempts under way. */
  stop(): Promise<void> {
    return this.jobs.stop();
  }

  private async attachment(message: EmailMessage): Promise<Attachment> {
    if (!message.attach_invoice) return { files: [] };
    try {
      return { files: await this.options.invoiceAttachments(systemActor('email queue', { businessId: message.business_id, livemode: message.livemode }), message.invoice_id) };
    } catch (err) {
      this.logger.error({ err, emailId: message.id, invoiceId: message.invoice_id }, 'invoice e-mail not made');
      return { error: UNMADE };
    }
  }

  /** Hands a claimed message, its attempt begun, to the mail server. */
  private async send(message: EmailMessage, attachment: Attachment): Promise<Outcome> {
    let error: string;
    if ('error' in attachment) error = attachment.error;
    else {
      try {
        await this.mailer.send({
          messageId: message.message_id,
          to: message.recipient,
          subject: message.subject,
          text: message.text_body,
          html: message.html_body,
          attachments: attachment.files,
        });
        return { done: { last_error: null, sent_at: this.options.clock.now().toISOString() } };
      } catch (err) {
        if (!(err instanceof EmailFailed)) this.logger.error({ err, emailId: message.id, invoiceId: message.invoice_id }, 'invoice e-mail not made');
        error = err instanceof EmailFailed ? err.reason : UNMADE;
      }
    }
    // The reason may name our mail server; it goes to the log and the queue row, never to an API client.
    this.logger.warn({ emailId: message.id, invoiceId: message.invoice_id, attempt: message.attempts, reason: error }, 'invoice e-mail not sent');
    return { failed: { last_error: error } };
  }
}
