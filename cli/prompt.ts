/**
 * Missing required options are asked on a terminal and are a usage error without one;
 * confirmations are asked only on a terminal (`--yes` skips them).
 */
import { UsageError } from './errors';
import { cliIo } from './io';

/** One entry of a list to pick from: its value, and the line shown for it (`1  Acme (USD)`). */
export interface Choice {
  value: string;
  name?: string;
}

/** An answer's check, run as it is typed: true, or what is wrong with it (the prompt asks again). */
export type AnswerCheck = (answer: string) => true | string;

export interface OptionSpec {
  key: string;
  flag: string;
  message: string;
  /**
   * A list to pick one from, or several with `multiple` (a checkbox list, answered as `a,b`); a
   * function when the list comes from the database (read only when the question is asked).
   */
  choices?: readonly string[] | (() => Promise<Choice[]>);
  multiple?: boolean;
  /** Masked on the screen (a secret key). */
  secret?: boolean;
  /** Checks a typed answer before the next question (the flag's own value is checked by the command). */
  check?: AnswerCheck;
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

/** Required, then the spec's own check: a wrong answer is said under the prompt, which asks again. */
const answerCheck = (spec: OptionSpec) => (answer: string) => (answer.trim() === '' ? 'required' : (spec.check?.(answer.trim()) ?? true));

async function question(spec: OptionSpec) {
  const choices = typeof spec.choices === 'function' ? await spec.choices() : spec.choices?.map((value) => ({ value }));
  if (choices && spec.multiple) {
    return {
      type: 'checkbox' as const,
      name: spec.key,
      message: spec.message,
      choices,
      pageSize: choices.length,
      validate: (picked: readonly unknown[]) => picked.length > 0 || 'pick at least one (space selects, a selects all)',
    };
  }
  if (choices) return { type: 'select' as const, name: spec.key, message: spec.message, choices, pageSize: Math.min(choices.length, 15) };
  if (spec.secret) return { type: 'password' as const, name: spec.key, message: spec.message, mask: '*', validate: answerCheck(spec) };
  return { type: 'input' as const, name: spec.key, message: spec.message, validate: answerCheck(spec) };
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
  const answers: Record<string, unknown> = {};
  // One question at a time: a list read from the database is read when its question comes.
  for (const spec of missing) {
    const answer = (await prompt([await question(spec)]))[spec.key] as unknown;
    answers[spec.key] = Array.isArray(answer) ? answer.join(',') : typeof answer === 'string' ? answer.trim() : answer;
  }
  return { ...options, ...answers };
}

/**
 * Asks one free-form question on a terminal; `fallback` answers it without one (and when left empty).
 * A `secret` answer is masked on the screen.
 */
export async function ask(message: string, fallback = '', options: { secret?: boolean; check?: AnswerCheck } = {}): Promise<string> {
  if (!isInteractive()) return fallback;
  const { prompt } = await inquirer();
  // An empty answer takes the fallback, so only what was typed is checked.
  const validate = (answer: string) => answer.trim() === '' || (options.check?.(answer.trim()) ?? true);
  const question = options.secret
    ? { type: 'password' as const, name: 'answer', message, mask: '*', validate }
    : { type: 'input' as const, name: 'answer', message, default: fallback || undefined, validate };
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
