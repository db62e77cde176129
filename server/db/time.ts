/** Timestamps are stored as UTC text `YYYY-MM-DD HH:MM:SS.mmm` on both drivers and shown as ISO 8601. */
export function toDbTime(date: Date): string {
  return date.toISOString().replace('T', ' ').replace('Z', '');
}

export function fromDbTime(value: string | Date | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  // The stored form itself, as every row written by this code holds it: the cheap path of list reads.
  if (value.length === 23 && value[10] === ' ' && value[19] === '.') return `${value.slice(0, 10)}T${value.slice(11)}Z`;
  const [datePart, timePart = '00:00:00'] = value.split(/[ T]/);
  const [hms, fraction = ''] = timePart.replace('Z', '').split('.');
  return `${datePart}T${hms}.${fraction.padEnd(3, '0').slice(0, 3)}Z`;
}
