/**
 * Documents give way to API requests: a document thread lowers its own scheduling priority, so that
 * on a machine with few cores a burst of PDFs slows the PDFs, not every request of the process
 * (bench:einvoice-http: GET /clients kept 0.22–0.43× of its throughput beside eight connections
 * fetching Factur-X at the same priority). When the machine has a core to spare the thread still
 * takes all of it; only when they compete does the request thread come first.
 */
import fs from 'node:fs';
import os from 'node:os';

/** The niceness of a document thread: a third of a request thread's CPU share when both want a core (Linux's weights: 1024 at 0, 335 at 5). */
export const DOCUMENT_THREAD_NICENESS = 5;

/**
 * Lowers the priority of the calling thread, not the process's. Linux only: there the thread's own
 * id (from /proc/thread-self) names it to setpriority; elsewhere, or where it is refused, the thread
 * keeps the process's priority, which is only slower under load, never wrong.
 */
export function lowerThisThreadPriority(niceness = DOCUMENT_THREAD_NICENESS): void {
  try {
    const threadId = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(threadId) && threadId > 0) os.setPriority(threadId, Math.max(os.getPriority(threadId), niceness));
  } catch {
    // Not Linux, or not allowed: the priority stays as it was.
  }
}
