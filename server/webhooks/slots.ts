/**
 * The delivery worker's per-receiver accounting (pure: no I/O, no clock). A process sends at most
 * `slots` deliveries at once, and at most `perReceiver` to one URL, so one slow partner cannot take
 * every slot; it holds (leased: waiting, being prepared or in flight) at most twice that per URL, so
 * a claim takes a batch for a receiver, not one delivery, yet never more than it can soon send.
 */
export interface SlotLimits {
  /** Deliveries in flight at once. */
  slots: number;
  /** Deliveries in flight at once to one URL. */
  perReceiver: number;
}

export class ReceiverSlots {
  private readonly heldByUrl = new Map<string, number>();
  private readonly sendingByUrl = new Map<string, number>();
  private sending = 0;

  constructor(private readonly limits: SlotLimits) {}

  /** Deliveries in flight. */
  get inFlight(): number {
    return this.sending;
  }

  /** Deliveries held for one URL at most: its slots' worth in flight and as many waiting to follow. */
  get heldPerReceiver(): number {
    return 2 * this.limits.perReceiver;
  }

  /** Slots a claim may fill, with `pending` deliveries held but not yet in flight. */
  free(pending: number): number {
    return this.limits.slots - this.sending - pending;
  }

  /** A delivery leased to this process (claimed, or written leased by the outbox). */
  hold(url: string): void {
    count(this.heldByUrl, url, 1);
  }

  /** A held delivery is done with: sent, handed back or left to its lease. */
  release(url: string): void {
    count(this.heldByUrl, url, -1);
  }

  /** Whether a new delivery straight from its commit is taken, with `waiting` held for a slot: else a claim takes it when due. */
  takes(url: string, waiting: number): boolean {
    return waiting < this.limits.slots && this.held(url) < this.heldPerReceiver;
  }

  /** Whether a held delivery to `url` may start now. */
  canSend(url: string): boolean {
    return this.sending < this.limits.slots && (this.sendingByUrl.get(url) ?? 0) < this.limits.perReceiver;
  }

  /** Whether a slot is free, whatever the receiver. */
  hasFreeSlot(): boolean {
    return this.sending < this.limits.slots;
  }

  startSending(url: string): void {
    this.sending += 1;
    count(this.sendingByUrl, url, 1);
  }

  /** The send ended; the delivery stays held until `release`. */
  finishSending(url: string): void {
    this.sending -= 1;
    count(this.sendingByUrl, url, -1);
  }

  /** With every receiver this process holds at its limit, a claim could only find others' rows beyond theirs. */
  everyReceiverFull(): boolean {
    return this.heldByUrl.size > 0 && [...this.heldByUrl.values()].every((n) => n >= this.heldPerReceiver);
  }

  /** URLs at their limit: a claim skips their rows. */
  saturated(): string[] {
    return [...this.heldByUrl].filter(([, n]) => n >= this.heldPerReceiver).map(([url]) => url);
  }

  /** Whether a receiver's deliveries waiting to follow have all started, so a claim for it would take a batch, not one. */
  roomFor(url: string): boolean {
    return this.held(url) <= this.limits.perReceiver;
  }

  /** Of claimed candidates (oldest first), those within their receiver's limit; `passedOver` when any was left. */
  choose<T extends { url: string }>(candidates: T[]): { chosen: T[]; passedOver: boolean } {
    const taken = new Map<string, number>();
    const chosen = candidates.filter(({ url }) => {
      if (this.held(url) + (taken.get(url) ?? 0) >= this.heldPerReceiver) return false;
      count(taken, url, 1);
      return true;
    });
    return { chosen, passedOver: chosen.length < candidates.length };
  }

  private held(url: string): number {
    return this.heldByUrl.get(url) ?? 0;
  }
}

function count(counts: Map<string, number>, url: string, delta: number): void {
  const n = (counts.get(url) ?? 0) + delta;
  if (n > 0) counts.set(url, n);
  else counts.delete(url);
}
