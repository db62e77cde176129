/** The test clock in and out: the advance's body (joi), checked by the route and the CLI alike, and the clock as the API shows it. */
import { Static, Type } from '@sinclair/typebox';
import Joi from 'joi';
import { utcMidnight } from '../clock';
import { closed, envelope } from '../shapes/common';
import { component } from '../shapes/component';
import { isCalendarDate } from '../validation';

/** The furthest one advance moves a test clock: far enough for any billing cycle, short enough that one call stays a few seconds. */
export const MAX_ADVANCE_YEARS = 5;

export interface AdvanceTestClockInput {
  to: Date;
}

/** `YYYY-MM-DD`, or that with a time (`T10:30`, seconds and fractions optional) and a zone (`Z` or `±hh:mm`). */
const TIME = /^(\d{4}-\d{2}-\d{2})(T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d))?$/;

/**
 * A moment as `to` takes it: a date is 00:00 UTC of that date (contract), a date-time that moment.
 * A date that does not exist (2027-02-30) is refused, never rolled over as JavaScript's Date would.
 */
export function parseTestClockTime(value: string): Date | null {
  const match = TIME.exec(value);
  if (!match || !isCalendarDate(match[1])) return null;
  return match[2] === undefined ? utcMidnight(match[1]) : new Date(value);
}

export const advanceTestClockBody = Joi.object<AdvanceTestClockInput>({
  to: Joi.string()
    .required()
    .pattern(TIME)
    .custom((value: string, helpers) => parseTestClockTime(value) ?? helpers.error('any.invalid'))
    .messages({
      'string.pattern.base': '{{#label}} must be an ISO 8601 date (YYYY-MM-DD, meaning 00:00 UTC) or date-time with a zone (2027-01-31T09:00:00Z)',
      'any.invalid': '{{#label}} must be a real calendar date',
    })
    .description(
      `Where the test clock goes: an ISO 8601 date (\`2027-01-31\`, meaning 00:00 UTC of that date) or date-time with a zone (\`2027-01-31T09:00:00Z\`). Never before the clock's time, and at most ${MAX_ADVANCE_YEARS} years after it (422 \`errors.to\`).`,
    ),
});

export const TestClockShape = component(
  'TestClock',
  closed(
    {
      now: Type.String({ format: 'date-time', description: "The test mode's time (ISO 8601 UTC, with milliseconds): what its records are dated by and its due dates judged against" }),
      frozen: Type.Boolean({
        description: 'True once the clock has been set (it then stands still at `now` until advanced again); false while the test mode runs on the real time',
      }),
      livemode: Type.Literal(false, { description: 'Always false: live mode runs on the real time' }),
    },
    { description: "A business's test-mode clock" },
  ),
);
export type TestClockView = Static<typeof TestClockShape>;

export const TestClockEnvelope = envelope('TestClockEnvelope', 'test_clock', TestClockShape);
