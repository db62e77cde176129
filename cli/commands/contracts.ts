/** `invoicing contracts create|list|show|countersign`: a business's contracts and proposals, through the service the API uses. */
import fs from 'node:fs';
import { Command } from 'commander';
import type { ContractInput, ContractView } from '../../server/contracts/schema';
import { ValidationFailed } from '../../server/errors';
import { BUSINESS_QUESTION, MODE_QUESTION, withContext } from '../context';
import { CliFailure, UsageError } from '../errors';
import { fieldCheck, idAnswer, parseAmount, parseMode, positiveId, validBody } from '../options';
import { examples, output, shorten, shortTime, table } from '../output';
import { ensureOptions, readStandardInput } from '../prompt';
import { groupCommand } from './groups';
import { money } from './payments';

interface CreateOptions {
  business?: string;
  mode?: string;
  client?: string;
  type?: string;
  title?: string;
  body?: string;
  bodyFile?: string;
  amount?: string;
  currency?: string;
  json?: boolean;
}

interface ListOptions {
  business?: string;
  mode?: string;
  client?: string;
  json?: boolean;
}

/** The text of `--body-file`: a file, or standard input for `-`. Kept exactly as written, as the API keeps it. */
async function bodyFromFile(path: string): Promise<string> {
  if (path === '-') return readStandardInput();
  try {
    return fs.readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a folder' : code === 'EACCES' ? 'permission denied' : String(code ?? err);
    throw new UsageError(`--body-file: cannot read "${path}": ${why}`);
  }
}

/**
 * The body `POST /contracts` would take, checked by its schema (server/contracts/schema.ts) before
 * the database is opened; the schema is required when the command runs, so that `--help` loads none
 * of the server. Anything it refuses is a usage error (exit 2) naming the flag.
 */
function validInput(opts: CreateOptions, body: string, clientId: number): ContractInput {
  const input = {
    title: opts.title,
    client_id: clientId,
    body,
    ...(opts.type === undefined ? {} : { type: opts.type.trim() }),
    ...(opts.amount === undefined ? {} : { amount: parseAmount(opts.amount) }),
    ...(opts.currency === undefined ? {} : { currency: opts.currency.trim() }),
  };
  const flagOf = (field: string) => (field === 'body' && opts.bodyFile !== undefined ? '--body-file' : field === 'client_id' ? '--client' : `--${field}`);
  return validBody(contractSchema().createContractBody, input, flagOf);
}

// eslint-disable-next-line @typescript-eslint/no-require-imports -- required when the command runs (see validInput)
const contractSchema = () => require('../../server/contracts/schema') as typeof import('../../server/contracts/schema');

const amountText = (c: ContractView) => (c.amount === null || !c.currency ? '-' : money(c.amount, c.currency));
const modeText = (c: ContractView) => (c.livemode ? 'live' : 'test');

function createdLines(c: ContractView): string[] {
  return [
    `Created ${modeText(c)} ${c.type} ${c.id}: ${c.title}, for client ${c.client_id}${c.amount === null ? '' : `, ${amountText(c)}`}`,
    `Status:      ${c.status}`,
    `Signing URL: ${c.signing_url}`,
    `Embed URL:   ${c.embed_url}`,
    `Countersign for the business: invoicing contracts countersign ${c.id} --name "Your Name"`,
  ];
}

function listLines(contracts: ContractView[], more: boolean): string[] {
  if (!contracts.length) return ['No contracts'];
  return [
    ...table(
      ['ID', 'MODE', 'TYPE', 'TITLE', 'CLIENT', 'AMOUNT', 'STATUS', 'CREATED'],
      contracts.map((c) => [String(c.id), modeText(c), c.type, shorten(c.title, 40), String(c.client_id), amountText(c), c.status, shortTime(c.created_at)]),
    ),
    ...(more ? ['More contracts than shown: narrow with --mode or --client, or page through GET /contracts.'] : []),
  ];
}

function showLines(c: ContractView): string[] {
  return [
    `${c.type === 'proposal' ? 'Proposal' : 'Contract'} ${c.id} (${modeText(c)}): ${c.title}`,
    `Client:       ${c.client_id}`,
    `Amount:       ${amountText(c)}`,
    `Status:       ${c.status}`,
    `Created:      ${shortTime(c.created_at)}`,
    `Signing URL:  ${c.signing_url}`,
    `Embed URL:    ${c.embed_url}`,
    ...(c.signatures.length
      ? ['Signatures:', ...table(['PARTY', 'NAME', 'SIGNED', 'DOCUMENT SHA-256'], c.signatures.map((s) => [s.party, s.name, shortTime(s.signed_at), s.document_sha256])).map((line) => `  ${line}`)]
      : ['Signatures:   none yet']),
    '',
    c.body,
  ];
}

/**
 * A client id the service does not know in this business and mode (it answers a field error, as the
 * API's 422 does), said with what was typed.
 */
function clientNotFound(err: unknown, clientId: number, businessId: number, mode: string): unknown {
  if (err instanceof ValidationFailed && err.details?.client_id) return new CliFailure(`--client ${clientId} is not a client of business ${businessId} in ${mode} mode`);
  return err;
}

