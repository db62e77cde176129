import { Command } from 'commander';
import { newAppSchema } from '../../server/oauth/schema';
import { AppView, CreatedApp, GrantView } from '../../server/oauth/view';
import { validateInput } from '../../server/validation';
import { BUSINESS_QUESTION, withContext } from '../context';
import { UsageError } from '../errors';
import { positiveId } from '../options';
import { examples, output, table } from '../output';
import { ensureOptions } from '../prompt';
import { groupCommand } from './groups';

interface CreateOptions {
  name?: string;
  redirectUri: string[];
  public?: boolean;
  webhookUrl?: string;
  webhookSecret?: string;
  json?: boolean;
}

const collect = (value: string, previous: string[]) => [...previous, value];

function appLines(app: AppView): string[] {
  return [
    `id: ${app.id}`,
    `name: ${app.name}`,
    `client_id: ${app.client_id}`,
    `type: ${app.public ? 'public (PKCE, no secret)' : 'confidential'}`,
    `redirect URIs: ${app.redirect_uris.join(' ')}`,
    `webhook URL: ${app.webhook_url ?? '-'}`,
    ...(app.revoked_at ? [`revoked at: ${app.revoked_at}`] : []),
  ];
}

export function oauthCommand(): Command {
  const oauth = groupCommand('oauth');
  const apps = new Command('apps').description('OAuth apps');

  apps
    .command('create')
    .description('Register an app; its client secret (and webhook secret) are shown once')
    .option('--name <name>', 'the app\'s name, shown to owners on the consent page')
    .option('--redirect-uri <uri>', 'an exact redirect URI (repeat for several)', collect, [])
    .option('--public', 'a public app (a mobile or browser app): no secret, PKCE required')
    .option('--webhook-url <url>', 'receives the events of every business that authorizes the app')
    .option('--webhook-secret <secret>', 'signs those events (default: generated and shown once)')
    .option('--json', 'machine-readable output: { id, name, client_id, client_secret, redirect_uris, … }')
    .addHelpText(
      'after',
      examples(
        'invoicing oauth apps create --name "Acme Platform" --redirect-uri https://acme.example/oauth/callback',
        'invoicing oauth apps create --name "Acme Mobile" --redirect-uri http://127.0.0.1:8765/callback --public --json',
      ),
    )
    .action(async (raw: CreateOptions) => {
      const opts = await ensureOptions(raw, [{ key: 'name', flag: '--name', message: 'App name' }]);
      if (!opts.redirectUri.length) throw new UsageError('give at least one --redirect-uri');
      const redirectUris = opts.redirectUri;
      const created: CreatedApp = await withContext(({ services }) =>
        services.oauthApps.create(
          validateInput(newAppSchema, { name: String(opts.name), redirectUris, public: Boolean(opts.public), webhookUrl: opts.webhookUrl, webhookSecret: opts.webhookSecret }),
        ),
      );
      output(opts.json, created, () => [
        `Created OAuth app ${created.id}`,
        ...appLines(created),
        ...(created.client_secret ? [`client_secret: ${created.client_secret}   (shown once: store it now)`] : []),
        ...(created.webhook_secret ? [`webhook_secret: ${created.webhook_secret}   (shown once)`] : []),
      ]);
    });

  apps
    .command('list')
    .description('Every app, oldest first')
    .option('--json', 'machine-readable output')
    .addHelpText('after', examples('invoicing oauth apps list', 'invoicing oauth apps list --json'))
    .action(async (opts: { json?: boolean }) => {
      const list = await withContext(({ services }) => services.oauthApps.list());
      output(opts.json, list, () =>
        list.length ? table(['ID', 'NAME', 'CLIENT ID', 'TYPE', 'STATUS'], list.map((a) => [String(a.id), a.name, a.client_id, a.public ? 'public' : 'confidential', a.revoked_at ? 'revoked' : 'active'])) : ['No OAuth apps yet'],
      );
    });

  apps
    .command('show <id>')
    .description('One app (never its secrets)')
    .option('--json', 'machine-readable output')
    .addHelpText('after', examples('invoicing oauth apps show 2'))
    .action(async (rawId: string, opts: { json?: boolean }) => {
      const app = await withContext(({ services }) => services.oauthApps.get(positiveId(rawId, 'app id')));
      output(opts.json, app, () => appLines(app));
    });

  apps
    .command('revoke <id>')
    .description('End the app: every grant and token of it stops working within seconds')
    .option('--json', 'machine-readable output')
    .addHelpText('after', examples('invoicing oauth apps revoke 2'))
    .action(async (rawId: string, opts: { json?: boolean }) => {
      const app = await withContext(({ services }) => services.oauthApps.revoke(positiveId(rawId, 'app id')));
      output(opts.json, app, () => [`Revoked OAuth app ${app.id}: its grants and tokens no longer work`]);
    });

  const grants = new Command('grants').description('What a business has authorized');
  grants
    .command('list')
    .description('The grants of a business, oldest first')
    .option('--business <id>', 'business id')
    .option('--json', 'machine-readable output')
    .addHelpText('after', examples('invoicing oauth grants list --business 3'))
    .action(async (raw: { business?: string; json?: boolean }) => {
      const opts = await ensureOptions(raw, [BUSINESS_QUESTION]);
      const list: GrantView[] = await withContext(({ services }) => services.oauthGrants.list(positiveId(String(opts.business), '--business')));
      output(opts.json, list, () =>
        list.length
          ? table(['ID', 'APP', 'MODE', 'SCOPES', 'STATUS'], list.map((g) => [String(g.id), g.app_name, g.livemode ? 'live' : 'test', g.scopes.join(','), g.revoked_at ? 'revoked' : 'active']))
          : ['This business has authorized no app'],
      );
    });
  grants
    .command('revoke <id>')
    .description('End a grant: its tokens stop working within seconds')
    .option('--json', 'machine-readable output')
    .addHelpText('after', examples('invoicing oauth grants revoke 7'))
    .action(async (rawId: string, opts: { json?: boolean }) => {
      const grant = await withContext(({ services }) => services.oauthGrants.revoke(positiveId(rawId, 'grant id')));
      output(opts.json, grant, () => [`Revoked grant ${grant.id} (${grant.app_name})`]);
    });

  oauth.addCommand(apps);
  oauth.addCommand(grants);
  return oauth;
}
