/** API keys: created, listed, revoked and rotated by the owner (CLI); resolved to a credential per request. */
import Joi from 'joi';
import { LRUCache } from 'lru-cache';
import { Credential } from '../auth/credential';
import { ALL_SCOPES, Scope } from '../auth/scopes';
import { Business } from '../businesses/model';
import { Database } from '../db/database';
import { NotFound, ValidationFailed } from '../errors';
import { validateInput } from '../validation';
import { ApiKey } from './model';
import { SecretBox } from './secret-box';
import { displayParts, generateKey, hashKey, looksLikeKey, Mode, randomBase62, sameHash } from './token';
import { resolvedAddressProblem, webhookUrlProblem } from './webhook-url';

export interface NewKey {
  businessId: number;
  mode: Mode;
  scopes: Scope[];
  webhookUrl?: string;
  webhookSecret?: string;
}

export interface KeyView {
  id: number;
  business_id: number;
  mode: Mode;
  livemode: boolean;
  scopes: Scope[];
  prefix: string;
  last4: string;
  webhook_url: string | null;
  created_at: string;
  revoked_at: string | null;
}

/** A new key: the only time its value (and a generated webhook secret) is ever returned. */
export interface CreatedKey extends KeyView {
  key: string;
  webhook_secret: string | null;
}

const newKeySchema = Joi.object<NewKey>({
  businessId: Joi.number().integer().positive().required(),
  mode: Joi.string().valid('test', 'live').required(),
  scopes: Joi.array()
    .items(Joi.string().valid(...ALL_SCOPES))
    .min(1)
    .unique()
    .required(),
  webhookUrl: Joi.string().max(2048),
  // Sealed, 150 bytes become 243 characters: within the column's 255.
  webhookSecret: Joi.string().min(16).max(150, 'utf8'),
});

function toKeyView(row: ApiKey): KeyView {
  return {
    id: row.id,
    business_id: row.business_id,
    mode: row.livemode ? 'live' : 'test',
    livemode: row.livemode,
    scopes: JSON.parse(row.scopes) as Scope[],
    prefix: row.prefix,
    last4: row.last4,
    webhook_url: row.webhook_url,
    created_at: row.created_at,
    revoked_at: row.revoked_at,
  };
}

function toCredential(row: ApiKey): Credential {
  return {
    kind: 'api_key',
    id: row.id,
    businessId: row.business_id,
    livemode: row.livemode,
    scopes: JSON.parse(row.scopes) as Scope[],
    subject: `key_${row.id}`,
  };
}

export class KeyService {
  /** Hash → credential, or false for a hash that matches no live key. Entries live at most KEY_CACHE_TTL_MS. */
  private readonly cache?: LRUCache<string, Credential | false>;

  constructor(
    private readonly db: Database,
    /** secretBox seals webhook secrets at rest (api_keys.webhook_secret holds only sealed values). */
    private readonly options: { webhookAllowPrivate: boolean; cacheTtlMs: number; secretBox: SecretBox },
  ) {
    if (options.cacheTtlMs > 0) this.cache = new LRUCache({ max: 50_000, ttl: options.cacheTtlMs });
  }

  async create(input: NewKey): Promise<CreatedKey> {
    const valid = validateInput(newKeySchema, input);
    if (valid.webhookUrl) {
      const problem =
        webhookUrlProblem(valid.webhookUrl, this.options.webhookAllowPrivate) ??
        (await resolvedAddressProblem(valid.webhookUrl, this.options.webhookAllowPrivate));
      if (problem) throw new ValidationFailed({ webhook_url: [problem] });
    }
    return this.db.transaction(async (trx) => {
      if (!(await Business.query(trx).findById(valid.businessId))) throw new NotFound('Business');
      return this.insertKey(trx, {
        businessId: valid.businessId,
        livemode: valid.mode === 'live',
        scopes: valid.scopes,
        webhookUrl: valid.webhookUrl ?? null,
        webhookSecret: valid.webhookSecret ?? (valid.webhookUrl ? `whsec_${randomBase62(32)}` : null),
      });
    });
  }

