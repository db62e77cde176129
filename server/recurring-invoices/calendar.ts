/**
 * The issue dates of a schedule: date n is `start_date` plus n × interval_count intervals, each
 * computed from the start and never from the date before, so a month-end start keeps its day where
 * the month has it (Jan 31 → Feb 28 → Mar 31 → Apr 30), as Stripe's billing anchor does. Pure.
 */
import { addDays } from '../validation';

export const INTERVALS = ['week', 'month', 'quarter', 'year'] as const;
export type Interval = (typeof INTERVALS)[number];

/** The months of each month-based interval (a week is 7 days). */
const MONTHS: Record<Exclude<Interval, 'week'>, number> = { month: 1, quarter: 3, year: 12 };

/** The longest interval × interval_count: a year (52 weeks, 12 months, 4 quarters, 1 year), as Stripe allows. */
export const MAX_INTERVAL_COUNT: Record<Interval, number> = { week: 52, month: 12, quarter: 4, year: 1 };

export interface Cadence {
  start_date: string;
  interval: Interval;
  interval_count: number;
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function parts(date: string): [number, number, number] {
  const [year, month, day] = date.split('-').map(Number);
  return [year, month, day];
}

/** Date `n` of the schedule (date 0 is its start). */
export function issueDateAt(cadence: Cadence, n: number): string {
  if (cadence.interval === 'week') return addDays(cadence.start_date, 7 * cadence.interval_count * n);
  const [year, month, day] = parts(cadence.start_date);
  const months = month - 1 + MONTHS[cadence.interval] * cadence.interval_count * n;
  const toYear = year + Math.floor(months / 12);
  const toMonth = (months % 12) + 1;
  const toDay = Math.min(day, daysInMonth(toYear, toMonth));
  return `${String(toYear).padStart(4, '0')}-${String(toMonth).padStart(2, '0')}-${String(toDay).padStart(2, '0')}`;
}

/** The first date of the schedule on or after `from` (the start when `from` comes before it). */
export function firstDateFrom(cadence: Cadence, from: string): string {
  if (from <= cadence.start_date) return cadence.start_date;
  // An estimate just below the answer, then forward: at most a step or two.
  let n: number;
  if (cadence.interval === 'week') {
    const days = (Date.parse(`${from}T00:00:00Z`) - Date.parse(`${cadence.start_date}T00:00:00Z`)) / 86_400_000;
    n = Math.floor(days / (7 * cadence.interval_count));
  } else {
    const [fromYear, fromMonth] = parts(from);
    const [startYear, startMonth] = parts(cadence.start_date);
    n = Math.floor(((fromYear - startYear) * 12 + fromMonth - startMonth) / (MONTHS[cadence.interval] * cadence.interval_count)) - 1;
  }
  n = Math.max(0, n);
  while (issueDateAt(cadence, n) < from) n++;
  return issueDateAt(cadence, n);
}

/** The schedule's date after `date`. */
export function dateAfter(cadence: Cadence, date: string): string {
  return firstDateFrom(cadence, addDays(date, 1));
}
