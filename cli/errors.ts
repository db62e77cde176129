/** Exit codes: 2 for a usage error (missing or bad option), 1 for a refused or failed command. */
export class UsageError extends Error {}

/** A command that cannot go on for a reason outside the input (a database that is down): exit 1, one line. */
export class CliFailure extends Error {}

export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** User names and passwords in URLs are not printed: `mysql://app:secret@db/x` → `mysql://***@db/x`. */
export function redactUrls(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s"']+@/gi, '$1***@');
}
