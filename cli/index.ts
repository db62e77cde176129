/** The `invoicing` program: commands, and the mapping of errors to messages and exit codes. */
import fs from 'node:fs';
import path from 'node:path';
import { Command, CommanderError, Help } from 'commander';
import { isDatabaseBusy } from '../server/db/errors';
import { AppError } from '../server/errors';
import { COMMAND_GROUPS, CommandGroup, listedCommand } from './commands/groups';
import { CliFailure, EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_USAGE, invalidOptions, redactUrls, UsageError } from './errors';
import { cliIo, CliIo, CliOutput, withIo } from './io';

/** A setting's default as shown in help: a string as it is, anything else (numbers, booleans) as JSON. */
const shownDefault = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** The settings `--help` lists: each name in a column of its own, its text wrapped beside it, as commander lays out options. */
export function environmentHelp(): string {
  // Required here, when help is shown: the settings' schema (joi) is the heaviest part of the help.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { describeConfig } = require('../server/config') as typeof import('../server/config');
  const settings = describeConfig();
  const layout = new Help();
  layout.helpWidth = widthOf(cliIo().stdout);
  const nameWidth = Math.max(...settings.map(({ key }) => key.length));
  // A text that already says its default (one computed from the machine) is not given a second one.
  const text = ({ doc, default: value }: (typeof settings)[number]) => (value === undefined || doc.includes('(default') ? doc : `${doc} (default: ${shownDefault(value)})`);
  return `\nEnvironment:\n${settings.map((setting) => layout.formatItem(setting.key, nameWidth, text(setting), layout)).join('\n')}`;
}

/** The version of package.json, found from here in the sources (cli/) and in the build (dist/cli/). */
function packageVersion(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
  }
  return 'unknown';
}

/** Commands only listed (not loaded) and the term the program's help shows for each. */
const listedTerms = new WeakMap<Command, string>();

function programWith(commands: Command[]): Command {
  const program = new Command('invoicing')
    .description('Partner invoicing API: server and admin tools')
    .version(packageVersion())
    .exitOverride()
    .configureHelp({
      subcommandTerm(this: Help, command: Command) {
        return listedTerms.get(command) ?? Help.prototype.subcommandTerm.call(this, command);
      },
    })
    .addHelpText('after', environmentHelp);
  for (const command of commands) {
    // Added commands inherit neither exitOverride nor the output: every level throws, and run()
    // picks the exit code; every level writes help and errors to the run's streams.
    everyLevel(command).forEach((level) => level.exitOverride().configureOutput(outputOf(level)));
    program.addCommand(command);
  }
  return program.configureOutput(outputOf(program));
}

/** `invoicing keys create`: the words that run `command`. */
const commandPath = (command: Command): string => (command.parent ? `${commandPath(command.parent)} ${command.name()}` : command.name());

/**
 * Commander's error as one line: `unknown command 'bussiness' (did you mean business?)`, or where
 * there is no suggestion, the help that lists what there is; never the whole help.
 */
export function oneLineError(text: string, command: Command): string {
  const [first, ...rest] = text.trim().split('\n');
  const suggestion = /\(Did you mean (.+)\?\)/.exec(rest.join(' '))?.[1];
  return `${first}${suggestion ? ` (did you mean ${suggestion}?)` : ` (see ${commandPath(command)} --help)`}\n`;
}

/** The run's output for `command`'s help and errors. */
const outputOf = (command: Command) => ({ ...RUN_OUTPUT, outputError: (text: string, write: (text: string) => void) => write(oneLineError(text, command)) });

const everyLevel = (command: Command): Command[] => [command, ...command.commands.flatMap(everyLevel)];

/** A terminal's width, as commander reads it, and its 80 columns for a pipe. */
const widthOf = (stream: CliOutput) => (stream.isTTY ? stream.columns : undefined) ?? 80;

/** Commander's help and errors, written to the streams of the run under way (see ./io). */
const RUN_OUTPUT = {
  writeOut: (text: string) => void cliIo().stdout.write(text),
  writeErr: (text: string) => void cliIo().stderr.write(text),
  getOutHelpWidth: () => widthOf(cliIo().stdout),
  getErrHelpWidth: () => widthOf(cliIo().stderr),
};

