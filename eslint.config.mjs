// ESLint with typescript-eslint's type-aware rules: floating promises and unsafe `any` are errors.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'coverage/', '**/*.js', '**/*.mjs', '**/*.cjs'] },
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
    // The raw knex handle stays in the data layer: services query through the tenant models.
    files: ['server/**/*.ts', 'cli/**/*.ts', 'plugin/**/*.ts'],
    ignores: ['server/db/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "MemberExpression[property.name='knex'][object.name='db']", message: 'Query through the models (Model.of(actor, db.current)); the raw knex handle is private to server/db/.' },
      ],
    },
  },
);
