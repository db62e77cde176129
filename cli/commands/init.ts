/** `invoicing init`: the guided first run, from an empty database to a test key and a working curl call. */
import { Command } from 'commander';
import { ALL_SCOPES } from '../../server/auth/scopes';
import { BusinessView, newBusinessSchema } from '../../server/businesses/schema';
import { newKeySchema } from '../../server/keys/schema';
import { webhookUrlProblem } from '../../server/keys/webhook-url';
import type { Services } from '../../server/services';
import { validateInput } from '../../server/validation';
import { atRun, cliConfig, openDatabase } from '../context';
import { redactUrls, UsageError } from '../errors';
import { fieldCheck, parseScopes, positiveId } from '../options';
import { NEW_BUSINESS_QUESTIONS } from './business';
import { createdJson, createdLines } from './keys';
import { examples, invoicingCommand, output, paint } from '../output';
import { ask, ensureOptions, isInteractive, OptionSpec } from '../prompt';
import { apiAnswers } from '../running-server';
import { groupCommand } from './groups';

interface InitOptions {
  business?: string;
  name?: string;
  currency?: string;
  country?: string;
  scopes?: string;
  webhookUrl?: string;
  webhookSecret?: string;
  json?: boolean;
}

const [NAME, CURRENCY] = NEW_BUSINESS_QUESTIONS;
/** The answer of the business list that makes a new business rather than use one. */
const NEW_BUSINESS = 'new';
const SCOPES: OptionSpec = {
  key: 'scopes',
  flag: '--scopes',
  message: 'Scopes of the test key',
  choices: ALL_SCOPES,
  multiple: true,
};

export function initCommand(): Command {
  return groupCommand('init')
    .option('--business <id>', 'a business that exists, instead of a new one (default: the only one, when there is one)')
    .option('--name <name>', 'name of a new business')
    .option('--currency <code>', 'ISO 4217 currency, e.g. USD')
    .option('--country <cc>', 'ISO 3166-1 alpha-2 country, e.g. US')
    .option('--scopes <list>', `scopes of the test key: comma-separated, or "all" (${ALL_SCOPES.join(', ')})`)
    .option('--webhook-url <url>', 'address that receives signed events')
    .option('--webhook-secret <secret>', 'secret that signs events (generated when a URL is given without one)')
    .option('--json', 'machine-readable output')
    .addHelpText('after', examples('invoicing init', 'invoicing init --name "Acme" --currency USD --scopes all --json', 'invoicing init --business 1 --scopes all'))
    .action(init);
}

/**
 * The business init works on: `--business`; else a new one when `--name` is given or there is none;
 * else, on a terminal, the one picked from the list (or a new one); without one, the only one
 * (with several, --business or a new one's options are required).
 * `listen` and `trigger` make a business when there is none: init then keys that one, so all three
 * work on the same business and one handler sees its events.
 */
async function existingBusiness(services: Services, raw: InitOptions): Promise<BusinessView | undefined> {
  if (raw.business !== undefined) return services.businesses.get(positiveId(raw.business, '--business'));
  // Any of a new business's options asks for a new one (the others are then required).
  if ((raw.name ?? raw.currency ?? raw.country) !== undefined) return undefined;
  const all = await services.businesses.list();
  if (all.length === 0) return undefined;
  if (isInteractive()) {
    const choices = [...all.map((b) => ({ value: String(b.id), name: `${b.id}  ${b.name} (${b.currency})` })), { value: NEW_BUSINESS, name: 'A new business' }];
    const unanswered: { business?: string } = {};
    const { business } = await ensureOptions(unanswered, [{ key: 'business', flag: '--business', message: 'Business to make the test key for', choices: () => Promise.resolve(choices) }]);
    return business === NEW_BUSINESS ? undefined : all.find((b) => String(b.id) === business);
  }
  // Without a terminal, only the only business is taken for granted; with several, --business names one.
  if (all.length === 1) return all[0];
  throw new UsageError(`missing required options: --business ID (one of the ${all.length} businesses: invoicing business list), or --name and --currency for a new one`);
}

