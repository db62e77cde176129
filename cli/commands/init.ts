/** `invoicing init`: the guided first run, from an empty database to a test key and a working curl call. */
import { Command } from 'commander';
import { ALL_SCOPES } from '../../server/auth/scopes';
import { newBusinessSchema } from '../../server/businesses/schema';
import { newKeySchema } from '../../server/keys/schema';
import { validateInput } from '../../server/validation';
import { atRun, cliConfig, openDatabase } from '../context';
import { redactUrls } from '../errors';
import { parseScopes } from '../options';
import { createdJson, createdLines } from './keys';
import { examples, output, paint } from '../output';
import { ask, ensureOptions, isInteractive, OptionSpec } from '../prompt';
import { groupCommand } from './groups';

interface InitOptions {
  name?: string;
  currency?: string;
  country?: string;
  scopes?: string;
  webhookUrl?: string;
  webhookSecret?: string;
  json?: boolean;
}

const NAME: OptionSpec = { key: 'name', flag: '--name', message: 'Business name' };
const CURRENCY: OptionSpec = { key: 'currency', flag: '--currency', message: 'Currency (ISO 4217, e.g. USD)' };
const SCOPES: OptionSpec = {
  key: 'scopes',
  flag: '--scopes',
  message: 'Scopes of the test key',
  choices: ALL_SCOPES,
  multiple: true,
};

export function initCommand(): Command {
  return groupCommand('init')
    .option('--name <name>', 'business name')
    .option('--currency <code>', 'ISO 4217 currency, e.g. USD')
    .option('--country <cc>', 'ISO 3166-1 alpha-2 country, e.g. US')
    .option('--scopes <list>', `scopes of the test key: comma-separated, or "all" (${ALL_SCOPES.join(', ')})`)
    .option('--webhook-url <url>', 'address that receives signed events')
    .option('--webhook-secret <secret>', 'secret that signs events (generated when a URL is given without one)')
    .option('--json', 'machine-readable output')
    .addHelpText('after', examples('invoicing init', 'invoicing init --name "Acme" --currency USD --scopes all --json'))
    .action(init);
}

/** Whether the partner API answers at `apiUrl` now (its root index): init then says so rather than telling to start it. */
async function answersAsTheApi(apiUrl: string): Promise<boolean> {
  try {
    const res = await fetch(apiUrl, { signal: AbortSignal.timeout(1500) });
    return res.ok && typeof ((await res.json()) as { openapi?: unknown }).openapi === 'string';
  } catch {
    return false;
  }
}

async function init(raw: InitOptions): Promise<void> {
  // Usage errors come before any change to the database; without a terminal, one error names every missing flag.
  if (!isInteractive()) await ensureOptions(raw, [NAME, CURRENCY, SCOPES]);
  const flagScopes = raw.scopes === undefined ? undefined : parseScopes(raw.scopes);

  const config = cliConfig();
  // Opened before any question, so a database that is down is reported before a person answers anything.
  const db = await openDatabase(config);
  try {
    const applied = await db.pendingMigrations();
    await db.migrate({ appKey: () => atRun.appKey().loadAppKey(config) });
    const services = atRun.services().createServices(db, config);

    // On a terminal the questions follow the order of a form; without one, ask() answers '' and nothing optional is asked.
    const named = await ensureOptions(raw, [NAME, CURRENCY]);
    const country = raw.country ?? ((await ask('Country (ISO 3166-1 alpha-2, e.g. US; empty for none)')) || undefined);
    // Checked now so that a typo in the currency is reported before the remaining questions, not after them.
    const business = validateInput(newBusinessSchema, { name: named.name, currency: named.currency, country });
    const scopes = flagScopes ?? parseScopes((await ensureOptions(raw, [SCOPES])).scopes!);
    const webhookUrl = raw.webhookUrl ?? ((await ask('Webhook URL that receives signed events (empty for none)')) || undefined);
    const webhookSecret =
      raw.webhookSecret ?? (webhookUrl ? (await ask('Webhook signing secret (empty to generate a strong one)', '', { secret: true })) || undefined : undefined);

    // One transaction: the services join it, so a refused key (a private webhook URL, a short secret) rolls the business back.
    const { business: b, key } = await db.transaction(async () => {
      const made = await services.businesses.create(business);
      const testKey = validateInput(newKeySchema, { businessId: made.id, mode: 'test', scopes, webhookUrl, webhookSecret });
      return { business: made, key: await services.keys.create(testKey) };
    });

    const apiUrl = `${config.baseUrl}/api/v1/partner`;
    const pingUrl = `${apiUrl}/ping`;
    const running = await answersAsTheApi(apiUrl);
    const curl = `curl -H "Authorization: Bearer ${key.key}" ${pingUrl}`;
    /**
     * --json, stable: { business: { id, name, currency, country, plan },
     *   key: { id, key, business_id, mode, scopes, webhook_url, webhook_secret? },
     *   migrations_applied: string[], ping: { url, curl } }.
     * The key shape is `keys create --json`'s; webhook_secret is present only when the key has one.
     */
    const json = {
      business: b,
      key: createdJson(key),
      migrations_applied: applied,
      ping: { url: pingUrl, curl },
    };
    output(raw.json, json, () => [
      `Database: ${redactUrls(config.databaseUrl)} (${applied.length ? `applied ${applied.length} migration${applied.length > 1 ? 's' : ''}` : 'already up to date'})`,
      `Created business ${b.id}: ${b.name} (${b.currency}${b.country ? `, ${b.country}` : ''}, plan ${b.plan})`,
      ...createdLines(key, 'Created'),
      '',
      ...(running
        ? [`The API is running at ${apiUrl}; check the key:`]
        : [`Start the API with: ${paint('bold', 'npm start')} (or ${paint('bold', 'invoicing serve')}; it listens on port ${config.port})`, 'Then check the key:']),
      `  ${curl}`,
      '',
      `See its events arrive at a local handler: ${paint('bold', 'invoicing webhooks listen --forward-to http://localhost:4242/webhooks')}`,
      `and make one happen: ${paint('bold', 'invoicing trigger invoice.created')}`,
    ]);
  } finally {
    await db.close();
  }
}
