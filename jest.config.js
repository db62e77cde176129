// The whole suite runs once per database: SQLite always, MariaDB/MySQL when TEST_MYSQL_URL is set.
const project = (database) => ({
  displayName: database,
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  // Pure-logic unit tests touch no database: once is enough.
  testPathIgnorePatterns: database === 'sqlite' ? [] : ['<rootDir>/test/unit/'],
  setupFiles: [`<rootDir>/test/support/use-${database}.js`],
  // Transpile only: `npm run typecheck` checks the types once, before the tests, instead of per test file.
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/test/tsconfig.jest.json' }] },
});

const projects = [project('sqlite')];
if (process.env.TEST_MYSQL_URL) projects.push(project('mysql'));
else console.log('TEST_MYSQL_URL is not set: running the suite on SQLite only.');
if (!process.env.TEST_REDIS_URL) console.log('TEST_REDIS_URL is not set: the shared (Redis) rate-limit test is skipped.');

module.exports = {
  projects,
  // Each test file loads the whole server into a fresh module registry, and a registry is not always
  // collected after its file (about 55 MB a file stayed on the heap): run in band, as on a 2-core CI
  // machine, 174 files outgrew Node's 4 GB heap. A worker past this after a file is replaced instead.
  workerIdleMemoryLimit: '1GB',
  testTimeout: 30000,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
};
