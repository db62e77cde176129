/** OAuth apps of platforms, created by the CLI: a client id, a secret shown once (none for a public app), exact redirect URIs. */
import Joi from 'joi';
import { acrossTenants } from '../auth/actor';
import { Clock, systemClock } from '../clock';
import { Database } from '../db/database';
import { InvalidState, NotFound, ValidationFailed } from '../errors';
import { SealedPlace, SecretBox } from '../keys/secret-box';
import { hashKey, randomBase62 } from '../keys/token';
import { resolvedAddressProblem, webhookUrlProblem } from '../keys/webhook-url';
import { validateInput } from '../validation';
import { OAuthApp, OAuthGrant } from './model';

export interface AppView {
  id: number;
  name: string;
  client_id: string;
  public: boolean;
  redirect_uris: string[];
  webhook_url: string | null;
  revoked_at: string | null;
  created_at: string;
}

export interface CreatedApp extends AppView {
  /** Shown once; null for a public app. */
  client_secret: string | null;
  /** Shown once, when the app has a webhook URL. */
  webhook_secret: string | null;
}

export interface NewApp {
  name: string;
  redirectUris: string[];
  public?: boolean;
  webhookUrl?: string;
  webhookSecret?: string;
}

/** https, or http on the loopback (a developer's machine); no fragment (RFC 6749 §3.1.2). */
const redirectUri = Joi.string()
  .max(2048)
  .custom((value: string, helpers) => {
    try {
      const url = new URL(value);
      const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
      if (url.hash || !(url.protocol === 'https:' || (url.protocol === 'http:' && loopback))) return helpers.error('any.invalid');
      return value;
    } catch {
      return helpers.error('any.invalid');
    }
  })
  .messages({ 'any.invalid': 'each redirect URI must be an absolute https URL (http only on localhost) without a fragment' });

const newAppSchema = Joi.object<NewApp>({
  name: Joi.string().trim().min(1).max(255).required(),
  redirectUris: Joi.array().items(redirectUri).min(1).max(20).unique().required(),
  public: Joi.boolean().default(false),
  webhookUrl: Joi.string().max(2048),
  webhookSecret: Joi.string().min(16).max(255),
});

export const toAppView = (row: OAuthApp): AppView => ({
  id: row.id,
  name: row.name,
  client_id: row.client_id,
  public: row.client_secret_hash === null,
  redirect_uris: JSON.parse(row.redirect_uris) as string[],
  webhook_url: row.webhook_url,
  revoked_at: row.revoked_at,
  created_at: row.created_at,
});

/** Where an app's webhook secret is sealed: in its own row, which belongs to no business. */
function placeOf(appId: number): SealedPlace {
  return { table: 'oauth_apps', column: 'webhook_secret_sealed', id: appId, businessId: null };
}

export class AppService {
  constructor(
    private readonly db: Database,
    private readonly webhookSecrets: SecretBox,
    private readonly options: { webhookAllowPrivate: boolean },
    private readonly clock: Clock = systemClock,
  ) {}

  async create(input: NewApp): Promise<CreatedApp> {
    const valid = validateInput(newAppSchema, input);
    if (valid.webhookUrl) {
      const problem = webhookUrlProblem(valid.webhookUrl, this.options.webhookAllowPrivate) ?? (await resolvedAddressProblem(valid.webhookUrl, this.options.webhookAllowPrivate));
      if (problem) throw new ValidationFailed({ webhook_url: [problem] });
    }
    const clientSecret = valid.public ? null : `oas_${randomBase62(40)}`;
    const webhookSecret = valid.webhookUrl ? (valid.webhookSecret ?? `whsec_${randomBase62(32)}`) : null;
    const row = await this.db.transaction(async (trx) => {
      const inserted = await OAuthApp.query(trx).insert({
        name: valid.name,
        client_id: `app_${randomBase62(24)}`,
        client_secret_hash: clientSecret ? hashKey(clientSecret) : null,
        redirect_uris: JSON.stringify(valid.redirectUris),
        webhook_url: valid.webhookUrl ?? null,
        webhook_secret_sealed: null,
        revoked_at: null,
      });
      // Sealed once the row has its id, in the same transaction: no one sees the app without its secret.
      if (!webhookSecret) return inserted;
      const sealed = this.webhookSecrets.seal(webhookSecret, placeOf(inserted.id));
      await OAuthApp.query(trx).findById(inserted.id).patch({ webhook_secret_sealed: sealed });
      return Object.assign(inserted, { webhook_secret_sealed: sealed });
    });
    return { ...toAppView(row), client_secret: clientSecret, webhook_secret: webhookSecret };
  }

  async list(): Promise<AppView[]> {
    return (await OAuthApp.query(this.db.current).orderBy('id')).map(toAppView);
  }

  async get(id: number): Promise<AppView> {
    const row = await OAuthApp.query(this.db.current).findById(id);
    if (!row) throw new NotFound('OAuth app');
    return toAppView(row);
  }

  /**
   * The secret that signs the app's deliveries for this business and mode; null when the app has
   * none, is revoked, or the grant was revoked since the event: nothing more goes out then.
   */
  async webhookSecret(id: number, tenancy: { businessId: number; livemode: boolean }): Promise<string | null> {
    const row = await OAuthApp.query(this.db.current).findById(id);
    if (!row?.webhook_secret_sealed || row.revoked_at) return null;
    const grant = await OAuthGrant.acrossTenants(acrossTenants('webhook worker'), this.db.current)
      .where({ app_id: id, business_id: tenancy.businessId, livemode: tenancy.livemode })
      .whereNull('revoked_at')
      .first();
    return grant ? this.openWebhookSecret(row.webhook_secret_sealed, id) : null;
  }

  /** Opens an app's sealed webhook secret read elsewhere (the outbox reads it with the event's receivers). */
  openWebhookSecret(sealed: string, appId: number): string {
    return this.webhookSecrets.open(sealed, placeOf(appId));
  }

  /** Ends the app: no new authorization, and every grant (so every token) of it is revoked. */
  async revoke(id: number): Promise<AppView> {
    return this.db.transaction(async (trx) => {
      const row = await OAuthApp.query(trx).findById(id).forUpdate();
      if (!row) throw new NotFound('OAuth app');
      if (row.revoked_at) throw new InvalidState(`OAuth app ${id} is already revoked`);
      const now = this.clock.now().toISOString();
      await OAuthApp.query(trx).findById(id).patch({ revoked_at: now });
      await OAuthGrant.acrossTenants(acrossTenants('oauth app revocation'), trx).where({ app_id: id }).whereNull('revoked_at').patch({ revoked_at: now });
      return { ...toAppView(row), revoked_at: now };
    });
  }
}
