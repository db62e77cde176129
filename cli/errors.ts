/** Exit codes: 2 for a usage error (missing or bad option), 1 for a refused or failed command. */
export class UsageError extends Error {}

/** A command that cannot go on for a reason outside the input (a database that is down): exit 1, one line. */
export class CliFailure extends Error {}

export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
