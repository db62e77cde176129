import { fromDbTime, toDbTime } from '../../server/db/time';

describe('database timestamps', () => {
  test('when a stored timestamp is read, then it shows as ISO 8601 with milliseconds', () => {
    expect(fromDbTime('2026-11-24 23:24:04.748')).toBe('2026-11-24T23:24:04.748Z');
  });

  test('when a timestamp has fewer fraction digits or none, then it is padded to milliseconds', () => {
    expect(fromDbTime('2026-11-24 23:24:04.7')).toBe('2026-11-24T23:24:04.700Z');
    expect(fromDbTime('2026-11-24 23:24:04')).toBe('2026-11-24T23:24:04.000Z');
    expect(fromDbTime('2026-11-24')).toBe('2026-11-24T00:00:00.000Z');
  });

  test('when a value is written and read back, then it is the same instant', () => {
    const instant = new Date('2026-02-28T01:02:03.045Z');

    expect(fromDbTime(toDbTime(instant))).toBe(instant.toISOString());
    expect(fromDbTime(instant)).toBe(instant.toISOString());
    expect(fromDbTime(null)).toBeNull();
  });
});
