/** OAuth apps of platforms, created by the CLI: a client id, a secret shown once (none for a public app), exact redirect URIs. */
import { acrossTenants } from '../auth/actor';
import { Clock, systemClock } from '../clock';
import { Database } from '../db/database';
import { InvalidState, NotFound, ValidationFailed } from '../errors';
import { SealedPlace, SecretBox } from '../keys/secret-box';
import { hashKey, randomBase62 } from '../keys/token';
import { resolvedAddressProblem, webhookUrlProblem } from '../keys/webhook-url';
import { OAuthApp, OAuthGrant } from './model';
import { NewApp } from './schema';
import { AppView, CreatedApp, toAppView } from './view';

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

  /** `input` is valid by newAppSchema; the webhook URL is checked here, as it takes a DNS lookup. */
  async create(input: NewApp): Promise<CreatedApp> {
    if (input.webhookUrl) {
      const problem = webhookUrlProblem(input.webhookUrl, this.options.webhookAllowPrivate) ?? (await resolvedAddressProblem(input.webhookUrl, this.options.webhookAllowPrivate));
      if (problem) throw new ValidationFailed({ webhook_url: [problem] });
    }
    const clientSecret = input.public ? null : `oas_${randomBase62(40)}`;
    const webhookSecret = input.webhookUrl ? (input.webhookSecret ?? `whsec_${randomBase62(32)}`) : null;
    const row = await this.db.transaction(async (trx) => {
      const inserted = await OAuthApp.query(trx).insert({
        name: input.name,
        client_id: `app_${randomBase62(24)}`,
        client_secret_hash: clientSecret ? hashKey(clientSecret) : null,
        redirect_uris: JSON.stringify(input.redirectUris),
        webhook_url: input.webhookUrl ?? null,
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
    if (!row) throw new NotFound('OAuth app', id);
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
      if (!row) throw new NotFound('OAuth app', id);
      if (row.revoked_at) throw new InvalidState(`OAuth app ${id} is already revoked`);
      const now = this.clock.now().toISOString();
      await OAuthApp.query(trx).findById(id).patch({ revoked_at: now });
      await OAuthGrant.acrossTenants(acrossTenants('oauth app revocation'), trx).where({ app_id: id }).whereNull('revoked_at').patch({ revoked_at: now });
      return { ...toAppView(row), revoked_at: now };
    });
  }
}
