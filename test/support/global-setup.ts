/** jest's globalSetup of each project: the run's migrated template database (template-database.ts). */
export { setup as default } from './template-database';
