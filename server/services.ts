/** The domain services, built once per process and shared by the HTTP routes, the CLI and the jobs. */
import { BusinessService } from './businesses/service';
import { ClientService } from './clients/service';
import { Config } from './config';
import { Database } from './db/database';
import { KeyService } from './keys/service';

export interface Services {
  businesses: BusinessService;
  keys: KeyService;
  clients: ClientService;
}

export function createServices(db: Database, config: Pick<Config, 'webhookAllowPrivate' | 'keyCacheTtlMs'>): Services {
  return {
    businesses: new BusinessService(db),
    keys: new KeyService(db, { webhookAllowPrivate: config.webhookAllowPrivate, cacheTtlMs: config.keyCacheTtlMs }),
    clients: new ClientService(db),
  };
}
