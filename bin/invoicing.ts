#!/usr/bin/env node
import { run } from '../cli';

// run() answers every failure with an exit code: it never rejects.
void run(process.argv).then((code) => {
  // `serve` keeps running on its open server; every other command ends with its exit code.
  if (code !== 0) process.exit(code);
  else process.exitCode = 0;
});
