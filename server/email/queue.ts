/**
 * Invoice e-mails leave after the change that sends them has committed, never inside a database
 * transaction: the message is written with the change, tried once right after the commit, and
 * retried on the webhook schedule (10 s, 30 s, 90 s, 270 s, 810 s) until it is sent or fails.
 */
import { randomBytes } from 'node:crypto';
import { Knex } from 'knex';
import { Logger } from 'pino';
import { acrossTenants, Actor, systemActor } from '../auth/actor';
import { Clock } from '../clock';
import { Database } from '../db/database';
import { TenantModel } from '../db/tenant-model';
import { claimDue, renewLease } from '../jobs/lease';
import { Sweeper } from '../jobs/sweeper';
import { nextAttemptAfter } from '../jobs/retry-schedule';
import { EmailFailed, Mailer, OutgoingEmail } from './mailer';

/** `sent`: the mail server took it; `queued`: it is retried later; `suppressed`: test mode, nothing leaves. */
export type EmailStatus = 'sent' | 'queued' | 'suppressed';

export class EmailMessage extends TenantModel {
  static override tableName = 'email_messages';
  static override timestampColumns = ['created_at', 'updated_at', 'next_attempt_at', 'sent_at'];

  invoice_id!: number;
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

const QUEUE = acrossTenants('email queue');

/**
 * Messages claimed, and made, at once. Each carries a PDF made on the PDF threads, up to half a
 * second for the longest invoice: a small round ends well within its lease (15 s at the least), so
 * no message is claimed again, and sent twice, while its round is still making PDFs.
 */
const EMAILS_PER_ROUND = 5;

export interface EmailQueueOptions {
  clock: Clock;
  leaseSeconds: number;
  /** How long the request that sent the e-mail waits for the first attempt before answering `queued`. */
  firstAttemptWaitMs: number;
  /** The host part of generated Message-IDs. */
  messageIdHost: string;
  /** The PDF each message carries: made at each attempt, outside any transaction, as the invoice is then. */
  invoicePdf(actor: Actor, invoiceId: number): Promise<{ filename: string; content: Buffer }>;
}

export class EmailQueue extends Sweeper<EmailMessage> {
  /** First attempts still under way after their request answered: stopping waits for them. */
  private readonly firstAttempts = new Set<Promise<boolean>>();

  constructor(
    private readonly db: Database,
    private readonly mailer: Mailer,
    logger: Logger,
    private readonly options: EmailQueueOptions,
  ) {
    super(logger, 'e-mail');
  }

  /** Writes the message in `trx`, the transaction of the change that sends it; it leaves after the commit. */
  async enqueue(trx: Knex.Transaction, actor: Actor, invoiceId: number, message: OutgoingEmail): Promise<EmailMessage> {
    return EmailMessage.of(actor, trx).insert({
      ...EmailMessage.ownedBy(actor),
      invoice_id: invoiceId,
      recipient: message.to,
      subject: message.subject,
      text_body: message.text,
      html_body: message.html,
      message_id: `<${randomBytes(16).toString('hex')}@${this.options.messageIdHost}>`,
      status: 'pending',
      attempts: 0,
      next_attempt_at: this.options.clock.now().toISOString(),
      lease_id: null,
      last_error: null,
      sent_at: null,
    });
  }

  /**
   * The first attempt, made after the commit: `sent` when the mail server took the message within
   * the wait, else `queued` (the attempt goes on, and a failure is retried by the sweeps).
   */
  async deliverNow(id: number): Promise<'sent' | 'queued'> {
    const attempt = (async () => {
      const [claimed] = await claimDue(this.db, EmailMessage, { ...this.leaseOptions(), limit: 1, id });
      return claimed ? this.attempt(claimed) : false;
    })();
    this.firstAttempts.add(attempt);
    void attempt.finally(() => this.firstAttempts.delete(attempt));
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), this.options.firstAttemptWaitMs);
    });
    const sent = await Promise.race([attempt, waited]).finally(() => clearTimeout(timer));
    return sent ? 'sent' : 'queued';
  }

  /**
   * What the invoice's latest message has come to, read without an attempt: `sent` once it left,
   * else `queued` (the sweeps retry it, or gave up on it and logged why).
   */
  async latestStatus(actor: Actor, invoiceId: number): Promise<'sent' | 'queued'> {
    const latest = await EmailMessage.of(actor, this.db.current).where({ invoice_id: invoiceId }).orderBy('id', 'desc').first();
    return latest?.status === 'sent' ? 'sent' : 'queued';
  }

  override async stop(): Promise<void> {
    await super.stop();
    await Promise.allSettled(this.firstAttempts);
  }

  protected claim(): Promise<EmailMessage[]> {
    return claimDue(this.db, EmailMessage, { ...this.leaseOptions(), limit: EMAILS_PER_ROUND });
  }

  protected async work(message: EmailMessage): Promise<void> {
    await this.attempt(message);
  }

  private leaseOptions() {
    return { access: QUEUE, leaseSeconds: this.options.leaseSeconds, clock: this.options.clock };
  }

  /** Sends a claimed message and records the outcome (unless its lease has passed to another claim); true when sent. */
  private async attempt(message: EmailMessage): Promise<boolean> {
    let error: string | null = null;
    try {
      const pdf = await this.options.invoicePdf(systemActor('email queue', { businessId: message.business_id, livemode: message.livemode }), message.invoice_id);
      // The PDF may have waited for a thread past the lease: a later claim then sends the message, not this attempt.
      if (!(await renewLease(this.db, EmailMessage, message, this.leaseOptions()))) {
        this.logger.info({ emailId: message.id, invoiceId: message.invoice_id }, 'invoice e-mail left to a later claim: its lease ran out while the PDF was made');
        return false;
      }
      await this.mailer.send({
        messageId: message.message_id,
        to: message.recipient,
        subject: message.subject,
        text: message.text_body,
        html: message.html_body,
        attachments: [{ ...pdf, contentType: 'application/pdf' }],
      });
    } catch (err) {
      if (!(err instanceof EmailFailed)) this.logger.error({ err, emailId: message.id, invoiceId: message.invoice_id }, 'invoice e-mail not made');
      error = err instanceof EmailFailed ? err.reason : 'the message could not be made';
      // The reason may name our mail server; it goes to the log and the queue row, never to an API client.
      this.logger.warn({ emailId: message.id, invoiceId: message.invoice_id, attempt: message.attempts, reason: error }, 'invoice e-mail not sent');
    }
    const now = this.options.clock.now();
    const retryAt = error === null ? null : nextAttemptAfter(message.attempts, now);
    await EmailMessage.acrossTenants(QUEUE, this.db.current)
      .where({ id: message.id, lease_id: message.lease_id })
      .patch({
        lease_id: null,
        last_error: error,
        ...(error === null ? { status: 'sent', sent_at: now.toISOString() } : retryAt ? { next_attempt_at: retryAt.toISOString() } : { status: 'failed' }),
      });
    return error === null;
  }
}
