// The whole suite runs once per database: SQLite always, MariaDB/MySQL when TEST_MYSQL_URL is set.
const project = (database) => ({
  displayName: database,
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  // Pure-logic unit tests touch no database: once is enough.
  testPathIgnorePatterns: database === 'sqlite' ? [] : ['<rootDir>/test/unit/'],
  setupFiles: [`<rootDir>/test/support/use-${database}.js`],
  // Transpile only, with esbuild: `npm run typecheck` checks the types once, before the tests.
  transform: { '^.+\\.ts$': '<rootDir>/test/support/esbuild-transform.js' },
});

const projects = [project('sqlite')];
if (process.env.TEST_MYSQL_URL) projects.push(project('mysql'));
else console.log('TEST_MYSQL_URL is not set: running the suite on SQLite only.');
if (!process.env.TEST_REDIS_URL) console.log('TEST_REDIS_URL is not set: the shared (Redis) rate-limit test is skipped.');

module.exports = {
  projects,
  // One migrated database per run and driver, which each test app copies rather than migrating its own.
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // Test files run in parallel, one per core: each makes its own scratch database, listens on
  // ephemeral ports and writes to its own temporary folders, so no two files share anything but
  // the MariaDB and Redis servers (Redis keys under a random prefix). Many files wait on child
  // processes, sockets and the database, so a worker per core keeps both cores busy.
  maxWorkers: '100%',
  // Each test file loads the whole server into a fresh module registry, and a registry is not always
  // collected after its file (about 55 MB a file stayed on the heap): in one process, 174 files
  // outgrew Node's 4 GB heap. A worker past this after a file is replaced instead.
  workerIdleMemoryLimit: '1GB',
  // A hang detector, not a speed budget: tests wait for conditions, each with its own deadline, and
  // a CLI test that starts a dozen `invoicing` processes takes three times as long on a loaded
  // 2-core machine (30 s failed there) as on an idle one.
  testTimeout: 120_000,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
};
