/**
 * The lint rule of one clock: outside server/clock.ts, server/, cli/ and plugin/ read the time through
 * a Clock or a stopwatch; parsing a time stays allowed, and the raw knex rule still holds beside it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';

const root = path.resolve(__dirname, '../..');
const probe = [
  'export const a = new Date();',
  'export const b = Date.now();',
  'export const c = performance.now();',
  'export const d = { now: Date.now };',
  "export const parsed = new Date('2031-03-14T09:26:53Z');",
  'declare const db: { knex: unknown };',
  'export const k = db.knex;',
].join('\n');

/** One linter for every case: its TypeScript project service is built once, not per file linted. */
const eslint = new ESLint({ cwd: root });

/** The messages of no-restricted-syntax for `file` with the probe appended (the file exists, so the type-aware config applies). */
async function restricted(file: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${readFileSync(path.join(root, file), 'utf8')}\n${probe}\n`, { filePath: path.join(root, file) });
  return result.messages.filter((m) => m.ruleId === 'no-restricted-syntax').map((m) => (m.message.startsWith('Query through') ? 'knex' : 'time'));
}

describe('the time-read lint rule', () => {
  jest.setTimeout(120_000);

  test('when a service, the CLI or the plugin reads the time directly, then each read is an error and the raw knex rule still holds', async () => {
    for (const file of ['server/invoices/service.ts', 'cli/listen.ts', 'plugin/woocommerce/config.ts']) {
      expect(await restricted(file)).toEqual(['time', 'time', 'time', 'time', 'knex']);
    }
  });

  test('when server/db/ reads the time directly, then it is an error, and its raw knex handle is not', async () => {
    expect(await restricted('server/db/base-model.ts')).toEqual(['time', 'time', 'time', 'time']);
  });

  test('when server/clock.ts reads the time, then it may', async () => {
    expect(await restricted('server/clock.ts')).toEqual(['knex']);
  });
});
