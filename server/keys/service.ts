/** API keys: created, listed, revoked and rotated by the owner (CLI); resolved to a credential per request. */
import { Knex } from 'knex';
import { LRUCache } from 'lru-cache';
import { acrossTenants } from '../auth/actor';
import { Credential } from '../auth/credential';
import { grants, Scope } from '../auth/scopes';
import { EVENT_TYPES } from '../events/model';
import { EVENT_READ_SCOPES, readScopeOf } from '../events/outbox';
import { Business } from '../businesses/model';
import { Database } from '../db/database';
import { InvalidState, NotFound, ValidationFailed } from '../errors';
import { WebhookDelivery } from '../events/deliveries';
import { Clock, systemClock } from '../clock';
import { ApiKey } from './model';
import { KeyChanges, MAX_ROTATION_GRACE_MS, NewKey } from './schema';
import { SealedPlace, SEALED_PREFIX, SecretBox, SecretBoxError } from './secret-box';
import { displayParts, generateKey, hashKey, looksLikeKey, randomBase62, sameHash } from './token';
import { CreatedKey, KeyView, keyStatus, toKeyView, UpdatedKey } from './view';
import { resolvedAddressProblem, webhookUrlProblem } from './webhook-url';

/** Where a key's webhook secret is sealed: it opens in that row of that business only. */
function placeOf(key: Pick<ApiKey, 'id' | 'business_id'>): SealedPlace {
  return { table: 'api_keys', column: 'webhook_secret', id: key.id, businessId: key.business_id };
}

/** Why the pending deliveries of a key stopped when its URL was removed (the delivery log shows it). */
const WEBHOOK_URL_REMOVED = 'the key\'s webhook URL was removed; replay once the key has a URL again';

const KEY_WEBHOOK_CHANGE = acrossTenants('key webhook change');

/**
 * A key whose new scopes no longer read an event gets it no more: its pending deliveries of such
 * events fail (the delivery log says why) instead of being retried, as receivers are chosen by
 * their scopes when an event is written.
 */
async function failUnreadable(trx: Knex.Transaction, keyId: number, scopes: Scope[]): Promise<void> {
  for (const needed of EVENT_READ_SCOPES.filter((scope) => !grants(scopes, scope))) {
    const types = EVENT_TYPES.filter((type) => readScopeOf(type) === needed);
    const unreadable = await WebhookDelivery.acrossTenants(KEY_WEBHOOK_CHANGE, trx)
      .join('events', 'events.id', 'webhook_deliveries.event_id')
      .where({ 'webhook_deliveries.api_key_id': keyId, 'webhook_deliveries.status': 'pending' })
      .whereIn('events.type', types)
      .select('webhook_deliveries.id');
    if (!unreadable.length) continue;
    await WebhookDelivery.acrossTenants(KEY_WEBHOOK_CHANGE, trx)
      .whereIn(
        'id',
        unreadable.map((delivery) => delivery.id),
      )
      .patch({ status: 'failed', last_error: `the key's scopes no longer include ${needed}, which this event needs` });
  }
}

