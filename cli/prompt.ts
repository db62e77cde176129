/**
 * Missing required options are asked on a terminal and are a usage error without one;
 * confirmations are asked only on a terminal (`--yes` skips them).
 */
import { UsageError } from './errors';
import { cliIo } from './io';

export interface OptionSpec {
  key: string;
  flag: string;
  message: string;
  /** A list to pick one from, or several with `multiple` (a checkbox list, answered as `a,b`). */
  choices?: readonly string[];
  multiple?: boolean;
  /** Masked on the screen (a secret key). */
  secret?: boolean;
}

export function isInteractive(): boolean {
  const { stdin, stdout } = cliIo();
  return Boolean(stdin.isTTY && stdout.isTTY);
}

/** Everything on standard input, for secrets given there rather than as arguments (`--secrets-stdin`). */
export async function readStandardInput(): Promise<string> {
  let input = '';
  for await (const chunk of cliIo().stdin) input += String(chunk);
  return input;
}

async function inquirer() {
  // inquirer is an ES module; a dynamic import loads it from this CommonJS build.
  return (await import('inquirer')).default;
}

function question(spec: OptionSpec) {
  if (spec.choices && spec.multiple) {
    return {
      type: 'checkbox' as const,
      name: spec.key,
      message: spec.message,
      choices: spec.choices.map((value) => ({ value })),
      pageSize: spec.choices.length,
      validate: (picked: readonly unknown[]) => picked.length > 0 || 'pick at least one (space selects, a selects all)',
    };
  }
  if (spec.choices) return { type: 'select' as const, name: spec.key, message: spec.message, choices: [...spec.choices] };
  if (spec.secret) return { type: 'password' as const, name: spec.key, message: spec.message, mask: '*', validate: (v: string) => v.trim() !== '' || 'required' };
  return { type: 'input' as const, name: spec.key, message: spec.message, validate: (v: string) => v.trim() !== '' || 'required' };
}

/** Fills in every missing option by asking, or throws a UsageError naming them all. */
export async function ensureOptions<T extends object>(options: T, specs: OptionSpec[]): Promise<T> {
  const values = options as Record<string, unknown>;
  const missing = specs.filter((s) => values[s.key] === undefined || values[s.key] === '');
  if (missing.length === 0) return options;
  if (!isInteractive()) {
    throw new UsageError(`missing required option${missing.length > 1 ? 's' : ''}: ${missing.map((s) => s.flag).join(', ')}`);
  }
  const { prompt } = await inquirer();
  const answers: Record<string, unknown> = await prompt(missing.map(question));
  for (const spec of missing) {
    if (Array.isArray(answers[spec.key])) answers[spec.key] = (answers[spec.key] as string[]).join(',');
  }
  return { ...options, ...answers };
}

/**
 * Asks one free-form question on a terminal; `fallback` answers it without one (and when left empty).
 * A `secret` answer is masked on the screen.
 */
export async function ask(message: string, fallback = '', options: { secret?: boolean } = {}): Promise<string> {
  if (!isInteractive()) return fallback;
  const { prompt } = await inquirer();
  const question = options.secret
    ? { type: 'password' as const, name: 'answer', message, mask: '*' }
    : { type: 'input' as const, name: 'answer', message, default: fallback || undefined };
  const { answer } = await prompt([question]);
  return String(answer ?? '').trim() || fallback;
}

/** True to go on: `--yes`, no terminal, or the user said yes. */
export async function confirmed(message: string, yes: boolean | undefined, fallback = false): Promise<boolean> {
  if (yes || !isInteractive()) return true;
  const { prompt } = await inquirer();
  const answers: Record<string, unknown> = await prompt([{ type: 'confirm', name: 'ok', message, default: fallback }]);
  return Boolean(answers.ok);
}
