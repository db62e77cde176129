#!/usr/bin/env node
import { run } from '../cli';

// A reader that stops early (`invoicing --help | head`) closes the pipe: the output is no longer
// wanted, so the command ends quietly, as `ls | head` does, rather than with a stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  process.exit(0);
});

// run() answers every failure with an exit code: it never rejects.
void run(process.argv).then((code) => {
  // `serve` keeps running on its open server; every other command ends with its exit code.
  if (code !== 0) process.exit(code);
  else process.exitCode = 0;
});