function generateWebhookSecret(): string {
  return `whsec_${randomBase62(32)}`;
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

/** What the cache remembers for a key hash: its credential and expiry, or `false` for no working key. */
type CachedKey = { credential: Credential; expiresAt: number | null } | false;

export class KeyService {
  /** Hash → credential, or false for a hash that matches no working key. Entries live at most KEY_CACHE_TTL_MS. */
  private readonly cache?: LRUCache<string, CachedKey>;

  constructor(
    private readonly db: Database,
    /** secretBox seals webhook secrets at rest (api_keys.webhook_secret holds only sealed values). */
    private readonly options: { webhookAllowPrivate: boolean; cacheTtlMs: number; secretBox: SecretBox },
    private readonly clock: Clock = systemClock,
  ) {
    if (options.cacheTtlMs > 0) this.cache = new LRUCache({ max: 50_000, ttl: options.cacheTtlMs });
  }

  /** `input` is valid by newKeySchema; the webhook URL is checked here, as it takes a DNS lookup. */
  async create(input: NewKey): Promise<CreatedKey> {
    if (input.webhookUrl) await this.checkWebhookUrl(input.webhookUrl);
    return this.db.transaction(async (trx) => {
      if (!(await Business.query(trx).findById(input.businessId))) throw new NotFound('Business', input.businessId);
      return this.insertKey(trx, {
        businessId: input.businessId,
        livemode: input.mode === 'live',
        scopes: input.scopes,
        webhookUrl: input.webhookUrl ?? null,
        webhookSecret: input.webhookSecret ?? (input.webhookUrl ? generateWebhookSecret() : null),
      });
    });
  }

  async list(businessId: number): Promise<KeyView[]> {
    if (!(await Business.query(this.db.current).findById(businessId))) throw new NotFound('Business', businessId);
    const rows = await ApiKey.query(this.db.current).where({ business_id: businessId }).orderBy('id');
    const now = this.clock.now();
    return rows.map((row) => toKeyView(row, now));
  }

  async get(id: number): Promise<KeyView> {
    const row = await ApiKey.query(this.db.current).findById(id);
    if (!row) throw new NotFound('API key', id);
    return toKeyView(row, this.clock.now());
  }

  /**
   * Changes scopes, webhook URL or signing secret of a working key. Pending deliveries of the key
   * follow a new URL (a fixed address gets the retries), and fail when the URL is removed. A URL on a key without a secret gets a
   * generated one, returned this once, as does `generateWebhookSecret`. `changes` are valid by
   * keyChangesSchema.
   */
  async update(id: number, changes: KeyChanges): Promise<UpdatedKey> {
    if (changes.webhookUrl) await this.checkWebhookUrl(changes.webhookUrl);
    const { row, generated } = await this.db.transaction(async (trx) => {
      const key = await ApiKey.query(trx).findById(id).forUpdate();
      if (!key) throw new NotFound('API key', id);
      this.assertWorking(key, 'create a new key instead');
      const patch: Partial<ApiKey> = {};
      if (changes.scopes) patch.scopes = JSON.stringify(changes.scopes);
      if (changes.webhookUrl !== undefined) patch.webhook_url = changes.webhookUrl;
      const needsSecret = changes.webhookUrl && key.webhook_secret === null && !changes.webhookSecret;
      const generated = changes.generateWebhookSecret || needsSecret ? generateWebhookSecret() : undefined;
      const secret = changes.webhookSecret ?? generated;
      if (secret) patch.webhook_secret = this.options.secretBox.seal(secret, placeOf(key));
      const updated = await ApiKey.query(trx).patchAndFetchById(id, patch);
      if (changes.webhookUrl) {
        await WebhookDelivery.acrossTenants(acrossTenants('key webhook change'), trx).where({ api_key_id: id, status: 'pending' }).patch({ url: changes.webhookUrl });
      } else if (changes.webhookUrl === null) {
        // No retry may reach the old address. An attempt under way finishes; were it to fail, the
        // delivery is no longer pending, so it is not retried.
        await WebhookDelivery.acrossTenants(acrossTenants('key webhook change'), trx)
          .where({ api_key_id: id, status: 'pending' })
          .patch({ status: 'failed', last_error: WEBHOOK_URL_REMOVED });
      }
      if (changes.scopes) await failUnreadable(trx, id, changes.scopes);
      return { row: updated, generated };
    });
    this.cache?.delete(row.key_hash);
    return { ...toKeyView(row, this.clock.now()), ...(generated ? { webhook_secret: generated } : {}) };
  }

  /** Revokes the key; revoking a revoked key changes nothing. Other processes see it within the cache TTL. */
  async revoke(id: number): Promise<KeyView> {
    const row = await this.db.transaction(async (trx) => {
      const key = await ApiKey.query(trx).findById(id).forUpdate();
      if (!key) throw new NotFound('API key', id);
      return key.revoked_at ? key : ApiKey.query(trx).patchAndFetchById(id, { revoked_at: this.clock.now().toISOString() });
    });
    this.cache?.delete(row.key_hash);
    return toKeyView(row, this.clock.now());
  }

  /**
   * Issues a new key with the same business, mode, scopes and webhook, atomically with ending the
   * old one: revoked at once (`graceMs` 0), or expiring after `graceMs`. From then on the new key
   * receives the webhook deliveries, so an event is not delivered twice during the grace period.
   */
  async rotate(id: number, graceMs = 0): Promise<CreatedKey & { replaces: KeyView }> {
    if (!Number.isInteger(graceMs) || graceMs < 0 || graceMs > MAX_ROTATION_GRACE_MS) {
      throw new ValidationFailed({ expire_in: ['must be between 0 and 30 days'] });
    }
    const { created, old } = await this.db.transaction(async (trx) => {
      const key = await ApiKey.query(trx).findById(id).forUpdate();
      if (!key) throw new NotFound('API key', id);
      this.assertWorking(key, 'rotate its replacement or create a new key');
      const now = this.clock.now();
      const ending = graceMs === 0 ? { revoked_at: now.toISOString() } : { expires_at: new Date(now.getTime() + graceMs).toISOString() };
      const ended = await ApiKey.query(trx).patchAndFetchById(id, ending);
      const fresh = await this.insertKey(trx, {
        businessId: key.business_id,
        livemode: key.livemode,
        scopes: JSON.parse(key.scopes) as Scope[],
        webhookUrl: key.webhook_url,
        webhookSecret: this.openWebhookSecret(key.webhook_secret, key),
      });
      return { created: fresh, old: ended };
    });
    this.cache?.delete(old.key_hash);
    return { ...created, replaces: toKeyView(old, this.clock.now()) };
  }

  /** The secret that signs deliveries to the key's webhook URL (kept after revocation, for pending deliveries). */
  async webhookSecret(keyId: number): Promise<string | null> {
    const row = await ApiKey.query(this.db.current).findById(keyId).select('id', 'business_id', 'webhook_secret');
    return row ? this.openWebhookSecret(row.webhook_secret, row) : null;
  }

  /**
   * Whether the newest sealed webhook secret opens with this application key: false when it was
   * sealed under another one (another APP_SECRET_KEY, a key file left behind). Clear-text values
   * from before sealing are not sealed under any key and are left out.
   */
  async opensStoredSecrets(): Promise<boolean> {
    const row = await ApiKey.query(this.db.current).where('webhook_secret', 'like', `${SEALED_PREFIX}%`).orderBy('id', 'desc').first();
    if (!row) return true;
    try {
      this.openWebhookSecret(row.webhook_secret, row);
      return true;
    } catch (err) {
      if (err instanceof SecretBoxError) return false;
      throw err;
    }
  }

  /**
   * Throws SecretBoxError for a value not sealed under this application key for this key's row and
   * business (never falls back to clear text).
   */
  openWebhookSecret(sealed: string | null, key: Pick<ApiKey, 'id' | 'business_id'>): string | null {
    return sealed === null ? null : this.options.secretBox.open(sealed, placeOf(key));
  }

  /** The credential a bearer token proves, or null for an unknown, malformed, revoked or expired key. */
  async authenticate(token: string): Promise<Credential | null> {
    if (!looksLikeKey(token)) return null;
    const hash = hashKey(token);
    let entry = this.cache?.get(hash);
    if (entry === undefined) {
      const row = await ApiKey.query(this.db.current).findOne({ key_hash: hash });
      const working = row && !row.revoked_at && sameHash(row.key_hash, hash);
      entry = working ? { credential: toCredential(row), expiresAt: row.expires_at ? Date.parse(row.expires_at) : null } : false;
      this.cache?.set(hash, entry);
    }
    // The expiry is checked on every request, so a cached key stops exactly at the end of its grace period.
    if (!entry || (entry.expiresAt !== null && entry.expiresAt <= this.clock.now().getTime())) return null;
    return entry.credential;
  }

  private async checkWebhookUrl(url: string): Promise<void> {
    const problem =
      webhookUrlProblem(url, this.options.webhookAllowPrivate) ?? (await resolvedAddressProblem(url, this.options.webhookAllowPrivate));
    if (problem) throw new ValidationFailed({ webhook_url: [problem] });
  }

  /** Revoked, expired and expiring keys are not changed: their replacement is. */
  private assertWorking(key: ApiKey, instead: string): void {
    const status = keyStatus(key, this.clock.now());
    if (status === 'active') return;
    const how = status === 'expiring' ? `is being rotated out (it expires at ${key.expires_at})` : `is ${status}`;
    throw new InvalidState(`API key ${key.id} ${how}; ${instead}`);
  }

  private async insertKey(
    trx: Database['knex'],
    fields: { businessId: number; livemode: boolean; scopes: Scope[]; webhookUrl: string | null; webhookSecret: string | null },
  ): Promise<CreatedKey> {
    const key = generateKey(fields.livemode ? 'live' : 'test');
    const inserted = await ApiKey.query(trx).insertAndFetch({
      business_id: fields.businessId,
      livemode: fields.livemode,
      key_hash: hashKey(key),
      ...displayParts(key),
      scopes: JSON.stringify(fields.scopes),
      webhook_url: fields.webhookUrl,
      webhook_secret: null,
      revoked_at: null,
      expires_at: null,
    });
    // Sealed once the row has its id, in the caller's transaction: no one sees the key without its secret.
    const row =
      fields.webhookSecret === null
        ? inserted
        : await ApiKey.query(trx).patchAndFetchById(inserted.id, { webhook_secret: this.options.secretBox.seal(fields.webhookSecret, placeOf(inserted)) });
    return { ...toKeyView(row, this.clock.now()), key, webhook_secret: fields.webhookSecret };
  }
}
