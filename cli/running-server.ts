/**
 * The running server, seen from the command line: `trigger` and `webhooks replay --wait` make
 * changes that only the server delivers, so they check first that it answers, rather than report
 * success for work nobody will finish.
 */
import type { Config } from '../server/config';
import { CliFailure } from './errors';

/** The partner API of the running server: `--api-url`, else BASE_URL's. */
export function apiUrlOf(config: Config, flag: string | undefined): string {
  return (flag ?? `${config.baseUrl}/api/v1/partner`).replace(/\/+$/, '');
}

/** Whether the partner API answers at `apiUrl` now (its root index names its OpenAPI version). */
export async function apiAnswers(apiUrl: string): Promise<boolean> {
  try {
    const res = await fetch(apiUrl, { signal: AbortSignal.timeout(2000) });
    return res.ok && typeof ((await res.json()) as { openapi?: unknown }).openapi === 'string';
  } catch {
    return false;
  }
}

/** A one-line failure (exit 1) when the server does not answer; `unchanged` says that nothing was done. */
export async function requireServer(apiUrl: string, unchanged: string): Promise<void> {
  if (await apiAnswers(apiUrl)) return;
  throw new CliFailure(`the server at ${apiUrl} does not answer: start it with \`npm start\` (or \`invoicing serve\`), or point --api-url at it; ${unchanged}`);
}
