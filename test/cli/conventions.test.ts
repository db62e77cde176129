/**
 * What every command shares: help with examples, exit codes for usage errors, and one clear line
 * (never a stack trace, never a password) when the database cannot be used. The exit codes and
 * the lines are the binary's own (runBinary): what a shell sees.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Command } from 'commander';
import { buildProgram, environmentHelp } from '../../cli';
import { BIN, requireBuild, runBinary, runCli } from '../support/cli';

beforeAll(requireBuild);

/** Every runnable command, as its words: `['keys', 'create']`, `['migrate']`… */
function commandPaths(command: Command, prefix: string[] = []): string[][] {
  if (command.commands.length === 0) return [prefix];
  return command.commands.flatMap((sub) => commandPaths(sub, [...prefix, sub.name()]));
}

const noDatabase = 'sqlite::memory:';
const DOWN = 'mysql://root:hunter2@127.0.0.1:3399/invoicing';

describe('help', () => {
  const paths = commandPaths(buildProgram());

  test('the program has every command the contract and the issue name', () => {
    expect(paths.map((p) => p.join(' '))).toEqual(
      expect.arrayContaining([
        'init',
        'migrate',
        'serve',
        'business create',
        'business list',
        'business show',
        'business update',
        'keys create',
        'keys list',
        'keys show',
        'keys update',
        'keys revoke',
        'keys rotate',
        'payments simulate',
        'clock show',
        'clock advance',
        'webhooks logs',
        'webhooks replay',
      ]),
    );
  });

  test.each(paths.map((p) => [p.join(' '), p]))('when `invoicing %s --help` is run, then it shows examples and exits 0', async (_name, path) => {
    const res = await runCli(noDatabase, [...path, '--help']);

    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^Usage: invoicing /);
    expect(res.stdout).toMatch(/\nExamples:\n {2}\$ invoicing /);
  });

  test('the program\'s help lists every command as the loaded command lists itself, though none is loaded', async () => {
    const res = await runBinary(noDatabase, ['--help']);

    expect(res.code).toBe(0);
    expect(res.stdout).toBe(`${buildProgram().helpInformation()}${environmentHelp()}\n`);
  });

  test.each([[['--help']], [['--version']], [['keys', 'create', '--help']], [['serve', '--help']], [['migrate', '--help']]])(
    'when `invoicing %j` is run, then it loads neither the database layer nor the services',
    async (args) => {
      // The program run in a process that, as it exits, lists the packages it loaded.
      const probe = `process.argv = [process.argv[0], 'invoicing', ...${JSON.stringify(args)}];
        process.on('exit', () => process.stderr.write(JSON.stringify(Object.keys(require.cache))));
        require(${JSON.stringify(BIN)});`;
      const { stderr } = await promisify(execFile)(process.execPath, ['-e', probe], { env: { ...process.env, DATABASE_URL: noDatabase } });

      const loaded = JSON.parse(stderr) as string[];
      expect(loaded.filter((file) => /node_modules\/(knex|objection|mysql2|better-sqlite3)\//.test(file))).toEqual([]);
      expect(loaded.filter((file) => /dist\/server\/(services|server|db\/database)\.js$/.test(file))).toEqual([]);
    },
  );

  test('when `invoicing --version` is run, then it prints the version of package.json and exits 0', async () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(__dirname, '../../package.json'), 'utf8')) as { version: string };

    const res = await runBinary(noDatabase, ['--version']);

    expect(res.code).toBe(0);
    expect(res.stdout).toBe(`${version}\n`);
  });
});

describe('usage errors', () => {
  test.each([
    ['an unknown command', ['refund']],
    ['an unknown option', ['business', 'list', '--colour']],
    ['a missing argument', ['keys', 'show']],
  ])('when given %s, then it exits 2 with a one-line error', async (_case, args) => {
    const res = await runBinary(noDatabase, args);

    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^error: [^\n]+\n$/);
  });

  test.each([
    [['bussiness', 'list'], "error: unknown command 'bussiness' (did you mean business?)"],
    [['keys', 'crate'], "error: unknown command 'crate' (did you mean create?)"],
    [['keys', 'list', '--bussiness', '1'], "error: unknown option '--bussiness' (did you mean --business?)"],
    [['keys', 'show'], "error: missing required argument 'id' (see invoicing keys show --help)"],
  ])('when `invoicing %j` has a typo or misses an argument, then it says so in one line with the suggestion, not the whole help', async (args, line) => {
    const res = await runBinary(noDatabase, args);

    expect(res.code).toBe(2);
    expect(res.stderr).toBe(`${line}\n`);
    expect(res.stdout).toBe('');
  });
});

