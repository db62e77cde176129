import { Knex } from 'knex';
import { fromDbTime, toDbTime } from '../server/db/time';
import { timestampColumn } from './schema-helpers';

/**
 * When each checkout session stops taking payment at the gateway, so that one close to its end is
 * replaced instead of reused. Sessions opened before this column get Stripe's default, 24 hours
 * after they were opened (the product never asked for another).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('checkout_sessions', (t) => {
    timestampColumn(t, 'expires_at').nullable();
  });
  const sessions: { id: number; created_at: string | Date }[] = await knex('checkout_sessions').select('id', 'created_at');
  for (const session of sessions) {
    const created = new Date(fromDbTime(session.created_at)!);
    await knex('checkout_sessions')
      .where({ id: session.id })
      .update({ expires_at: toDbTime(new Date(created.getTime() + 24 * 3600 * 1000)) });
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('checkout_sessions', (t) => {
    t.dropColumn('expires_at');
  });
}
