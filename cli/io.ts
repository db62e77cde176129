/**
 * Where a command reads its settings and input and writes its output: this process's environment
 * and standard streams, or those a caller gives `run()` for one run. The tests run most commands in
 * their own process that way, with the same code as the binary, rather than start a Node process
 * that loads the whole program for each command (three quarters of the CLI tests' time went there).
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface CliOutput {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: CliOutput;
  stderr: CliOutput;
}

/** The process's own, read when used: touching process.stdin opens it. */
const PROCESS_IO: CliIo = {
  get env() {
    return process.env;
  },
  get stdin() {
    return process.stdin;
  },
  get stdout() {
    return process.stdout;
  },
  get stderr() {
    return process.stderr;
  },
};

const given = new AsyncLocalStorage<CliIo>();

/** The environment and streams of the command running now. */
export function cliIo(): CliIo {
  return given.getStore() ?? PROCESS_IO;
}

/** Runs `work` with `io` as the command's environment and streams (the process's when undefined). */
export function withIo<T>(io: CliIo | undefined, work: () => T): T {
  return io ? given.run(io, work) : work();
}
