/** The time, injectable: retry schedules are tested by moving a clock, not by waiting minutes. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
