/**
 * `Idempotency-Key` on POST: a visible step of every route (server/http/routes.ts), run after
 * validation. Keys are scoped to the credential and live 24 hours.
 *
 * 1. Claim: insert the key with this request's random owner token. If another request holds it:
 *    replay its stored 2xx response, 422 when its body differs, 409 while it runs.
 * 2. Lease: while the work runs its owner renews the claim (`updated_at`) every quarter lease. A
 *    claim left unrenewed for a whole lease belongs to a request that died with its process: a
 *    retry takes it over by replacing the owner token.
 * 3. Settle: the work and its stored response commit in one transaction, and only while the claim
 *    is still this request's. A request whose claim was taken over (it was alive but stalled,
 *    say behind a table lock) rolls back, so one key never commits twice.
 * 4. A failed request releases its claim: a non-2xx answer stores nothing.
 * 5. A stored response is never rewritten: a replay returns exactly the body the first request got.
 *
 * A route that calls a gateway (`callsOut`) cannot run inside one transaction: its work commits in
 * steps of its own, and the response is stored after. A retry while it runs still gets 409; a
 * process that dies between the work's commit and the stored response leaves the work done once
 * and the key free, which is where the work's own guards (a refund's reservation) take over.
 *
 * A response that reports what happened after the commit (`/send`'s `email.status`, settled by the
 * first attempt an afterCommit hook makes) is made once that is known: the work commits with the
 * key marked `committed` (a retry meanwhile still gets 409), its hooks run (bounded by their own
 * wait), and the response is stored in one write. A process that dies in between leaves the work
 * done once and the key committed: after the lease a retry takes the key over and answers the
 * route's `outcome`, read from what the commit left, without doing the work again.
 */
import { createHash, randomUUID } from 'node:crypto';
import stringify from 'safe-stable-stringify';
import { Clock, systemClock } from '../clock';
import { BaseModel } from '../db/base-model';
import { Database } from '../db/database';
import { isUniqueViolation } from '../db/errors';
import { insertRows, writeRows } from '../db/statement';
import { toDbTime } from '../db/time';
import { AppError, BadRequest } from '../errors';
import { Serializer } from '../shapes/component';
import { isRawDocument } from './document-body';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

type ClaimState = 'in_flight' | 'committed' | 'completed';

export class IdempotencyRecord extends BaseModel {
  static override tableName = 'idempotency_keys';
  static override timestampColumns = ['created_at', 'updated_at', 'expires_at'];

  subject!: string;
  idempotency_key!: string;
  fingerprint!: string;
  /** The token of the request that holds an in-flight claim. */
  owner!: string | null;
  /** `committed`: the work has committed and its afterCommit hooks run; the response is not stored yet. */
  state!: ClaimState;
  response_status!: number | null;
  response_body!: string | null;
  expires_at!: string;
}

/** What identifies one idempotent request: who sent it, under which key, with which content. */
export interface IdempotentRequest {
  subject: string;
  key: string;
  fingerprint: string;
}

/** The response to send: the work's own, or the stored one of an earlier request (`replayed`). */
export interface IdempotentResponse {
  status: number;
  body: string;
  replayed: boolean;
}

/** A claim this request holds; `committed` when taken over from a request that died after its work committed. */
interface Claimed {
  kind: 'claimed';
  id: number;
  owner: string;
  committed: boolean;
}

type Claim =
  | Claimed
  | { kind: 'replay'; status: number; body: string }
  | { kind: 'in_flight' }
  | { kind: 'mismatch' };

export class IdempotencyKeyReused extends AppError {
  static readonly code = 'idempotency_key_reused';

  constructor() {
    super(422, IdempotencyKeyReused.code, 'This Idempotency-Key was used with a different request; use a new key');
  }
}

export class IdempotencyKeyInUse extends AppError {
  static readonly code = 'idempotency_key_in_use';

  constructor() {
    super(409, IdempotencyKeyInUse.code, 'A request with this Idempotency-Key is still being processed; retry later');
  }
}

/** The Idempotency-Key header of a POST: undefined when absent, 400 when outside 1–255 characters. */
export function idempotencyKeyOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (header.length < 1 || header.length > 255) throw new BadRequest('Idempotency-Key must be 1 to 255 characters');
  return header;
}

