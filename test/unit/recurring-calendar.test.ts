/**
 * The issue dates of a recurring invoice (server/recurring-invoices/calendar.ts): examples of
 * month ends and leap years, and properties over random starts and cadences.
 */
import fc from 'fast-check';
import { Cadence, dateAfter, firstDateFrom, INTERVALS, issueDateAt, MAX_INTERVAL_COUNT } from '../../server/recurring-invoices/calendar';
import { addDays, isCalendarDate } from '../../server/validation';

const dates = (cadence: Cadence, count: number) => Array.from({ length: count }, (_, n) => issueDateAt(cadence, n));

describe('issue dates', () => {
  test.each([
    ['a month-end start keeps to the last day of shorter months and returns to 31', { start_date: '2027-01-31', interval: 'month', interval_count: 1 }, ['2027-01-31', '2027-02-28', '2027-03-31', '2027-04-30', '2027-05-31']],
    ['a leap February takes its 29th', { start_date: '2028-01-31', interval: 'month', interval_count: 1 }, ['2028-01-31', '2028-02-29', '2028-03-31']],
    ['a start on the 30th stays on the 30th', { start_date: '2027-01-30', interval: 'month', interval_count: 1 }, ['2027-01-30', '2027-02-28', '2027-03-30']],
    ['a quarter is three months from the start', { start_date: '2027-11-30', interval: 'quarter', interval_count: 1 }, ['2027-11-30', '2028-02-29', '2028-05-30', '2028-08-30']],
    ['a yearly Feb 29 falls on Feb 28 until the next leap year', { start_date: '2028-02-29', interval: 'year', interval_count: 1 }, ['2028-02-29', '2029-02-28', '2030-02-28', '2031-02-28', '2032-02-29']],
    ['two weeks are fourteen days, across a year end', { start_date: '2027-12-20', interval: 'week', interval_count: 2 }, ['2027-12-20', '2028-01-03', '2028-01-17']],
    ['every two months from December', { start_date: '2027-12-31', interval: 'month', interval_count: 2 }, ['2027-12-31', '2028-02-29', '2028-04-30', '2028-06-30']],
  ] as const)('%s', (_case, cadence, expected) => {
    expect(dates(cadence, expected.length)).toEqual(expected);
  });

  test('when asked from a date between two issue dates, then the first date from it is the later one', () => {
    const cadence: Cadence = { start_date: '2027-01-31', interval: 'month', interval_count: 1 };

    expect(firstDateFrom(cadence, '2026-06-01')).toBe('2027-01-31');
    expect(firstDateFrom(cadence, '2027-03-01')).toBe('2027-03-31');
    expect(firstDateFrom(cadence, '2027-03-31')).toBe('2027-03-31');
    expect(dateAfter(cadence, '2027-03-31')).toBe('2027-04-30');
  });
});

describe('issue date properties', () => {
  const aCadence = fc
    .record({
      day: fc.integer({ min: Date.UTC(2000, 0, 1) / 86_400_000, max: Date.UTC(2090, 11, 31) / 86_400_000 }),
      interval: fc.constantFrom(...INTERVALS),
      count: fc.integer({ min: 1, max: 52 }),
    })
    .map(({ day, interval, count }): Cadence => ({
      start_date: new Date(day * 86_400_000).toISOString().slice(0, 10),
      interval,
      interval_count: Math.min(count, MAX_INTERVAL_COUNT[interval]),
    }));

  test('every date is a calendar date after the one before; a month-based one keeps the start\'s day, or its month\'s last', () => {
    fc.assert(
      fc.property(aCadence, fc.integer({ min: 0, max: 40 }), (cadence, n) => {
        const date = issueDateAt(cadence, n);
        const next = issueDateAt(cadence, n + 1);
        const startDay = Number(cadence.start_date.slice(8));
        const day = Number(date.slice(8));
        const monthEnds = !isCalendarDate(`${date.slice(0, 8)}${String(day + 1).padStart(2, '0')}`);
        return isCalendarDate(date) && next > date && (cadence.interval === 'week' || day === startDay || (day < startDay && monthEnds));
      }),
    );
  });

  test('the first date from any day is a schedule date on or after it, and none lies between', () => {
    fc.assert(
      fc.property(aCadence, fc.integer({ min: 0, max: 4000 }), (cadence, offset) => {
        const from = addDays(cadence.start_date, offset);
        const found = firstDateFrom(cadence, from);
        const n = dates(cadence, 800).indexOf(found);
        return n >= 0 && found >= from && (n === 0 || issueDateAt(cadence, n - 1) < from) && dateAfter(cadence, found) === issueDateAt(cadence, n + 1);
      }),
    );
  });
});
