/**
 * `invoicing webhooks listen`: follows a test-mode business's events on the running server (long
 * polling `GET /events?after=<last id>&wait=`) and forwards each to a local URL with the body bytes
 * and headers of a real delivery, signed with a local secret. The server never connects to that
 * URL, so a handler on localhost needs no setting. The last event id seen is where a reconnect
 * reads on from: a server restart loses nothing.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { startStopwatch, systemClock } from '../server/clock';
import { EventType } from '../server/events/model';
import { EventPayload } from '../server/events/schema';
import { deliveryHeaders } from '../server/webhooks/signing';
import { CliFailure } from './errors';

/** How long one long poll waits on the server before asking again. */
const WAIT_SECONDS = 25;
/** How long the local handler has to answer a forwarded event. */
const FORWARD_TIMEOUT_MS = 10_000;
const RETRY_MS = 1000;

/** The business's local signing secret: the same on every run, derived from the installation's application key. */
export function listenSecret(appKey: Buffer, businessId: number): string {
  return `whsec_${createHmac('sha256', appKey).update(`webhooks listen: business ${businessId}`).digest('base64url')}`;
}

export interface ListenOptions {
  /** The partner API's base URL: `http://localhost:3000/api/v1/partner`. */
  apiUrl: string;
  /** A test-mode key of the business, with a read scope. */
  key: string;
  /** The newest event id before listening began: only later events are forwarded. */
  after: number;
  /** Where events go; undefined: each is printed as a JSON line instead. */
  forwardTo?: string;
  secret: string;
  /** Only these types (all when undefined). */
  types?: readonly EventType[];
  write: (line: string) => void;
  /** Resolves when listening should stop. */
  stopped: Promise<void>;
}

interface EventPage {
  data: EventPayload[];
}

const clockTime = (date: Date) => date.toISOString().slice(11, 19);

async function forward(event: EventPayload, url: string, secret: string): Promise<string> {
  const body = Buffer.from(JSON.stringify(event));
  const headers = deliveryHeaders(body, { eventType: event.type, deliveryId: `listen-${event.id}-${randomUUID().slice(0, 8)}`, secret, at: systemClock.now() });
  const elapsed = startStopwatch();
  try {
    const res = await fetch(url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS) });
    await res.arrayBuffer();
    return `[${res.status}] POST ${url} (${Math.round(elapsed.elapsedMs())} ms)`;
  } catch (err) {
    const reason = err instanceof Error && err.name === 'TimeoutError' ? `no answer in ${FORWARD_TIMEOUT_MS / 1000} s` : ((err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message);
    return `[failed: ${reason}] POST ${url}`;
  }
}

/** Follows the events until `stopped`; one line per event (its JSON when there is no `forwardTo`). */
export async function listen(options: ListenOptions): Promise<void> {
  let after = options.after;
  let serverDown = false;
  const stop = new AbortController();
  void options.stopped.then(() => stop.abort());
  while (!stop.signal.aborted) {
    let page: EventPage;
    try {
      const res = await fetch(`${options.apiUrl}/events?after=${after}&wait=${WAIT_SECONDS}&per_page=100`, {
        headers: { authorization: `Bearer ${options.key}` },
        signal: stop.signal,
      });
      if (res.status === 401) throw new CliFailure(`the server at ${options.apiUrl} refused the listening key (was the database reset?)`);
      if (!res.ok) throw new CliFailure(`the server at ${options.apiUrl} answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
      page = (await res.json()) as EventPage;
    } catch (err) {
      if (stop.signal.aborted) return;
      if (err instanceof CliFailure) throw err;
      if (!serverDown) options.write(`waiting for the server at ${options.apiUrl} (it does not answer); events are forwarded from where they stopped`);
      serverDown = true;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      continue;
    }
    if (serverDown) options.write('connected again');
    serverDown = false;
    for (const event of page.data) {
      after = event.id;
      if (options.types && !options.types.includes(event.type)) continue;
      if (!options.forwardTo) {
        options.write(JSON.stringify(event));
        continue;
      }
      const outcome = await forward(event, options.forwardTo, options.secret);
      options.write(`${clockTime(systemClock.now())}  --> ${event.type} [event ${event.id}]  <-- ${outcome}`);
    }
  }
}
