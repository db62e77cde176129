/** Business owners: created and reset by the CLI, signed in on the OAuth consent pages. */
import { BusinessService } from '../businesses/service';
import { normalizedEmail } from '../clients/service';
import { Clock, systemClock } from '../clock';
import { Database } from '../db/database';
import { isUniqueViolation } from '../db/errors';
import { toDbTime } from '../db/time';
import { NotFound, ValidationFailed } from '../errors';
import { hashKey, randomBase62 } from '../keys/token';
import { BusinessOwner, OwnerSession } from './model';
import { hashPassword, verifyPassword } from './password';
import { NewOwner } from './schema';
import { OwnerView, toOwnerView } from './view';

/** How long a sign-in lasts: the server-side session and its cookie both end after this. */
export const SESSION_SECONDS = 12 * 3600;

/** A stand-in hash, so that signing in with an unknown e-mail costs what a wrong password costs. */
const UNKNOWN_OWNER_HASH = hashPassword('no such owner: timing only');

export class OwnerService {
  constructor(
    private readonly db: Database,
    private readonly businesses: BusinessService,
    /** The real time: sessions expire by it. */
    private readonly clock: Clock = systemClock,
  ) {}

  /** `input` is valid by newOwnerSchema. */
  async create(input: NewOwner): Promise<OwnerView> {
    await this.businesses.get(input.businessId);
    try {
      const row = await BusinessOwner.query(this.db.current).insert({
        business_id: input.businessId,
        email: input.email,
        email_normalized: normalizedEmail(input.email),
        password_hash: await hashPassword(input.password),
      });
      return toOwnerView(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw new ValidationFailed({ email: ['is already the e-mail of an owner'] });
      throw err;
    }
  }

  async get(id: number): Promise<OwnerView> {
    const row = await BusinessOwner.query(this.db.current).findById(id);
    if (!row) throw new NotFound('Owner', id);
    return toOwnerView(row);
  }

  async list(businessId: number): Promise<OwnerView[]> {
    return (await BusinessOwner.query(this.db.current).where({ business_id: businessId }).orderBy('id')).map(toOwnerView);
  }

  /** `newPassword` is valid by passwordResetSchema. */
  async resetPassword(id: number, newPassword: string): Promise<OwnerView> {
    const passwordHash = await hashPassword(newPassword);
    return this.db.transaction(async (trx) => {
      const row = await BusinessOwner.query(trx).findById(id).forUpdate();
      if (!row) throw new NotFound('Owner', id);
      await BusinessOwner.query(trx).findById(id).patch({ password_hash: passwordHash });
      // Whoever signed in with the old password is signed out.
      await OwnerSession.query(trx).where({ owner_id: id }).delete();
      return toOwnerView(row);
    });
  }

  /** A new session of this owner: the token for its cookie (only its hash is kept), valid SESSION_SECONDS. */
  async startSession(ownerId: number): Promise<string> {
    const token = randomBase62(43);
    const now = this.clock.now().getTime();
    await this.db.transaction(async (trx) => {
      // The owner's ended sessions go as a new one starts, so they do not pile up.
      await OwnerSession.query(trx).where({ owner_id: ownerId }).where('expires_at', '<=', toDbTime(new Date(now))).delete();
      await OwnerSession.query(trx).insert({ owner_id: ownerId, token_hash: hashKey(token), expires_at: new Date(now + SESSION_SECONDS * 1000).toISOString() });
    });
    return token;
  }

  /** The owner whose unexpired session this token is, or null. */
  async sessionOwner(token: string): Promise<number | null> {
    const session = await OwnerSession.query(this.db.current).findOne({ token_hash: hashKey(token) }).where('expires_at', '>', toDbTime(this.clock.now()));
    return session?.owner_id ?? null;
  }

  /** Signs a session out. */
  async endSession(token: string): Promise<void> {
    await OwnerSession.query(this.db.current).where({ token_hash: hashKey(token) }).delete();
  }

  /** The owner these credentials sign in, or null; the same work whether or not the e-mail exists. */
  async signIn(email: string, candidate: string): Promise<OwnerView | null> {
    const row = await BusinessOwner.query(this.db.current).findOne({ email_normalized: normalizedEmail(email.trim()) });
    const ok = await verifyPassword(candidate, row?.password_hash ?? (await UNKNOWN_OWNER_HASH));
    return row && ok ? toOwnerView(row) : null;
  }
}
