import { Command } from 'commander';
import { ALL_SCOPES } from '../../server/auth/scopes';
import { KeyChanges, keyChangesSchema, MAX_ROTATION_GRACE_MS, newKeySchema } from '../../server/keys/schema';
import { CreatedKey, KeyStatus, KeyView, UpdatedKey } from '../../server/keys/view';
import { validateInput } from '../../server/validation';
import { BUSINESS_QUESTION, MODE_QUESTION, withContext } from '../context';
import { UsageError } from '../errors';
import { parseMode, parseScopes, positiveId } from '../options';
import { examples, output, paint, shortTime, table } from '../output';
import { confirmed, ensureOptions, isInteractive } from '../prompt';
import { groupCommand } from './groups';

interface CreateOptions {
  business?: string;
  mode?: string;
  scopes?: string;
  webhookUrl?: string;
  webhookSecret?: string;
  json?: boolean;
}

interface UpdateOptions {
  scopes?: string;
  webhookUrl?: string;
  removeWebhook?: boolean;
  webhookSecret?: string;
  generateWebhookSecret?: boolean;
  json?: boolean;
}

interface RotateOptions {
  expireIn?: string;
  expireNow?: boolean;
  yes?: boolean;
  json?: boolean;
}

const UNITS_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90s`, `30m`, `24h`, `7d` → milliseconds; at most 30 days. */
export function parseDuration(value: string, flag: string): number {
  const match = /^([1-9][0-9]{0,6})([smhd])$/.exec(value.trim());
  const ms = match ? Number(match[1]) * UNITS_MS[match[2]] : NaN;
  if (!(ms > 0) || ms > MAX_ROTATION_GRACE_MS) throw new UsageError(`${flag} must be a duration such as 90s, 30m, 24h or 7d, at most 30d`);
  return ms;
}

/** The key as printed once at creation or rotation; `webhook_secret` only when there is one. */
export function createdJson(key: CreatedKey) {
  return {
    id: key.id,
    key: key.key,
    business_id: key.business_id,
    mode: key.mode,
    scopes: key.scopes,
    webhook_url: key.webhook_url,
    ...(key.webhook_secret ? { webhook_secret: key.webhook_secret } : {}),
  };
}

export function createdLines(key: CreatedKey, verb: string): string[] {
  return [
    `${verb} ${key.mode} key ${key.id} for business ${key.business_id} (scopes: ${scopeList(key, ', ')})`,
    `Key, shown only this once: ${paint('bold', key.key)}`,
    ...(key.webhook_url ? [`Webhook URL: ${key.webhook_url}`] : []),
    ...(key.webhook_secret ? [`Webhook signing secret: ${key.webhook_secret}`] : []),
  ];
}

const STATUS_STYLE: Record<KeyStatus, 'green' | 'yellow' | 'red' | 'gray'> = { active: 'green', expiring: 'yellow', expired: 'gray', revoked: 'red' };

function statusText(key: KeyView): string {
  const text = key.status === 'expiring' ? `expires ${shortTime(key.expires_at)}` : key.status;
  return paint(STATUS_STYLE[key.status], text);
}

/** `all` for a key holding every scope, else the comma list. */
function scopeList(key: KeyView, separator = ','): string {
  return key.scopes.length === ALL_SCOPES.length ? 'all' : key.scopes.join(separator);
}

function masked(key: KeyView): string {
  return `${key.prefix}…${key.last4}`;
}

function listLines(list: KeyView[]): string[] {
  if (!list.length) return ['No keys'];
  return table(
    ['ID', 'MODE', 'KEY', 'STATUS', 'CREATED', 'WEBHOOK', 'SCOPES'],
    list.map((k) => [String(k.id), k.mode, masked(k), statusText(k), shortTime(k.created_at), k.webhook_url ?? '-', scopeList(k)]),
  );
}

function showLines(key: KeyView & { webhook_secret?: string }): string[] {
  return [
    `Key ${key.id}: ${masked(key)} (${key.mode}) of business ${key.business_id}`,
    `Status:         ${statusText(key)}`,
    `Scopes:         ${scopeList(key, ', ')}`,
    `Webhook URL:    ${key.webhook_url ?? '-'}`,
    `Webhook secret: ${key.webhook_secret ?? (key.webhook_secret_set ? 'set (shown only when created)' : '-')}`,
    `Created:        ${shortTime(key.created_at)}`,
    ...(key.revoked_at ? [`Revoked:        ${shortTime(key.revoked_at)}`] : []),
    ...(key.expires_at ? [`Expires:        ${shortTime(key.expires_at)}`] : []),
  ];
}

const SCOPES_QUESTION = { key: 'scopes', flag: '--scopes', message: 'Scopes (space to pick, a for all, enter when done)', choices: ALL_SCOPES, multiple: true };

function changesFrom(opts: UpdateOptions): KeyChanges {
  if (opts.webhookUrl !== undefined && opts.removeWebhook) throw new UsageError('give either --webhook-url or --remove-webhook, not both');
  if (opts.webhookSecret !== undefined && opts.generateWebhookSecret) throw new UsageError('give either --webhook-secret or --generate-webhook-secret, not both');
  const changes: KeyChanges = {
    ...(opts.scopes !== undefined ? { scopes: parseScopes(opts.scopes) } : {}),
    ...(opts.webhookUrl !== undefined ? { webhookUrl: opts.webhookUrl } : {}),
    ...(opts.removeWebhook ? { webhookUrl: null } : {}),
    ...(opts.webhookSecret !== undefined ? { webhookSecret: opts.webhookSecret } : {}),
    ...(opts.generateWebhookSecret ? { generateWebhookSecret: true } : {}),
  };
  if (Object.keys(changes).length === 0) {
    throw new UsageError('nothing to change: give --scopes, --webhook-url, --remove-webhook, --webhook-secret or --generate-webhook-secret');
  }
  return changes;
}

/** How long the old key lives on (`now` or a duration): the flags, a question on a terminal, or now for scripts. */
async function graceOf(opts: RotateOptions): Promise<string> {
  if (opts.expireIn !== undefined && opts.expireNow) throw new UsageError('give either --expire-in or --expire-now, not both');
  if (opts.expireNow || (opts.expireIn === undefined && !isInteractive())) return 'now';
  const { expireIn } = await ensureOptions({ expireIn: opts.expireIn }, [
    { key: 'expireIn', flag: '--expire-in', message: 'When should the old key stop working?', choices: ['now', '1h', '24h', '7d'] },
  ]);
  return expireIn!;
}

export function keysCommand(): Command {
  const keys = groupCommand('keys');

  keys
    .command('create')
    .description('Create an API key; its value is printed once')
    .option('--business <id>', 'business id')
    .option('--mode <mode>', 'test or live')
    .option('--scopes <list>', `comma-separated scopes, or "all" (${ALL_SCOPES.join(', ')}); a checklist on a terminal`)
    .option('--webhook-url <url>', 'address that receives signed events')
    .option('--webhook-secret <secret>', 'secret that signs events, 16 to 150 bytes (generated when a URL is given without one)')
    .option('--json', 'machine-readable output: { id, key, business_id, mode, scopes, webhook_url, webhook_secret? }')
    .addHelpText(
      'after',
      examples(
        'invoicing keys create --business 1 --mode test --scopes all',
        'invoicing keys create --business 1 --mode live --scopes invoices:write,clients:write --webhook-url https://shop.example.com/hooks --json',
      ),
    )
    .action(async (raw: CreateOptions) => {
      const opts = await ensureOptions(raw, [
        BUSINESS_QUESTION,
        MODE_QUESTION,
        SCOPES_QUESTION,
      ]);
      const input = {
        businessId: positiveId(opts.business!, '--business'),
        mode: parseMode(opts.mode!),
        scopes: parseScopes(opts.scopes!),
        webhookUrl: opts.webhookUrl,
        webhookSecret: opts.webhookSecret,
      };
      const created = await withContext(({ services }) => services.keys.create(validateInput(newKeySchema, input)));
      output(opts.json, createdJson(created), () => createdLines(created, 'Created'));
    });

  keys
    .command('list')
    .description('List the keys of a business, never their values')
    .option('--business <id>', 'business id')
    .option('--json', 'machine-readable output: an array of key records (see `keys show --help`)')
    .addHelpText('after', examples('invoicing keys list --business 1', 'invoicing keys list --business 1 --json'))
    .action(async (raw: { business?: string; json?: boolean }) => {
      const opts = await ensureOptions(raw, [BUSINESS_QUESTION]);
      const list = await withContext(({ services }) => services.keys.list(positiveId(opts.business!, '--business')));
      output(opts.json, list, () => listLines(list));
    });

  keys
    .command('show <id>')
    .description('Show one key: status, scopes and webhook (never its value or secret)')
    .option(
      '--json',
      'machine-readable output: { id, business_id, mode, livemode, scopes, prefix, last4, webhook_url, webhook_secret_set, status, created_at, revoked_at, expires_at }',
    )
    .addHelpText('after', examples('invoicing keys show 3', 'invoicing keys show 3 --json'))
    .action(async (rawId: string, opts: { json?: boolean }) => {
      const id = positiveId(rawId, 'key id');
      const key = await withContext(({ services }) => services.keys.get(id));
      output(opts.json, key, () => showLines(key));
    });

  keys
    .command('update <id>')
    .description("Change a key's scopes, webhook URL or webhook signing secret")
    .option('--scopes <list>', 'the new scopes: a comma list or "all" (replaces the old ones)')
    .option('--webhook-url <url>', 'a new webhook address; pending retries go there too')
    .option('--remove-webhook', 'stop sending webhooks to this key, pending retries included')
    .option('--webhook-secret <secret>', 'a new signing secret (16 to 150 bytes)')
    .option('--generate-webhook-secret', 'a new generated signing secret, printed once')
    .option('--json', 'machine-readable output: the key record, with webhook_secret when one was generated')
    .addHelpText(
      'after',
      examples(
        'invoicing keys update 3 --scopes invoices:write,clients:write',
        'invoicing keys update 3 --webhook-url https://shop.example.com/hooks --generate-webhook-secret',
        'invoicing keys update 3 --remove-webhook --json',
      ),
    )
    .action(async (rawId: string, opts: UpdateOptions) => {
      const id = positiveId(rawId, 'key id');
      const changes = changesFrom(opts);
      const key: UpdatedKey = await withContext(({ services }) => services.keys.update(id, validateInput(keyChangesSchema, changes)));
      output(opts.json, key, () => [
        `Updated key ${key.id}`,
        ...showLines(key).slice(1),
        ...(key.webhook_secret ? ['The new webhook signing secret is shown only this once.'] : []),
      ]);
    });

  keys
    .command('revoke <id>')
    .description('Revoke a key: running servers refuse it within 5 seconds')
    .option('--yes', 'do not ask for confirmation')
    .option('--json', 'machine-readable output: the key record')
    .addHelpText('after', examples('invoicing keys revoke 3', 'invoicing keys revoke 3 --yes --json'))
    .action(async (rawId: string, opts: { yes?: boolean; json?: boolean }) => {
      const id = positiveId(rawId, 'key id');
      if (!(await confirmed(`Revoke key ${id}? Requests made with it will fail.`, opts.yes))) return;
      const key = await withContext(({ services }) => services.keys.revoke(id));
      output(opts.json, key, () => [`Revoked key ${key.id} (${masked(key)})`]);
    });

  keys
    .command('rotate <id>')
    .description('Issue a new key with the same scopes and webhook; the old one stops now or after a grace period')
    .option('--expire-in <duration>', 'keep the old key working this long: 90s, 30m, 24h, 7d (at most 30d)')
    .option('--expire-now', 'revoke the old key at once (the default without a terminal)')
    .option('--yes', 'do not ask for confirmation')
    .option('--json', 'machine-readable output: the new key as `keys create` prints it, plus replaces (the old id) and replaced (its record)')
    .addHelpText(
      'after',
      `${examples('invoicing keys rotate 3 --expire-in 24h', 'invoicing keys rotate 3 --expire-now --yes --json')}

During the grace period both keys work; webhooks go to the new key only.`,
    )
    .action(async (rawId: string, opts: RotateOptions) => {
      const id = positiveId(rawId, 'key id');
      const grace = await graceOf(opts);
      const graceMs = grace === 'now' ? 0 : parseDuration(grace, '--expire-in');
      const when = graceMs === 0 ? 'The old key stops working now.' : `The old key keeps working for ${grace}.`;
      if (!(await confirmed(`Rotate key ${id}? ${when}`, opts.yes, true))) return;
      const { replaces, ...created } = await withContext(({ services }) => services.keys.rotate(id, graceMs));
      output(opts.json, { ...createdJson(created), replaces: replaces.id, replaced: replaces }, () => [
        ...createdLines(created, `Replaced key ${id} with`),
        replaces.expires_at ? `The old key ${masked(replaces)} works until ${shortTime(replaces.expires_at)}.` : `The old key ${masked(replaces)} is revoked.`,
      ]);
    });

  return keys;
}