async function init(raw: InitOptions): Promise<void> {
  if (raw.business !== undefined && (raw.name ?? raw.currency ?? raw.country) !== undefined) {
    throw new UsageError('--business keys a business that exists: give it without --name, --currency and --country');
  }
  const flagScopes = raw.scopes === undefined ? undefined : parseScopes(raw.scopes);

  const config = cliConfig();
  // Opened before any question, so a database that is down is reported before a person answers anything.
  const db = await openDatabase(config);
  try {
    const applied = await db.pendingMigrations();
    await db.migrate({ appKey: () => atRun.appKey().loadAppKey(config) });
    const services = atRun.services().createServices(db, config);

    const existing = await existingBusiness(services, raw);
    // Without a terminal, one usage error names every missing flag, before any business or key is made.
    if (!isInteractive()) await ensureOptions(raw, existing ? [SCOPES] : [NAME, CURRENCY, SCOPES]);
    // On a terminal the questions follow the order of a form, each answer checked as it is given;
    // without one, ask() answers '' and nothing optional is asked.
    const business = existing ? undefined : await newBusiness(raw);
    const scopes = flagScopes ?? parseScopes((await ensureOptions(raw, [SCOPES])).scopes!);
    // The address is checked as the key service checks it (a private one needs WEBHOOK_ALLOW_PRIVATE), as it is typed.
    const webhookUrlCheck = (url: string) => webhookUrlProblem(url, config.webhookAllowPrivate)?.replace(/^webhook_url /, '') ?? true;
    const webhookUrl = raw.webhookUrl ?? ((await ask('Webhook URL that receives signed events (empty for none)', '', { check: webhookUrlCheck })) || undefined);
    const webhookSecret =
      raw.webhookSecret ??
      (webhookUrl ? (await ask('Webhook signing secret (empty to generate a strong one)', '', { secret: true, check: fieldCheck(newKeySchema, 'webhookSecret') })) || undefined : undefined);

    // One transaction: the services join it, so a refused key (a private webhook URL, a short secret) rolls a new business back.
    const { business: b, key } = await db.transaction(async () => {
      const made = existing ?? (await services.businesses.create(business!));
      const testKey = validateInput(newKeySchema, { businessId: made.id, mode: 'test', scopes, webhookUrl, webhookSecret });
      return { business: made, key: await services.keys.create(testKey) };
    });

    const apiUrl = `${config.baseUrl}/api/v1/partner`;
    const pingUrl = `${apiUrl}/ping`;
    const running = await apiAnswers(apiUrl);
    const cli = invoicingCommand();
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
      `${existing ? 'Using' : 'Created'} business ${b.id}: ${b.name} (${b.currency}${b.country ? `, ${b.country}` : ''}, plan ${b.plan})`,
      ...createdLines(key, 'Created'),
      '',
      ...(running
        ? [`The API is running at ${apiUrl}; check the key:`]
        : [`Start the API with: ${paint('bold', 'npm start')} (or ${paint('bold', `${cli} serve`)}; it listens on port ${config.port})`, 'Then check the key:']),
      `  ${curl}`,
      '',
      `See its events arrive at a local handler: ${paint('bold', `${cli} webhooks listen --business ${b.id} --forward-to http://localhost:4242/webhooks${key.webhook_secret ? ` --key ${key.id}` : ''}`)}`,
      `and make one happen: ${paint('bold', `${cli} trigger invoice.created --business ${b.id}`)}`,
    ]);
  } finally {
    await db.close();
  }
}

/** The new business's name, currency and country, each asked on a terminal and checked as it is answered. */
async function newBusiness(raw: InitOptions): Promise<{ name: string; currency: string; country?: string }> {
  const named = await ensureOptions(raw, [NAME, CURRENCY]);
  const country = raw.country ?? ((await ask('Country (ISO 3166-1 alpha-2, e.g. US; empty for none)', '', { check: fieldCheck(newBusinessSchema, 'country') })) || undefined);
  return validateInput(newBusinessSchema, { name: named.name, currency: named.currency, country });
}
