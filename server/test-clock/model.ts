/**
 * A test clock is a `business_clocks` row: server/db/clocks.ts defines it, as every request reads it
 * to date what it writes; the test-clock resource moves it, through the same class, from here.
 */
export { BusinessClocks } from '../db/clocks';
export type { Tenancy, TimeDrivenWork } from '../db/clocks';
