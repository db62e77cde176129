/** A real SMTP server on a loopback ephemeral port that keeps every message it receives, parsed. */
import { AddressInfo } from 'node:net';
import { ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** A received message: the parsed e-mail plus the envelope recipients (RCPT TO), which need not match its To header. */
export type ReceivedMail = ParsedMail & { rcptTo: string[] };

export interface TestSmtp {
  /** smtp://user:password@127.0.0.1:PORT, or smtp://127.0.0.1:PORT for a server without authentication. */
  url: string;
  port: number;
  /** Every message received so far, oldest first. */
  messages: ReceivedMail[];
  /**
   * The oldest message not yet returned by nextMessage (with `to`: the oldest such message sent to
   * that address), waiting for it to arrive. The wait is a deadline for a message that should come,
   * not a pause: generous (20 s), so a loaded machine's slow PDF is not taken for a lost e-mail.
   */
  nextMessage(options?: { to?: string; timeoutMs?: number }): Promise<ReceivedMail>;
  /** While on, every RCPT TO is answered 550, so the client's send fails. */
  refuseRecipients(on: boolean): void;
  /**
   * Holds the answer to every message's data until the returned function is called: a mail server
   * that is slow for exactly as long as the test needs, however fast or slow the machine is.
   */
  holdAnswers(): () => void;
  stop(): Promise<void>;
}

/** With a user, clients must log in with exactly that user and password; without one, AUTH is not offered. */
export async function startSmtpServer(options: { user?: string; password?: string } = {}): Promise<TestSmtp> {
  const { user, password = '' } = options;
  const messages: ReceivedMail[] = [];
  const returned = new Set<ReceivedMail>();
  type Waiter = { to?: string; resolve: (m: ReceivedMail) => void; reject: (e: Error) => void; timer: NodeJS.Timeout };
  const waiters: Waiter[] = [];
  let refusing = false;
  let held: Promise<void> = Promise.resolve();
  let releaseHeld = () => {};

  /** Gives each waiter, oldest first, the oldest message it has not been given that it waits for. */
  const hand = () => {
    for (const waiter of [...waiters]) {
      const message = messages.find((m) => !returned.has(m) && (waiter.to === undefined || m.rcptTo.includes(waiter.to)));
      if (!message) continue;
      returned.add(message);
      waiters.splice(waiters.indexOf(waiter), 1);
      clearTimeout(waiter.timer);
      waiter.resolve(message);
    }
  };

  const server = new SMTPServer({
    logger: false,
    // Plain TCP on loopback: no STARTTLS (and so no warning about the built-in test certificate).
    disabledCommands: user === undefined ? ['STARTTLS', 'AUTH'] : ['STARTTLS'],
    authOptional: user === undefined,
    onAuth(auth, _session, callback) {
      if (auth.username === user && auth.password === password) callback(null, { user });
      else callback(new Error('Invalid username or password'));
    },
    onRcptTo(_address, _session, callback) {
      if (!refusing) return callback();
      callback(Object.assign(new Error('Recipient refused by the test server'), { responseCode: 550 }));
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then(async (parsed) => {
          await held;
          messages.push(Object.assign(parsed, { rcptTo: session.envelope.rcptTo.map((r) => r.address) }));
          hand();
          callback();
        })
        .catch((err: Error) => callback(err));
    },
  });

  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  const credentials = user === undefined ? '' : `${encodeURIComponent(user)}:${encodeURIComponent(password)}@`;

  return {
    url: `smtp://${credentials}127.0.0.1:${port}`,
    port,
    messages,
    nextMessage({ to, timeoutMs = 20_000 } = {}) {
      return new Promise<ReceivedMail>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(new Error(`No e-mail${to === undefined ? '' : ` to ${to}`} reached the test SMTP server within ${timeoutMs} ms`));
        }, timeoutMs);
        const waiter: Waiter = { to, resolve, reject, timer };
        waiters.push(waiter);
        hand();
      });
    },
    refuseRecipients(on) {
      refusing = on;
    },
    holdAnswers() {
      let release!: () => void;
      held = new Promise<void>((resolve) => (release = resolve));
      releaseHeld = () => {
        release();
        held = Promise.resolve();
      };
      return releaseHeld;
    },
    stop() {
      releaseHeld();
      for (const waiter of waiters.splice(0)) {
        clearTimeout(waiter.timer);
        waiter.reject(new Error('The test SMTP server stopped'));
      }
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