/**
 * What makes two requests under one key the same request. A JSON body counts as its parsed value
 * (key order aside). A document body (a RawDocument) counts as its bytes exactly, once any
 * Content-Encoding is undone (the same document gzipped or not is one request), hashed as they are
 * rather than turned into JSON (a Buffer's JSON is an array of numbers, about four times its size),
 * with its media type and `query` (a document route's query parameters, which say what to make of
 * it). The JSON part ends where its braces close, so it and the bytes cannot run into each other.
 */
export function fingerprintOf(method: string, path: string, body: unknown, query?: unknown): string {
  const hash = createHash('sha256');
  if (isRawDocument(body)) {
    return hash
      .update(stringify({ method, path, query: query ?? null, media_type: body.mediaType }) ?? '')
      .update(body.bytes)
      .digest('hex');
  }
  return hash.update(stringify({ method, path, body: body ?? null, ...(query === undefined ? {} : { query }) }) ?? '').digest('hex');
}

/** How `run` stores a route's response (see `run`). */
interface Settlement {
  status: number;
  serialize: Serializer;
  transactional: boolean;
  outcome?: () => Promise<unknown>;
}

/** A claim moves on only if this request still owns it in the state it left it: statements written once, run by every idempotent POST. */
const OWNED = 'where id = ? and owner = ? and state = ?';
const COMPLETE = `update idempotency_keys set state = 'completed', response_status = ?, response_body = ?, updated_at = ? ${OWNED}`;
const COMMIT = `update idempotency_keys set state = 'committed', updated_at = ? ${OWNED}`;

export class IdempotencyKeys {
  constructor(
    private readonly db: Database,
    /** How long a claim stays with a request that stopped renewing it. */
    private readonly leaseMs: number,
    /** The real time: leases and the 24 hours a key is kept run by it, whatever a test business's clock says. */
    private readonly clock: Clock = systemClock,
  ) {}

  /**
   * Runs `work` once per key while this request owns the claim, and stores its response once: with
   * the work in one transaction; after it when it is not `transactional` (it calls out); or, with
   * `outcome`, after the work has committed and its afterCommit hooks have run (see above). The body
   * sent is the body stored.
   */
  async run(
    request: IdempotentRequest,
    status: number,
    work: () => Promise<unknown>,
    { transactional = true, serialize, outcome }: { transactional?: boolean; serialize: Serializer; outcome?: () => Promise<unknown> },
  ): Promise<IdempotentResponse> {
    const claim = await this.claim(request);
    if (claim.kind === 'mismatch') throw new IdempotencyKeyReused();
    if (claim.kind === 'in_flight') throw new IdempotencyKeyInUse();
    if (claim.kind === 'replay') return { status: claim.status, body: claim.body, replayed: true };

    const mine = () => IdempotencyRecord.query(this.db.current).where({ id: claim.id, owner: claim.owner });
    const renewal = setInterval(() => {
      mine()
        .patch({ updated_at: this.clock.now().toISOString() })
        .catch(() => undefined); // a missed renewal only shortens the lease; settling still checks the owner
    }, Math.max(1, Math.floor(this.leaseMs / 4)));
    try {
      const body = await this.settle(claim, work, { status, serialize, transactional, outcome });
      return { status, body, replayed: false };
    } catch (err) {
      // A committed claim stays: its work is done, and a retry answers its outcome without doing it again.
      await mine()
        .where({ state: 'in_flight' })
        .delete()
        .catch(() => undefined);
      throw err;
    } finally {
      clearInterval(renewal);
    }
  }

  /**
   * Does the work, or reads its outcome for a claim taken over after its work committed, and stores
   * the response once; resolves to the body stored.
   */
  private async settle(claim: Claimed, work: () => Promise<unknown>, { status, serialize, transactional, outcome }: Settlement): Promise<string> {
    const complete = async (from: ClaimState, body: string) => {
      await this.advance(claim, from, { state: 'completed', response_status: status, response_body: body });
      return body;
    };
    if (outcome) {
      // The work's transaction resolves after its commit and its afterCommit hooks: the response is made then.
      const value = claim.committed
        ? await outcome()
        : await this.db.transaction(async () => {
            const value = await work();
            await this.advance(claim, 'in_flight', { state: 'committed' });
            return value;
          });
      return complete('committed', serialize(value)).catch((err: unknown) => this.answerOfTakeover(claim, err));
    }
    // Only a route that reports after its commit leaves a claim committed, and only it can answer for one.
    if (claim.committed) throw new IdempotencyKeyInUse();
    // Work that calls out commits on its own first; the response is then stored alone.
    if (!transactional) return complete('in_flight', serialize(await work()));
    return this.db.transaction(async () => complete('in_flight', serialize(await work())));
  }

