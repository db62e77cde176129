import pino from 'pino';
import { startApp, Tenant, TestApp } from '../support/app';
import { testDriver } from '../support/database';

/** Personal data the log must never carry, though the failing statements hold it. */
const NAME = 'Zoë Secretname';
const EMAIL = 'zoe.secret@example.com';
const PERSONAL_DATA = /Secretname|zoe\.secret/;

/** An app of its own (each test breaks its schema) whose log lines are kept. */
async function loggedApp(): Promise<{ app: TestApp; tenant: Tenant; lines: string[] }> {
  const lines: string[] = [];
  const app = await startApp({}, { logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }) });
  return { app, tenant: await app.tenant(), lines };
}

/** The `err` of every log entry that has one. */
function loggedErrors(lines: string[]): Record<string, unknown>[] {
  return lines.map((line) => JSON.parse(line)).filter((entry) => entry.err).map((entry) => entry.err);
}

/** Makes every client's name refuse to be stored, as a column too narrow for it would. */
async function makeClientNamesNotFit(app: TestApp): Promise<void> {
  if (testDriver() === 'mysql') {
    await app.db.knex.raw('ALTER TABLE clients MODIFY name varchar(3) NOT NULL');
    return;
  }
  // SQLite enforces no declared length; a STRICT table refuses a value of the wrong type instead.
  await app.db.knex.raw('CREATE TABLE name_probe (name INTEGER) STRICT');
  await app.db.knex.raw('CREATE TRIGGER name_probe_check BEFORE INSERT ON clients BEGIN INSERT INTO name_probe VALUES (NEW.name); END');
}

describe('database errors', () => {
  test('when a value does not fit its column, then 422 names the field and the log holds no value of the statement', async () => {
    const { app, tenant, lines } = await loggedApp();
    await makeClientNamesNotFit(app);

    const res = await tenant.api.post('/clients', { name: NAME, email: EMAIL });
    await app.stop();

    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: 'validation_failed', errors: { name: [expect.any(String)] } });
    expect(loggedErrors(lines)).toEqual([expect.objectContaining({ code: expect.any(String), sql: expect.stringContaining('?') })]);
    expect(lines.join('\n')).not.toMatch(PERSONAL_DATA);
  });

  test('when a database error becomes a 500, then the log names its code and statement without the values', async () => {
    const { app, tenant, lines } = await loggedApp();
    // A uniqueness the service does not expect: the second charge's insert fails unexplained.
    await app.db.knex.schema.alterTable('clients', (t) => t.unique(['business_id', 'address'], { indexName: 'clients_address_probe' }));
    const charge = (email: string) => tenant.api.post('/quick-charge', { amount: 1, client: { name: NAME, email, address: 'Secretname Street 1' } });

    await charge(`first.${EMAIL}`);
    const res = await charge(EMAIL);
    await app.stop();

    expect(res.status).toBe(500);
    const [logged] = loggedErrors(lines);
    expect(logged).toMatchObject({ code: expect.any(String), sql: expect.stringContaining('?') });
    expect(logged).not.toHaveProperty('stack');
    expect(lines.join('\n')).not.toMatch(PERSONAL_DATA);
  });
});
