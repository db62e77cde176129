/** Exit codes: 2 for a usage error (missing or bad option), 1 for a refused or failed command. */
export class UsageError extends Error {}

export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
