/**
 * Exit codes (README's table): 0 done; 1 refused or failed (a record that does not exist, a state
 * that does not allow it, a database or server that does not answer); 2 usage (an unknown command
 * or option, a missing required option, a value that is refused, whether by its form or by the
 * service); 130 interrupted at a prompt (Ctrl-C).
 */
export class UsageError extends Error {}

/** A command that cannot go on for a reason outside the input (a database that is down): exit 1, one line. */
export class CliFailure extends Error {}

export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
export const EXIT_INTERRUPTED = 130;

/**
 * Field errors as a person at the command line reads them, one line per flag with what was typed
 * (`--currency "dollars": must be an ISO 4217 code such as USD`). A message that starts with the
 * field's name loses it; the name is not replaced inside a message, where it is an ordinary word
 * (`EUR amounts have at most 2 decimals`, `must not exceed the amount due`).
 */
export function invalidOptions(details: Record<string, string[]>, flagOf: (field: string) => string, typed: (field: string) => unknown): string {
  const lines = Object.entries(details).map(([field, messages]) => {
    const flag = flagOf(field);
    // A secret is never echoed back, even a refused one.
    const value = /secret|password/i.test(field) ? undefined : typed(field);
    const shown = typeof value === 'string' || typeof value === 'number' ? ` ${JSON.stringify(shortened(String(value)))}` : '';
    const said = messages.map((message) => message.replace(new RegExp(`^(?:"${escape(field)}"|${escape(field)}|${escape(flag)}) `), ''));
    return `\n  ${flag}${shown}: ${said.join('; ')}`;
  });
  return `invalid option${lines.length > 1 ? 's' : ''}${lines.join('')}`;
}

/** A typed value as an error line repeats it: its first line, at most 60 characters (a file's text can be long). */
function shortened(value: string): string {
  const [first] = value.split('\n');
  return first.length > 60 || first !== value ? `${first.slice(0, 59)}…` : first;
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** User names and passwords in URLs are not printed: `mysql://app:secret@db/x` → `mysql://***@db/x`. */
export function redactUrls(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s"']+@/gi, '$1***@');
}
