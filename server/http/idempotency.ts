/**
 * `Idempotency-Key` on POST: the first request claims the key, runs inside one transaction and stores
 * its 2xx response in that same transaction; a retry replays it. Same key with another body: 422.
 * Same key while the first is running: 409. Failed requests release the key. Keys live 24 hours.
 */
import { createHash } from 'node:crypto';
import { RequestHandler, Response } from 'express';
import stringify from 'safe-stable-stringify';
import { BaseModel } from '../db/base-model';
import { Database } from '../db/database';
import { isUniqueViolation } from '../db/errors';
import { toDbTime } from '../db/time';
import { AppError, BadRequest, Conflict } from '../errors';
import { credentialOf } from './request';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** An in-flight claim older than this belongs to a request that died with its process. */
const ABANDONED_AFTER_MS = 60_000;

export class IdempotencyRecord extends BaseModel {
  static override tableName = 'idempotency_keys';
  static override timestampColumns = ['created_at', 'updated_at', 'expires_at'];

  subject!: string;
  idempotency_key!: string;
  fingerprint!: string;
  state!: 'in_flight' | 'completed';
  response_status!: number | null;
  response_body!: string | null;
  expires_at!: string;
}

type Claim =
  | { kind: 'claimed'; id: number }
  | { kind: 'replay'; status: number; body: string }
  | { kind: 'in_flight' }
  | { kind: 'mismatch' };

class IdempotencyKeyReused extends AppError {
  constructor() {
    super(422, 'idempotency_key_reused', 'This Idempotency-Key was used with a different request; use a new key');
  }
}

async function claim(db: Database, subject: string, key: string, fingerprint: string): Promise<Claim> {
  const records = () => IdempotencyRecord.query(db.knex);
  for (let attempt = 0; attempt < 5; attempt += 1) {
    try {
      const row = await records().insert({
        subject,
        idempotency_key: key,
        fingerprint,
        state: 'in_flight',
        response_status: null,
        response_body: null,
        expires_at: new Date(Date.now() + IDEMPOTENCY_TTL_MS).toISOString(),
      });
      return { kind: 'claimed', id: row.id };
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
    const existing = await records().findOne({ subject, idempotency_key: key });
    if (!existing) continue; // released in between: claim again
    if (Date.parse(existing.expires_at) <= Date.now()) {
      await records().delete().where({ id: existing.id }).where('expires_at', '<=', toDbTime(new Date()));
      continue;
    }
    if (existing.fingerprint !== fingerprint) return { kind: 'mismatch' };
    if (existing.state === 'completed') {
      return { kind: 'replay', status: existing.response_status ?? 200, body: existing.response_body ?? '' };
    }
    if (Date.now() - Date.parse(existing.updated_at) < ABANDONED_AFTER_MS) return { kind: 'in_flight' };
    const taken = await records()
      .patch({ updated_at: new Date().toISOString() })
      .where({ id: existing.id, state: 'in_flight' })
      .where('updated_at', toDbTime(new Date(existing.updated_at)));
    if (taken === 1) return { kind: 'claimed', id: existing.id };
  }
  return { kind: 'in_flight' };
}

export function fingerprintOf(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(stringify({ method, path, body: body ?? null }) ?? '')
    .digest('hex');
}

export function idempotency(db: Database): RequestHandler {
  return async (req, res, next) => {
    const key = req.get('Idempotency-Key');
    if (req.method !== 'POST' || key === undefined) return next();
    if (key.length < 1 || key.length > 255) throw new BadRequest('Idempotency-Key must be 1 to 255 characters');

    const subject = credentialOf(req).subject;
    const outcome = await claim(db, subject, key, fingerprintOf(req.method, req.path, req.body));
    if (outcome.kind === 'mismatch') throw new IdempotencyKeyReused();
    if (outcome.kind === 'in_flight') {
      throw new Conflict('idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed; retry later');
    }
    if (outcome.kind === 'replay') {
      res.set('Idempotent-Replayed', 'true').status(outcome.status).type('json').send(outcome.body);
      return;
    }

    const trx = await db.knex.transaction();
    const release = () => IdempotencyRecord.query(db.knex).deleteById(outcome.id);
    // Every Express response (json, send, sendStatus) ends in res.send: settle there, then send.
    const send = res.send.bind(res) as Response['send'];
    res.send = ((payload: unknown) => {
      res.send = send;
      void settle(payload);
      return res;
    }) as Response['send'];

    // The change and its stored response commit together, before the client sees the response.
    const settle = async (payload: unknown): Promise<void> => {
      try {
        if (res.statusCode >= 200 && res.statusCode < 300) {
          await IdempotencyRecord.query(trx)
            .findById(outcome.id)
            .patch({ state: 'completed', response_status: res.statusCode, response_body: String(payload ?? '') });
          await trx.commit();
        } else {
          await trx.rollback();
          await release();
        }
        send(payload);
      } catch (err) {
        req.log?.error({ err }, 'idempotent request could not be settled');
        if (!trx.isCompleted()) await trx.rollback().catch(() => undefined);
        await release().catch(() => undefined);
        res.status(500).json({ error: 'server_error', message: 'The request could not be completed; nothing was changed' });
      }
    };

    db.withRequestTransaction(trx, () => next());
  };
}

/** Deletes keys past their 24 hours; run by the scheduler. */
export async function purgeExpiredIdempotencyKeys(db: Database): Promise<number> {
  return IdempotencyRecord.query(db.knex).delete().where('expires_at', '<', toDbTime(new Date()));
}
