/** Sends e-mails through the configured SMTP server, or writes them as .eml files when there is none. */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createTransport } from 'nodemailer';
import { Config } from '../config';
import { AppError } from '../errors';

export interface OutgoingEmail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export type EmailDelivery = { status: 'sent'; messageId: string } | { status: 'written'; messageId: string; file: string };

export interface Mailer {
  /** Resolves once the SMTP server accepted the message (or the file is written); otherwise throws EmailFailed. */
  send(message: OutgoingEmail): Promise<EmailDelivery>;
  close(): void;
}

/**
 * The SMTP server refused or could not be reached: a bad gateway for the API client. The cause
 * (hosts, ports, the server's reply) goes to the server log, not to API clients.
 */
export class EmailFailed extends AppError {
  /** The cause on one line. */
  readonly reason: string;

  constructor(cause: unknown) {
    super(502, 'email_failed', 'The e-mail could not be sent: the mail server refused it or could not be reached. Nothing was changed; try again later.');
    this.reason = oneLine(cause);
  }
}

// Long enough for a slow provider, short enough that a dead server cannot hold a request for minutes
// (nodemailer's defaults are 2 min to connect and 10 min of socket inactivity).
const SMTP_TIMEOUT_MS = 10_000;

export function createMailer(config: Pick<Config, 'smtpUrl' | 'mailFrom' | 'mailOutboxDir'>): Mailer {
  return config.smtpUrl ? smtpMailer(config.smtpUrl, config.mailFrom) : outboxMailer(config.mailOutboxDir, config.mailFrom);
}

function smtpMailer(url: string, from: string): Mailer {
  const transport = createTransport(
    { url, connectionTimeout: SMTP_TIMEOUT_MS, greetingTimeout: SMTP_TIMEOUT_MS, socketTimeout: SMTP_TIMEOUT_MS },
    { from },
  );
  return {
    async send(message) {
      let info;
      try {
        info = await transport.sendMail(message);
      } catch (err) {
        throw new EmailFailed(err);
      }
      // nodemailer resolves when at least one recipient was accepted; a message has one, so this is belt and braces.
      if (info.rejected.length > 0) throw new EmailFailed(`the server rejected ${info.rejected.join(', ')}`);
      return { status: 'sent', messageId: info.messageId };
    },
    close: () => transport.close(),
  };
}

/** Without an SMTP server the real RFC 5322 message lands in a folder, to be opened in any mail program. */
function outboxMailer(dir: string, from: string): Mailer {
  const transport = createTransport({ streamTransport: true, buffer: true, newline: 'windows' }, { from });
  return {
    async send(message) {
      try {
        const info = await transport.sendMail(message);
        const file = path.resolve(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.eml`);
        await mkdir(path.dirname(file), { recursive: true });
        await writeFile(file, info.message as Buffer, { flag: 'wx' });
        return { status: 'written', messageId: info.messageId, file };
      } catch (err) {
        throw new EmailFailed(err);
      }
    },
    close: () => transport.close(),
  };
}

function oneLine(cause: unknown): string {
  // Not `instanceof Error`: socket errors come from Node's own realm, which differs from the caller's under jest.
  const message = (cause as { message?: unknown } | null)?.message;
  const text = typeof message === 'string' ? message : String(cause);
  return text.replace(/\s+/g, ' ').trim() || 'unknown error';
}
