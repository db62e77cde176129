import { Command } from 'commander';
import { ALL_SCOPES, isScope, Scope } from '../../server/auth/scopes';
import { CreatedKey, KeyView } from '../../server/keys/service';
import { Mode } from '../../server/keys/token';
import { output, withContext } from '../context';
import { UsageError } from '../errors';
import { confirmed, ensureOptions } from '../prompt';

interface CreateOptions {
  business?: string;
  mode?: string;
  scopes?: string;
  webhookUrl?: string;
  webhookSecret?: string;
  json?: boolean;
}

export function positiveId(value: string, what: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(value)) throw new UsageError(`${what} must be a positive integer`);
  return Number(value);
}

export function parseScopes(value: string): Scope[] {
  if (value.trim() === 'all') return [...ALL_SCOPES];
  const scopes = value.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length || scopes.length === 0) {
    throw new UsageError(`unknown scope(s) ${unknown.join(', ') || '(none given)'}; use "all" or a comma list of: ${ALL_SCOPES.join(', ')}`);
  }
  return [...new Set(scopes)] as Scope[];
}

function createdJson(key: CreatedKey) {
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

function createdLines(key: CreatedKey, verb: string): string[] {
  return [
    `${verb} ${key.mode} key ${key.id} for business ${key.business_id} (scopes: ${key.scopes.join(', ')})`,
    `Key, shown only this once: ${key.key}`,
    ...(key.webhook_url ? [`Webhook URL: ${key.webhook_url}`] : []),
    ...(key.webhook_secret ? [`Webhook signing secret: ${key.webhook_secret}`] : []),
  ];
}

function keyLine(key: KeyView): string {
  const state = key.revoked_at ? `revoked ${key.revoked_at}` : 'active';
  return `${key.id}  ${key.mode}  ${key.prefix}…${key.last4}  ${state}  ${key.scopes.join(',')}${key.webhook_url ? `  ${key.webhook_url}` : ''}`;
}

export function keysCommand(): Command {
  const keys = new Command('keys').description('Manage API keys of a business');

  keys
    .command('create')
    .description('Create an API key; its value is printed once')
    .option('--business <id>', 'business id')
    .option('--mode <mode>', 'test or live')
    .option('--scopes <list>', `comma-separated scopes, or "all" (${ALL_SCOPES.join(', ')})`)
    .option('--webhook-url <url>', 'address that receives signed events')
    .option('--webhook-secret <secret>', 'secret that signs events (generated when a URL is given without one)')
    .option('--json', 'machine-readable output')
    .action(async (raw: CreateOptions) => {
      const opts = await ensureOptions(raw, [
        { key: 'business', flag: '--business', message: 'Business id' },
        { key: 'mode', flag: '--mode', message: 'Mode', choices: ['test', 'live'] },
        { key: 'scopes', flag: '--scopes', message: 'Scopes (comma-separated, or "all")' },
      ]);
      if (opts.mode !== 'test' && opts.mode !== 'live') throw new UsageError('--mode must be test or live');
      const input = {
        businessId: positiveId(opts.business!, '--business'),
        mode: opts.mode as Mode,
        scopes: parseScopes(opts.scopes!),
        webhookUrl: opts.webhookUrl,
        webhookSecret: opts.webhookSecret,
      };
      const created = await withContext(({ services }) => services.keys.create(input));
      output(opts.json, createdJson(created), () => createdLines(created, 'Created'));
    });

  keys
    .command('list')
    .description('List the keys of a business (never their values)')
    .option('--business <id>', 'business id')
    .option('--json', 'machine-readable output')
    .action(async (raw: { business?: string; json?: boolean }) => {
      const opts = await ensureOptions(raw, [{ key: 'business', flag: '--business', message: 'Business id' }]);
      const list = await withContext(({ services }) => services.keys.list(positiveId(opts.business!, '--business')));
      output(opts.json, list, () => (list.length ? list.map(keyLine) : ['No keys']));
    });

  keys
    .command('revoke <id>')
    .description('Revoke a key: it stops working within 5 seconds')
    .option('--yes', 'do not ask for confirmation')
    .option('--json', 'machine-readable output')
    .action(async (rawId: string, opts: { yes?: boolean; json?: boolean }) => {
      const id = positiveId(rawId, 'key id');
      if (!(await confirmed(`Revoke key ${id}? Requests made with it will fail.`, opts.yes))) return;
      const key = await withContext(({ services }) => services.keys.revoke(id));
      output(opts.json, key, () => [`Revoked key ${key.id} (${key.prefix}…${key.last4})`]);
    });

  keys
    .command('rotate <id>')
    .description('Replace a key with a new one of the same scopes and webhook; the old one is revoked')
    .option('--yes', 'do not ask for confirmation')
    .option('--json', 'machine-readable output')
    .action(async (rawId: string, opts: { yes?: boolean; json?: boolean }) => {
      const id = positiveId(rawId, 'key id');
      if (!(await confirmed(`Rotate key ${id}? The old key stops working.`, opts.yes))) return;
      const created = await withContext(({ services }) => services.keys.rotate(id));
      output(opts.json, { ...createdJson(created), replaces: id }, () => createdLines(created, `Replaced key ${id} with`));
    });

  return keys;
}
