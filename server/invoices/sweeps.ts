/**
 * How many invoices a real-time sweep (overdue, reminders) works at once. Each waits mostly on the
 * database (a dozen statements and a commit), so one at a time a thousand reminders took 18 s on
 * MariaDB (bench:collections). Each is its own transaction on its own invoice, so they do not wait
 * for one another. A test clock's advance works one at a time, so its events keep their order.
 */
export const SWEEP_CONCURRENCY = 4;
