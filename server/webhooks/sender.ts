/**
 * One HTTP attempt with got: the exact signed bytes, 10 seconds in all, no redirects followed, and
 * the address checked where it is connected to (so DNS rebinding cannot reach a private network).
 */
import { startStopwatch } from '../clock';
import { guardedLookup, privateHostProblem } from '../keys/webhook-url';

/** The contract's delivery timeout: any 2xx within 10 seconds. */
export const DELIVERY_TIMEOUT_MS = 10_000;
export const EXCERPT_BYTES = 2048;

export interface AttemptResult {
  statusCode: number | null;
  durationMs: number;
  /** The start of the response body, at most 2 KB. */
  excerpt: string | null;
  error: string | null;
  /** The address check refused the URL (a private address while WEBHOOK_ALLOW_PRIVATE is off): nothing was sent. */
  refusedAddress?: true;
}

/** Any 2xx answered in full within the timeout; a 2xx whose body then stalls is retried (receivers deduplicate). */
export function isSuccess(result: AttemptResult): boolean {
  return result.error === null && result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
}

/**
 * Node connects to an IP literal without a lookup, so literals are checked here; loopback names too,
 * however spelled (`localhost.`), as at registration: a resolver may not know them all.
 */
function literalAddressProblem(url: string, allowPrivate: boolean): string | null {
  return allowPrivate ? null : privateHostProblem(new URL(url));
}

/** got is ESM-only; this package is CommonJS (jest runs with --experimental-vm-modules for this import). */
type Got = (typeof import('got'))['got'];

/**
 * The got instance of each address policy, its fixed options merged once: merging them into got's
 * defaults on every delivery cost a sixth of a delivery's time.
 */
const senders = new Map<boolean, Promise<Got>>();

function senderFor(allowPrivate: boolean): Promise<Got> {
  let sender = senders.get(allowPrivate);
  if (!sender) {
    sender = import('got').then(({ got }) =>
      got.extend({
        followRedirect: false,
        throwHttpErrors: false,
        retry: { limit: 0 },
        timeout: { request: DELIVERY_TIMEOUT_MS },
        dnsLookup: guardedLookup(allowPrivate),
      }),
    );
    senders.set(allowPrivate, sender);
  }
  return sender;
}

export async function sendWebhook(
  url: string,
  body: Buffer,
  headers: Record<string, string>,
  options: { allowPrivate: boolean; timeoutMs?: number },
): Promise<AttemptResult> {
  const elapsed = startStopwatch();
  const refused = literalAddressProblem(url, options.allowPrivate);
  if (refused) return { statusCode: null, durationMs: 0, excerpt: null, error: refused, refusedAddress: true };
  const got = await senderFor(options.allowPrivate);
  return new Promise((resolve) => {
    let statusCode: number | null = null;
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (error: string | null, refusedAddress = false) =>
      resolve({
        statusCode,
        durationMs: Math.round(elapsed.elapsedMs()),
        excerpt: chunks.length ? Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8') : null,
        error,
        ...(refusedAddress ? { refusedAddress: true as const } : {}),
      });
    const stream = got.stream.post(url, { body, headers, ...(options.timeoutMs === undefined ? {} : { timeout: { request: options.timeoutMs } }) });
    stream.on('response', (response: { statusCode: number }) => {
      statusCode = response.statusCode;
    });
    stream.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      // Enough for the log: a receiver answering megabytes is not read to the end.
      if (received >= EXCERPT_BYTES) stream.destroy();
    });
    stream.on('end', () => finish(null));
    stream.on('close', () => finish(null));
    stream.on('error', (err: Error) => {
      const cause = (err as { cause?: NodeJS.ErrnoException }).cause;
      const refusedAddress = (cause?.code ?? (err as NodeJS.ErrnoException).code) === 'EPRIVATEADDRESS';
      finish((cause?.message ?? err.message).replace(/\s+/g, ' ').slice(0, 500), refusedAddress);
    });
  });
}
