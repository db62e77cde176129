/** A test clock as the API shows it. Pure. */
import { TestClockView } from './schema';

/** A test mode's clock: its stored time, or the real time while none is stored. */
export function toTestClockView(stored: Date | null, realTime: Date): TestClockView {
  return { now: (stored ?? realTime).toISOString(), frozen: stored !== null, livemode: false };
}
