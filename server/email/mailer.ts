/** Sends e-mails through the configured SMTP server, or writes them as .eml files when there is none. */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { systemClock } from '../clock';
import { Config } from '../config';

export interface OutgoingEmail {
  /** `<…@…>`: kept on every attempt of one message, so a late duplicate is recognisable as the same message. */
  messageId?: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  attachments?: { filename: string; content: Buffer; contentType: string }[];
}

export type EmailDelivery = { status: 'sent'; messageId: string } | { status: 'written'; messageId: string; file: string };

export interface Mailer {
  /** Resolves once the SMTP server accepted the message (or the file is written); otherwise throws EmailFailed. */
  send(message: OutgoingEmail): Promise<EmailDelivery>;
  close(): void;
}

/** The SMTP server refused the message or could not be reached; the e-mail queue retries it. */
export class EmailFailed extends Error {
  /** The cause on one line (hosts, ports, the server's reply: for the server log, never an API client). */
  readonly reason: string;

  constructor(cause: unknown) {
    const reason = oneLine(cause);
    super(`The e-mail could not be sent: ${reason}`);
    this.name = 'EmailFailed';
    this.reason = reason;
  }
}

// Long enough for a slow provider, short enough that a dead server cannot hold a request for minutes
// (nodemailer's defaults are 2 min to connect and 10 min of socket inactivity).
const SMTP_TIMEOUT_MS = 10_000;
/** The whole exchange: the per-phase timeouts above cover only silence, not a server that trickles its answers. */
export const SMTP_DEADLINE_MS = 30_000;

/** `work`, or an EmailFailed once `ms` have passed (the abandoned exchange is left to its socket timeout). */
async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new EmailFailed(`no answer from the mail server within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

export function createMailer(config: Pick<Config, 'smtpUrl' | 'mailFrom' | 'mailOutboxDir'>, deadlineMs = SMTP_DEADLINE_MS): Mailer {
  return config.smtpUrl ? smtpMailer(config.smtpUrl, config.mailFrom, deadlineMs) : outboxMailer(config.mailOutboxDir, config.mailFrom);
}

/**
 * A transport made at the first message: nodemailer is required then, so a process that sends none
 * (a CLI command) does not load it.
 */
function lazily<T>(make: () => T): { get(): T; made(): T | undefined } {
  let made: T | undefined;
  return { get: () => (made ??= make()), made: () => made };
}

function nodemailer(): typeof import('nodemailer') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('nodemailer') as typeof import('nodemailer');
}

function smtpMailer(url: string, from: string, deadlineMs: number): Mailer {
  const transport = lazily(() =>
    nodemailer().createTransport({ url, connectionTimeout: SMTP_TIMEOUT_MS, greetingTimeout: SMTP_TIMEOUT_MS, socketTimeout: SMTP_TIMEOUT_MS }, { from }),
  );
  return {
    async send(message) {
      let info;
      try {
        info = await withDeadline(transport.get().sendMail(message), deadlineMs);
      } catch (err) {
        throw err instanceof EmailFailed ? err : new EmailFailed(err);
      }
      // nodemailer resolves when at least one recipient was accepted; a message has one, so this is belt and braces.
      if (info.rejected.length > 0) throw new EmailFailed(`the server rejected ${info.rejected.join(', ')}`);
      return { status: 'sent', messageId: info.messageId };
    },
    close: () => transport.made()?.close(),
  };
}

/** Without an SMTP server the real RFC 5322 message lands in a folder, to be opened in any mail program. */
function outboxMailer(dir: string, from: string): Mailer {
  const transport = lazily(() => nodemailer().createTransport({ streamTransport: true, buffer: true, newline: 'windows' }, { from }));
  return {
    async send(message) {
      try {
        const info = await transport.get().sendMail(message);
        const file = path.resolve(dir, `${systemClock.now().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.eml`);
        await mkdir(path.dirname(file), { recursive: true });
        await writeFile(file, info.message as Buffer, { flag: 'wx' });
        return { status: 'written', messageId: info.messageId, file };
      } catch (err) {
        throw new EmailFailed(err);
      }
    },
    close: () => transport.made()?.close(),
  };
}

function oneLine(cause: unknown): string {
  // Not `instanceof Error`: socket errors come from Node's own realm, which differs from the caller's under jest.
  const message = (cause as { message?: unknown } | null)?.message;
  const text = typeof message === 'string' ? message : String(cause);
  return text.replace(/\s+/g, ' ').trim() || 'unknown error';
}