export function contractsCommand(): Command {
  const contracts = groupCommand('contracts');

  contracts
    .command('create')
    .description('Create a contract or proposal for a client to sign; prints its signing URL')
    .option('--business <id>', 'business id')
    .option('--mode <mode>', 'test or live')
    .option('--client <id>', 'the client who signs (a client of the business in that mode)')
    .option('--type <type>', 'contract or proposal (default: contract)')
    .option('--title <title>', 'the title, 1 to 255 characters')
    .option('--body <text>', 'the text to sign, kept exactly as written')
    .option('--body-file <path>', 'read the text from a file instead, or from standard input with -')
    .option('--amount <amount>', 'an amount in major units, e.g. 1500 or 12.50 (optional)')
    .option('--currency <code>', 'ISO 4217 currency of the amount (default: the business currency)')
    .option('--json', 'machine-readable output: the contract, as GET /contracts/{id} shows it')
    .addHelpText(
      'after',
      examples(
        'invoicing contracts create --business 1 --mode test --client 7 --title "Website redesign" --body "We build the site by May 1."',
        'invoicing contracts create --business 1 --mode live --client 7 --type proposal --title "Retainer" --body-file retainer.md --amount 1500 --currency EUR',
        'cat terms.txt | invoicing contracts create --business 1 --mode test --client 7 --title Terms --body-file - --json',
      ),
    )
    .action(async (raw: CreateOptions) => {
      if (raw.body !== undefined && raw.bodyFile !== undefined) throw new UsageError('give either --body or --body-file, not both');
      const opts = await ensureOptions(raw, [
        BUSINESS_QUESTION,
        MODE_QUESTION,
        { key: 'client', flag: '--client', message: 'Client id', check: idAnswer },
        { key: 'title', flag: '--title', message: 'Title', check: fieldCheck(contractSchema().createContractBody, 'title') },
        ...(raw.bodyFile === undefined ? [{ key: 'body', flag: '--body (or --body-file)', message: 'Text to sign (one line; --body-file for more)' }] : []),
      ]);
      const businessId = positiveId(String(opts.business), '--business');
      const mode = parseMode(opts.mode!);
      const clientId = positiveId(String(opts.client), '--client');
      const body = opts.bodyFile === undefined ? opts.body! : await bodyFromFile(opts.bodyFile);
      const input = validInput(opts, body, clientId);
      const contract = await withContext(({ services }) =>
        services.contracts.createForOwner(businessId, mode, input).catch((err: unknown) => {
          throw clientNotFound(err, clientId, businessId, mode);
        }),
      );
      output(opts.json, contract, () => createdLines(contract));
    });

  contracts
    .command('list')
    .description('List the contracts and proposals of a business: live, then test, each oldest first (100 per mode at most; the API pages through more)')
    .option('--business <id>', 'business id')
    .option('--mode <mode>', 'live or test (default: both)')
    .option('--client <id>', "only this client's contracts")
    .option('--json', 'machine-readable output: { data: [contract, …], more } (contract as GET /contracts/{id})')
    .addHelpText('after', examples('invoicing contracts list --business 1', 'invoicing contracts list --business 1 --mode live --client 7 --json'))
    .action(async (raw: ListOptions) => {
      const opts = await ensureOptions(raw, [BUSINESS_QUESTION]);
      const businessId = positiveId(String(opts.business), '--business');
      const filters = {
        ...(opts.mode === undefined ? {} : { mode: parseMode(opts.mode) }),
        ...(opts.client === undefined ? {} : { client_id: positiveId(opts.client, '--client') }),
      };
      const list = await withContext(({ services }) => services.contracts.listForOwner(businessId, filters));
      output(opts.json, list, () => listLines(list.data, list.more));
    });

  contracts
    .command('show <contract-id>')
    .description('Show a contract of any business: its status, signing links, signatures and text')
    .option('--json', 'machine-readable output: the contract, as GET /contracts/{id} shows it')
    .addHelpText('after', examples('invoicing contracts show 12', 'invoicing contracts show 12 --json'))
    .action(async (rawId: string, opts: { json?: boolean }) => {
      const id = positiveId(rawId, 'contract id');
      const contract = await withContext(({ services }) => services.contracts.getAsOwner(id));
      output(opts.json, contract, () => showLines(contract));
    });

  contracts
    .command('countersign <contract-id>')
    .description('Sign a contract for its business; when the client has signed too, it is signed and contract.signed fires')
    .option('--name <name>', 'the full name of the person signing for the business')
    .option('--json', 'machine-readable output: the contract with its signatures')
    .addHelpText('after', examples('invoicing contracts countersign 12 --name "Ada Lovelace"', 'invoicing contracts countersign 12 --name "Ada Lovelace" --json'))
    .action(async (rawId: string, raw: { name?: string; json?: boolean }) => {
      const id = positiveId(rawId, 'contract id');
      const opts = await ensureOptions(raw, [{ key: 'name', flag: '--name', message: 'Full name of the signer' }]);
      const name = String(opts.name).trim();
      if (!name || name.length > 255) throw new UsageError('--name must be 1 to 255 characters');
      const contract = await withContext(({ services }) => services.contracts.countersignAsOwner(id, { name, ipAddress: null, userAgent: 'invoicing CLI' }));
      output(opts.json, contract, () => [`Countersigned contract ${contract.id} as ${name}`, `Status: ${contract.status}`]);
    });

  return contracts;
}