/** The whole program, every command loaded (its tests walk every command). */
export function buildProgram(): Command {
  return programWith(COMMAND_GROUPS.map((group) => group.load()));
}

/** The command `args` name (`keys …`, `help keys`), if any: the only one loaded to run them. */
function namedGroup(args: string[]): CommandGroup | undefined {
  const words = args.filter((arg) => !arg.startsWith('-'));
  const name = words[0] === 'help' ? words[1] : words[0];
  return COMMAND_GROUPS.find((group) => group.name === name);
}

/** The program that runs `argv`: the command it names loaded, every other one only listed in help. */
function programFor(argv: string[]): Command {
  const named = namedGroup(argv.slice(2));
  return programWith(
    COMMAND_GROUPS.map((group) => {
      if (group === named) return group.load();
      const listed = listedCommand(group);
      listedTerms.set(listed, group.term);
      return listed;
    }),
  );
}

/** Service fields whose flag is not their name in kebab case. */
const FLAG_OF_FIELD: Record<string, string> = { businessId: '--business', keyId: '--key', appId: '--app' };

/** The flag a service's field error is about: `webhookSecret` and `webhook_url` → `--webhook-secret`, `--webhook-url`. */
export function flagOf(field: string): string {
  return FLAG_OF_FIELD[field] ?? `--${field.replace(/([a-z0-9])([A-Z])/g, '$1-$2').replace(/_/g, '-').toLowerCase()}`;
}

/** What was typed for `flag` on the command that ran, when it was given on the command line. */
function typedFor(command: Command | undefined, flag: string): unknown {
  const option = command?.options.find((candidate) => candidate.long === flag);
  return option ? command!.opts()[option.attributeName()] : undefined;
}

/**
 * Runs the program on `argv` (node, script, then the words) and answers its exit code; it never
 * rejects. `io` replaces the process's environment and streams for this run (the tests' runs).
 */
export function run(argv: string[], io?: CliIo): Promise<number> {
  return withIo(io, () => runProgram(argv));
}

async function runProgram(argv: string[]): Promise<number> {
  const { stderr } = cliIo();
  // The command whose action runs: a refused value is named with what was typed for it.
  let ran: Command | undefined;
  try {
    await programFor(argv)
      .hook('preAction', (_program, action) => void (ran = action))
      .parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.exitCode === 0 || err.code === 'commander.helpDisplayed' || err.code === 'commander.version' ? 0 : EXIT_USAGE;
    }
    if (err instanceof UsageError) {
      stderr.write(`error: ${err.message}\n`);
      return EXIT_USAGE;
    }
    if (err instanceof CliFailure) {
      stderr.write(`error: ${err.message}\n`);
      return EXIT_FAILURE;
    }
    if (err instanceof AppError) {
      // A refused value is a usage error whichever side found it: `12,50` and `12.505` exit alike.
      if (!err.details) {
        stderr.write(`error: ${err.message}\n`);
        return EXIT_FAILURE;
      }
      stderr.write(`error: ${invalidOptions(err.details, flagOf, (field) => typedFor(ran, flagOf(field)))}\n`);
      return EXIT_USAGE;
    }
    // Ctrl-C at a prompt: inquirer's ExitPromptError.
    if (err instanceof Error && err.name === 'ExitPromptError') {
      stderr.write('\ninterrupted: nothing more was done\n');
      return EXIT_INTERRUPTED;
    }
    // knex's message would start with the statement: the person needs to know to try again.
    if (isDatabaseBusy(err)) {
      stderr.write('error: the database is busy with other writers (the server or another command held it past DATABASE_BUSY_TIMEOUT_MS): try again; nothing was written\n');
      return EXIT_FAILURE;
    }
    // Anything else: its first line only, never a stack trace, and no password from a URL.
    stderr.write(`error: ${redactUrls(err instanceof Error ? err.message : String(err)).split('\n')[0]}\n`);
    return EXIT_FAILURE;
  }
}
