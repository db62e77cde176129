/** What businesses have authorized: listed and revoked by the owner's CLI. */
import { acrossTenants } from '../auth/actor';
import { Clock, systemClock } from '../clock';
import { Database } from '../db/database';
import { InvalidState, NotFound } from '../errors';
import { OAuthApp, OAuthGrant } from './model';
import { GrantView, toGrantView } from './view';

export class GrantService {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock = systemClock,
  ) {}

  async list(businessId: number): Promise<GrantView[]> {
    const grants = await OAuthGrant.acrossTenants(acrossTenants('oauth grants of a business'), this.db.current).where({ business_id: businessId }).orderBy('id');
    const apps = new Map((await OAuthApp.query(this.db.current).whereIn('id', [...new Set(grants.map((g) => g.app_id))])).map((app) => [app.id, app]));
    return grants.map((grant) => toGrantView(grant, apps.get(grant.app_id)?.name ?? ''));
  }

  /** Ends a grant: its tokens stop working (within the credential cache's few seconds). */
  async revoke(id: number): Promise<GrantView> {
    return this.db.transaction(async (trx) => {
      const grant = await OAuthGrant.acrossTenants(acrossTenants('oauth grants of a business'), trx).findById(id).forUpdate();
      if (!grant) throw new NotFound('Grant', id);
      if (grant.revoked_at) throw new InvalidState(`Grant ${id} is already revoked`);
      await grant.$query(trx).patch({ revoked_at: this.clock.now().toISOString() });
      const app = await OAuthApp.query(trx).findById(grant.app_id);
      return toGrantView(grant, app?.name ?? '');
    });
  }
}