  /**
   * The work committed, but a retry took the claim over meanwhile (this request stalled past its
   * lease) and stored its answer: the work was done once, so that answer is this request's too. While
   * the retry is still making it, 409 as before.
   */
  private async answerOfTakeover(claim: Claimed, err: unknown): Promise<string> {
    if (!(err instanceof IdempotencyKeyInUse)) throw err;
    const record = await IdempotencyRecord.query(this.db.current).findById(claim.id);
    if (record?.state !== 'completed' || record.response_body === null) throw err;
    return record.response_body;
  }

  /**
   * Moves the claim on from `state` while it is still this request's. Else it was taken over while
   * this request ran: 409, and inside the work's transaction the work rolls back (the new owner's
   * outcome stands).
   */
  private async advance(claim: Claimed, state: ClaimState, to: { state: 'committed' } | { state: 'completed'; response_status: number; response_body: string }): Promise<void> {
    const now = toDbTime(this.clock.now());
    const owned = [claim.id, claim.owner, state];
    const { affectedRows } =
      to.state === 'completed'
        ? await writeRows(this.db.current, COMPLETE, [to.response_status, to.response_body, now, ...owned])
        : await writeRows(this.db.current, COMMIT, [now, ...owned]);
    if (affectedRows !== 1) throw new IdempotencyKeyInUse();
  }

  private async claim({ subject, key, fingerprint }: IdempotentRequest): Promise<Claim> {
    const records = () => IdempotencyRecord.query(this.db.current);
    const owner = randomUUID();
    for (let attempt = 0; attempt < 5; attempt += 1) {
      try {
        const now = this.clock.now();
        const id = await insertRows(this.db.current, IdempotencyRecord.tableName, [
          {
            subject,
            idempotency_key: key,
            fingerprint,
            owner,
            state: 'in_flight',
            response_status: null,
            response_body: null,
            created_at: toDbTime(now),
            updated_at: toDbTime(now),
            expires_at: toDbTime(new Date(now.getTime() + IDEMPOTENCY_TTL_MS)),
          },
        ]);
        return { kind: 'claimed', id, owner, committed: false };
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
      }
      const existing = await records().findOne({ subject, idempotency_key: key });
      if (!existing) continue; // released in between: claim again
      if (Date.parse(existing.expires_at) <= this.clock.now().getTime()) {
        await records().delete().where({ id: existing.id }).where('expires_at', '<=', toDbTime(this.clock.now()));
        continue;
      }
      if (existing.fingerprint !== fingerprint) return { kind: 'mismatch' };
      if (existing.state === 'completed') {
        return { kind: 'replay', status: existing.response_status ?? 200, body: existing.response_body ?? '' };
      }
      const leaseEnd = Date.parse(existing.updated_at) + this.leaseMs;
      if (this.clock.now().getTime() < leaseEnd) return { kind: 'in_flight' };
      // The lease ran out: take the claim over, unless its owner renewed it (or moved it on) meanwhile.
      const taken = await records()
        .patch({ owner, updated_at: this.clock.now().toISOString() })
        .where({ id: existing.id, state: existing.state })
        .where('updated_at', '<=', toDbTime(new Date(this.clock.now().getTime() - this.leaseMs)));
      if (taken === 1) return { kind: 'claimed', id: existing.id, owner, committed: existing.state === 'committed' };
    }
    return { kind: 'in_flight' };
  }
}

/** Deletes keys past their 24 hours; run by the scheduler. */
export async function purgeExpiredIdempotencyKeys(db: Database, clock: Clock = systemClock): Promise<number> {
  return await IdempotencyRecord.query(db.current).delete().where('expires_at', '<', toDbTime(clock.now()));
}
