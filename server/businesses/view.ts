/** A business as the API (`GET /business`, `GET /ping`) and the CLI show it. Pure. */
import { Credential } from '../auth/credential';
import { Business } from './model';
import { BusinessView, PingView } from './schema';

export function toBusinessView(row: Business): BusinessView {
  return { id: row.id, name: row.name, currency: row.currency, country: row.country ?? null, plan: row.plan };
}

/** `GET /ping`: the credential's business in short, its scopes and mode. */
export function toPing(business: BusinessView, cred: Credential): PingView {
  return { business: { id: business.id, name: business.name, currency: business.currency }, scopes: [...cred.scopes], livemode: cred.livemode };
}