  async list(businessId: number): Promise<KeyView[]> {
    if (!(await Business.query(this.db.current).findById(businessId))) throw new NotFound('Business');
    const rows = await ApiKey.query(this.db.current).where({ business_id: businessId }).orderBy('id');
    return rows.map(toKeyView);
  }

  async get(id: number): Promise<KeyView> {
    const row = await ApiKey.query(this.db.current).findById(id);
    if (!row) throw new NotFound('API key');
    return toKeyView(row);
  }

  /** Revokes the key; revoking a revoked key changes nothing. Other processes see it within the cache TTL. */
  async revoke(id: number): Promise<KeyView> {
    const row = await this.db.transaction(async (trx) => {
      const key = await ApiKey.query(trx).findById(id).forUpdate();
      if (!key) throw new NotFound('API key');
      return key.revoked_at ? key : ApiKey.query(trx).patchAndFetchById(id, { revoked_at: new Date().toISOString() });
    });
    this.cache?.delete(row.key_hash);
    return toKeyView(row);
  }

  /** Issues a new key with the same business, mode, scopes and webhook, and revokes the old one, atomically. */
  async rotate(id: number): Promise<CreatedKey> {
    const { created, oldHash } = await this.db.transaction(async (trx) => {
      const old = await ApiKey.query(trx).findById(id).forUpdate();
      if (!old) throw new NotFound('API key');
      if (old.revoked_at) throw new ValidationFailed({ id: ['is revoked; create a new key instead'] });
      await ApiKey.query(trx).findById(id).patch({ revoked_at: new Date().toISOString() });
      const fresh = await this.insertKey(trx, {
        businessId: old.business_id,
        livemode: old.livemode,
        scopes: JSON.parse(old.scopes) as Scope[],
        webhookUrl: old.webhook_url,
        webhookSecret: this.openSecret(old.webhook_secret),
      });
      return { created: fresh, oldHash: old.key_hash };
    });
    this.cache?.delete(oldHash);
    return created;
  }

  /** The secret that signs deliveries to the key's webhook URL (kept after revocation, for pending deliveries). */
  async webhookSecret(keyId: number): Promise<string | null> {
    const row = await ApiKey.query(this.db.current).findById(keyId).select('webhook_secret');
    return this.openSecret(row?.webhook_secret ?? null);
  }

  /** Throws SecretBoxError for a value not sealed under this application key (never falls back to clear text). */
  private openSecret(sealed: string | null): string | null {
    return sealed === null ? null : this.options.secretBox.open(sealed);
  }

  /** The credential a bearer token proves, or null for an unknown, malformed or revoked key. */
  async authenticate(token: string): Promise<Credential | null> {
    if (!looksLikeKey(token)) return null;
    const hash = hashKey(token);
    const cached = this.cache?.get(hash);
    if (cached !== undefined) return cached || null;
    const row = await ApiKey.query(this.db.current).findOne({ key_hash: hash });
    const credential = row && !row.revoked_at && sameHash(row.key_hash, hash) ? toCredential(row) : null;
    this.cache?.set(hash, credential ?? false);
    return credential;
  }

  private async insertKey(
    trx: Database['knex'],
    fields: { businessId: number; livemode: boolean; scopes: Scope[]; webhookUrl: string | null; webhookSecret: string | null },
  ): Promise<CreatedKey> {
    const key = generateKey(fields.livemode ? 'live' : 'test');
    const row = await ApiKey.query(trx).insertAndFetch({
      business_id: fields.businessId,
      livemode: fields.livemode,
      key_hash: hashKey(key),
      ...displayParts(key),
      scopes: JSON.stringify(fields.scopes),
      webhook_url: fields.webhookUrl,
      webhook_secret: fields.webhookSecret === null ? null : this.options.secretBox.seal(fields.webhookSecret),
      revoked_at: null,
    });
    return { ...toKeyView(row), key, webhook_secret: fields.webhookSecret };
  }
}
