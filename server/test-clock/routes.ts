import { READ_SCOPES, WRITE_SCOPES } from '../auth/scopes';
import { routeUsing } from '../http/routes';
import { advanceTestClockBody, MAX_ADVANCE_YEARS, TestClockEnvelope } from './schema';
import { TestClockService } from './service';

const route = routeUsing<{ testClocks: TestClockService }>();

export const testClockRoutes = [
  route({
    method: 'get',
    path: '/test-clock',
    operationId: 'getTestClock',
    summary: "Read the test mode's clock",
    description:
      "Test keys only (a live key gets 403 `test_mode_only`); any read scope. `frozen: false` until the clock is first advanced: the test mode runs on the real time, as live mode always does. The clock is stored in the database, so every server process agrees on it (a process may keep serving the previous time for up to KEY_CACHE_TTL_MS after a move, as it does a revoked key).",
    tag: 'Test clocks',
    scopes: [...READ_SCOPES],
    response: { status: 200, description: 'The test clock', schema: TestClockEnvelope },
    errors: { '403': 'ForbiddenOrTestModeOnly' },
    handle: async ({ cred }, s) => ({ test_clock: await s.testClocks.get(cred) }),
  }),
  route({
    method: 'post',
    path: '/test-clock/advance',
    operationId: 'advanceTestClock',
    summary: "Move the test mode's time forward",
    description: `Test keys only (a live key gets 403 \`test_mode_only\`); any :write scope. Moves the business's test-mode time to \`to\` (a date means 00:00 UTC of that date), never back and at most ${MAX_ADVANCE_YEARS} years at once (422 \`errors.to\`). Everything time-driven for the test mode on the way (recurring invoices, payment reminders, \`invoice.overdue\`) runs in time order, each record and event dated at the moment it was due; the call returns once they are recorded (if one cannot be, e.g. a recurring invoice whose e-invoice is not ready, 422 \`einvoice_not_ready\`, and the clock stays just before the first moment whose work did not finish, so the call can be repeated once it is fixed), and from then on the test mode's new records are dated \`to\` (the clock stands still there). Live mode, other businesses, rate limits, Idempotency-Key expiry, webhook retries and token lifetimes keep the real time. Two advances of one business at once never do anything twice, and the clock ends at the later \`to\`; in one server process the second waits for the first and is judged from where it left the clock.`,
    tag: 'Test clocks',
    scopes: [...WRITE_SCOPES],
    body: advanceTestClockBody,
    // Many short transactions of its own (an invoice issued, a batch of reminders), never one around them all.
    callsOut: true,
    response: { status: 200, description: 'The test clock at its new time', schema: TestClockEnvelope },
    errors: { '403': 'ForbiddenOrTestModeOnly', '422': 'UnprocessableOrEinvoiceNotReady' },
    handle: async ({ cred, body }, s) => ({ test_clock: await s.testClocks.advance(cred, { to: body.to }) }),
  }),
];
