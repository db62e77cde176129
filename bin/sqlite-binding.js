#!/usr/bin/env node
// This package's `install` script, run by npm in place of better-sqlite3's own (denied in package.json's
// allowScripts). It makes the native SQLite binding as better-sqlite3's script does, a prebuilt binary from
// GitHub when one can be fetched, else compiled from source, but compiles SQLite's C at -O2 (the level
// SQLite's own build uses) rather than node-gyp's -O3: that one 9 MB C file is most of a fresh `npm install`
// where GitHub cannot be reached, 83 CPU-seconds at -O3 and 54 at -O2, and a query workload ran as fast
// within the measuring noise (5 %). When the binding already loads it does nothing, so a repeated `npm install`
// stays quick, and after a Node.js upgrade (another ABI) it builds again. Run it through npm (`npm run
// install`), whose PATH has node-gyp.
const { execSync } = require('node:child_process');
const path = require('node:path');

function bindingLoads() {
  try {
    new (require('better-sqlite3'))(':memory:').close();
    return true;
  } catch {
    return false;
  }
}

function succeeds(command, cwd, env) {
  try {
    execSync(command, { cwd, stdio: 'inherit', env: { ...process.env, ...env } });
    return true;
  } catch {
    return false;
  }
}

if (!bindingLoads()) {
  const cwd = path.dirname(require.resolve('better-sqlite3/package.json'));
  // CFLAGS come after gyp's flags on the compiler's command line, so this -O2 wins over -O3; the C++ wrapper
  // (CXXFLAGS, a few seconds) keeps -O3, and the caller's own CFLAGS still come last.
  const fromSource = { CFLAGS: `-O2 ${process.env.CFLAGS ?? ''}` };
  if (!succeeds('prebuild-install', cwd, {}) && !succeeds('node-gyp rebuild --release', cwd, fromSource)) process.exit(1);
}
