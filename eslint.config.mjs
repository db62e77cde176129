// ESLint with typescript-eslint's type-aware rules: floating promises and unsafe `any` are errors.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// `no-restricted-syntax` of a later block replaces an earlier one's for the files both match: each block below
// lists every selector that applies to its files.
const rawKnex = { selector: "MemberExpression[property.name='knex'][object.name='db']", message: 'Query through the models (Model.of(actor, db.current)); the raw knex handle is private to server/db/.' };
const timeMessage = 'Read the time through server/clock.ts: a Clock (systemClock, businessClock or an injected one) for what time it is, startStopwatch() for how long something took.';
const timeReads = [
  { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: timeMessage },
  { selector: "CallExpression[callee.name='Date']", message: timeMessage },
  { selector: "MemberExpression[object.name='Date'][property.name='now']", message: timeMessage },
  { selector: "MemberExpression[object.name='performance'][property.name='now']", message: timeMessage },
  { selector: "MemberExpression[object.name='process'][property.name='hrtime']", message: timeMessage },
];

export default tseslint.config(
  // .ci/api-tools/ needs packages that only CI installs and a client generated from the document: .ci/api-check lints it.
  { ignores: ['dist/', 'node_modules/', 'data/', 'coverage/', '**/*.js', '**/*.mjs', '**/*.cjs', '.ci/api-tools/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Test response bodies are JSON typed `any` on purpose: test/support/http.ts checks each one against the
    // OpenAPI document at run time, which is a stronger check than casting every body to a declared type.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // The raw knex handle stays in the data layer: services query through the tenant models. The time is read
    // through server/clock.ts, so that a business's clock (a test mode's may be frozen) dates what is written for it.
    files: ['server/**/*.ts', 'cli/**/*.ts', 'plugin/**/*.ts'],
    ignores: ['server/db/**'],
    rules: { 'no-restricted-syntax': ['error', rawKnex, ...timeReads] },
  },
  {
    // server/db/ may use the raw handle, but reads the time like everyone else.
    files: ['server/db/**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', ...timeReads] },
  },
  {
    // The one module that reads the system's time.
    files: ['server/clock.ts'],
    rules: { 'no-restricted-syntax': ['error', rawKnex] },
  },
);
