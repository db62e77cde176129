/**
 * Missing required options are asked on a terminal and are a usage error without one;
 * confirmations are asked only on a terminal (`--yes` skips them).
 */
import { UsageError } from './errors';

export interface OptionSpec {
  key: string;
  flag: string;
  message: string;
  choices?: string[];
}

export function isInteractive(): boolean {
  return Boolean(process.stdin.isTTY && process.stdout.isTTY);
}

async function inquirer() {
  // inquirer is an ES module; a dynamic import loads it from this CommonJS build.
  return (await import('inquirer')).default;
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
  const answers = await prompt(
    missing.map((s) =>
      s.choices
        ? { type: 'select', name: s.key, message: s.message, choices: s.choices }
        : { type: 'input', name: s.key, message: s.message, validate: (v: string) => v.trim() !== '' || 'required' },
    ),
  );
  return { ...options, ...answers } as T;
}

/** True to go on: `--yes`, no terminal, or the user said yes. */
export async function confirmed(message: string, yes: boolean | undefined): Promise<boolean> {
  if (yes || !isInteractive()) return true;
  const { prompt } = await inquirer();
  const { ok } = await prompt([{ type: 'confirm', name: 'ok', message, default: false }]);
  return Boolean(ok);
}
