#!/usr/bin/env node
// `npm run build` (and `npm install`'s prepare): dist/ from the TypeScript sources, each file's types
// stripped by esbuild on its own (as tsconfig's isolatedModules allows), in about a second where tsc
// took half a minute; `npm run typecheck` checks the types, in CI before the tests. dist/ mirrors the
// source tree: the CLI and the server, the migrations, the benchmarks, and the test doubles the
// benchmarks start. import() stays import(), so ESM-only packages (got, inquirer) still load.
const { readdirSync } = require('node:fs');
const path = require('node:path');
const { buildSync } = require('esbuild');

const root = path.resolve(__dirname, '..');
const typescriptIn = (dir) =>
  readdirSync(path.join(root, dir), { recursive: true })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => path.join(dir, file));
const sources = ['bin', 'server', 'cli', 'plugin', 'migrations', 'bench'].flatMap(typescriptIn);
const doublesTheBenchmarksStart = ['test/support/proxy.ts', 'test/support/balancer.ts', 'test/support/net.ts', ...typescriptIn('test/support/woocommerce')];

buildSync({
  absWorkingDir: root,
  entryPoints: [...sources, ...doublesTheBenchmarksStart],
  outdir: 'dist',
  outbase: '.',
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
});
