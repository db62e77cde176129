/** A real webhook receiver on 127.0.0.1: keeps every request's raw bytes and headers, answers as told. */
import http from 'node:http';
import { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  body: any;
}

/** `delayMs`: answer after a while, so that deliveries are still under way when a test needs them to be. */
export type Behaviour = { status: number; location?: string; delayMs?: number } | { hang: true };

export interface TestReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** How the next requests are answered (default 200). */
  answer(behaviour: Behaviour): void;
  stop(): Promise<void>;
}

export async function startReceiver(): Promise<TestReceiver> {
  const received: ReceivedWebhook[] = [];
  let behaviour: Behaviour = { status: 200 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      received.push({ headers: req.headers, raw, body: JSON.parse(raw.toString('utf8')) });
      if ('hang' in behaviour) return; // never answers: the sender's timeout decides
      const { status, location, delayMs = 0 } = behaviour;
      setTimeout(() => {
        res.writeHead(status, location ? { location } : {});
        res.end('ok');
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    answer: (b) => {
      behaviour = b;
    },
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A clock the test moves: retry schedules without waiting minutes. */
export class TestClock {
  private at = Date.now();
  now = (): Date => new Date(this.at);
  advance(ms: number): void {
    this.at += ms;
  }
}
