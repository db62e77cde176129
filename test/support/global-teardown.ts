/** jest's globalTeardown of each project: drops the run's template database (template-database.ts). */
export { teardown as default } from './template-database';