describe('output read by a command that stops early', () => {
  test('when `invoicing --help | head -1` closes the pipe, then the command ends quietly, with no stack trace', async () => {
    const { stdout, stderr } = await promisify(execFile)('sh', ['-c', `"${process.execPath}" "${BIN}" --help | head -1`], {
      env: { ...process.env, DATABASE_URL: noDatabase },
    });

    expect(stdout.split('\n')[0]).toBe('Usage: invoicing [options] [command]');
    expect(stderr).toBe('');
  });
});

describe('the environment in --help', () => {
  const lines = environmentHelp().split('\n').slice(2);

  test('every setting has its name in a column of its own, never run into its text', () => {
    const names = lines.filter((line) => /^ {2}\S/.test(line));

    expect(names.length).toBeGreaterThan(20);
    const column = names[0].search(/\S {2,}\S/) + 1;
    for (const line of lines) {
      if (/^ {2}\S/.test(line)) expect(line).toMatch(new RegExp(`^ {2}[A-Z_]+ {2,}\\S`));
      else expect(line.slice(0, column + 2).trim()).toBe('');
    }
    expect(names.some((line) => line.startsWith('  WEBHOOK_RECEIVER_CONCURRENCY  '))).toBe(true);
  });

  test('a setting whose text gives its default is not given a second one', () => {
    const pdfThreads = environmentHelp().split(/\n(?= {2}\S)/).find((item) => item.startsWith('  PDF_THREADS'))!;

    expect(pdfThreads.match(/\(default/g)).toHaveLength(1);
  });
});

describe('a database that cannot be used', () => {
  test.each([['migrate'], ['business', 'list'], ['keys', 'list', '--business', '1'], ['webhooks', 'logs'], ['serve', '--port', '0']])(
    'when the database is down, then `invoicing %s` exits 1 with one line naming it',
    async (...args) => {
      const res = await runBinary(DOWN, args);

      expect(res.code).toBe(1);
      expect(res.stderr).toBe('error: cannot connect to the database at mysql://***@127.0.0.1:3399/invoicing: connection refused (is the database server running?)\n');
      expect(res.stdout).toBe('');
    },
  );

  test('when DATABASE_URL is not a supported URL, then it says so in one line without the password', async () => {
    const res = await runBinary('postgres://app:hunter2@db.example.com/invoicing', ['business', 'list']);

    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: Invalid configuration: "DATABASE_URL" .*\n$/);
    expect(res.stderr).not.toContain('hunter2');
  });

  test('when the host does not exist, then it says the host was not found', async () => {
    const res = await runBinary('mysql://root@no-such-host.invalid:3306/invoicing', ['business', 'list']);

    expect(res.code).toBe(1);
    expect(res.stderr).toBe('error: cannot connect to the database at mysql://***@no-such-host.invalid:3306/invoicing: host not found\n');
  });

  test('when the SQLite file cannot be opened, then it names the file', async () => {
    // A regular file stands where the directory should be.
    const res = await runBinary('sqlite:/etc/hostname/x.sqlite3', ['business', 'list']);

    expect(res.code).toBe(1);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toMatch(/^error: .*\/etc\/hostname\/x\.sqlite3/);
  });

  const mysql = process.env.TEST_DB === 'mysql' ? new URL(process.env.TEST_MYSQL_URL!) : null;
  (mysql ? test : test.skip)('when the database does not exist, then it says so and what to do', async () => {
    const res = await runBinary(`mysql://${mysql!.username}@${mysql!.host}/no_such_database_here`, ['business', 'list']);

    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: the database at .*no_such_database_here does not exist \(create it, then run `invoicing migrate`\)\n$/);
  });

  (mysql ? test : test.skip)('when the password is wrong, then it says the database refused it, without showing it', async () => {
    const res = await runBinary(`mysql://no_such_user:hunter2@${mysql!.host}/test`, ['business', 'list']);

    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: the database at mysql:\/\/\*\*\*@.* refused the user name or password\n$/);
  });
});
