/** Every migration in order. Listed by hand so compiled and ts-jest runs apply the same files. */
import { Knex } from 'knex';
import * as createBusinesses from './20261121120000_create_businesses';
import * as createApiKeys from './20261121120100_create_api_keys';
import * as createClients from './20261121120200_create_clients';
import * as createIdempotencyKeys from './20261121120300_create_idempotency_keys';

export interface NamedMigration extends Knex.Migration {
  name: string;
}

export const migrations: NamedMigration[] = [
  { name: '20261121120000_create_businesses', ...createBusinesses },
  { name: '20261121120100_create_api_keys', ...createApiKeys },
  { name: '20261121120200_create_clients', ...createClients },
  { name: '20261121120300_create_idempotency_keys', ...createIdempotencyKeys },
];
