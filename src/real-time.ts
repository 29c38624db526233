/**
 * Whether a date and time as written exists: `Date` rolls what does not over into another (2026-02-30 is
 * 2 March, 24:00 the next day), so a wrong guess would be set for a day nobody named. No zone is involved:
 * a field that exists somewhere exists in every zone. Kept apart from time.ts, so the CLI checks without croner.
 */
export function namesRealTime(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): boolean {
  const at = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  return (
    at.getUTCFullYear() === year &&
    at.getUTCMonth() === month - 1 &&
    at.getUTCDate() === day &&
    at.getUTCHours() === hour &&
    at.getUTCMinutes() === minute &&
    at.getUTCSeconds() === second
  );
}
