/** Timestamps are stored as UTC text `YYYY-MM-DD HH:MM:SS.mmm` on both drivers and shown as ISO 8601. */
export function toDbTime(date: Date): string {
  return date.toISOString().replace('T', ' ').replace('Z', '');
}

export function fromDbTime(value: string | Date | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  const [datePart, timePart = '00:00:00'] = value.split(/[ T]/);
  const [hms, fraction = ''] = timePart.replace('Z', '').split('.');
  return `${datePart}T${hms}.${fraction.padEnd(3, '0').slice(0, 3)}Z`;
}
