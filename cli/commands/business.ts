import { Command } from 'commander';
import {
  businessChangesSchema,
  BusinessChanges,
  EINVOICE_FORMATS,
  BusinessProfile,
  BusinessView,
  LEGAL_IDENTITY_FIELDS,
  LegalIdentityField,
  legalIdentityChangesSchema,
  newBusinessSchema,
  reminderOffsetsChangeSchema,
} from '../../server/businesses/schema';
import { gatewayCredentialsSchema } from '../../server/gateways/schema';
import { GatewayView } from '../../server/gateways/view';
import { validateInput } from '../../server/validation';
import { withContext } from '../context';
import { UsageError } from '../errors';
import { fieldCheck, positiveId, validBody } from '../options';
import { examples, output, table } from '../output';
import { ensureOptions, OptionSpec, readStandardInput } from '../prompt';
import { groupCommand } from './groups';

interface CreateOptions {
  name?: string;
  currency?: string;
  country?: string;
  plan?: string;
  json?: boolean;
}

/** The options of the legal identity, by field: `--legal-name` sets `legal_name`; each takes '' to clear it. */
const LEGAL_OPTIONS: Record<LegalIdentityField, { flag: string; key: string; value: string; help: string }> = {
  legal_name: { flag: '--legal-name', key: 'legalName', value: '<name>', help: 'the registered name invoices show (default: the business name)' },
  address_line1: { flag: '--address-line1', key: 'addressLine1', value: '<text>', help: 'first street line of the address' },
  address_line2: { flag: '--address-line2', key: 'addressLine2', value: '<text>', help: 'second street line of the address' },
  city: { flag: '--city', key: 'city', value: '<city>', help: 'city' },
  postal_code: { flag: '--postal-code', key: 'postalCode', value: '<code>', help: 'postal code' },
  state: { flag: '--state', key: 'state', value: '<state>', help: 'state, province or region' },
  tax_id: { flag: '--tax-id', key: 'taxId', value: '<id>', help: 'VAT or other tax number, e.g. DE123456789 (an EU VAT number is checked for its country\'s shape)' },
  registration_number: { flag: '--registration-number', key: 'registrationNumber', value: '<number>', help: 'company registration number' },
  email: { flag: '--email', key: 'email', value: '<address>', help: 'contact e-mail shown on invoices' },
  phone: { flag: '--phone', key: 'phone', value: '<phone>', help: 'contact phone shown on invoices' },
  iban: { flag: '--iban', key: 'iban', value: '<iban>', help: 'IBAN for bank transfers (spaces allowed; checked by its ISO 13616 check digits)' },
  bic: { flag: '--bic', key: 'bic', value: '<bic>', help: 'BIC of the bank, 8 or 11 characters' },
  invoice_footer: { flag: '--invoice-footer', key: 'invoiceFooter', value: '<text>', help: 'text printed at the foot of every invoice' },
  peppol_id: { flag: '--peppol-id', key: 'peppolId', value: '<scheme:id>', help: 'Peppol participant ID SCHEME:ID, e.g. 0088:7300010000001 or 9930:DE123456789' },
};

type UpdateOptions = {
  name?: string;
  currency?: string;
  /** A code with --country ('' clears it), false with --no-country, undefined when neither is given. */
  country?: string | false;
  plan?: string;
  /** Comma-separated origins, or `*` for any. */
  embedOrigins?: string;
  einvoiceFormat?: string;
  /** Comma-separated days from the due date, or `none`. */
  reminders?: string;
  json?: boolean;
} & { [key: string]: string | boolean | undefined };

/** A new business's name and currency, asked on a terminal and checked as they are typed (business create, init). */
export const NEW_BUSINESS_QUESTIONS: OptionSpec[] = [
  { key: 'name', flag: '--name', message: 'Business name', check: fieldCheck(newBusinessSchema, 'name') },
  { key: 'currency', flag: '--currency', message: 'Currency (ISO 4217, e.g. USD)', check: fieldCheck(newBusinessSchema, 'currency') },
];

function recordLines(b: BusinessView): string[] {
  return [`id: ${b.id}`, `name: ${b.name}`, `currency: ${b.currency}`, `country: ${b.country ?? '-'}`, `plan: ${b.plan}`];
}

/** The record, then the legal identity: `legal name: …`, `address line1: …`, `-` for what is not set. */
function profileLines(b: BusinessProfile): string[] {
  return [
    ...recordLines(b),
    ...LEGAL_IDENTITY_FIELDS.map((field) => `${field.replace(/_/g, ' ')}: ${b[field] ?? '-'}`),
    `e-invoice format: ${b.einvoice_format ?? 'none'}`,
    `reminders: ${b.reminder_offsets.length ? `${b.reminder_offsets.join(', ')} days from the due date` : 'none'}`,
  ];
}

function listLines(list: BusinessView[]): string[] {
  if (!list.length) return ['No businesses'];
  return table(
    ['ID', 'NAME', 'CURRENCY', 'COUNTRY', 'PLAN'],
    list.map((b) => [String(b.id), b.name, b.currency, b.country ?? '-', b.plan]),
  );
}

/** Only the options given: an option left out keeps its value. */
function changesOf(opts: UpdateOptions): BusinessChanges {
  const changes: BusinessChanges = {};
  if (opts.name !== undefined) changes.name = opts.name;
  if (opts.currency !== undefined) changes.currency = opts.currency;
  if (opts.country !== undefined) changes.country = opts.country === false ? null : opts.country;
  if (opts.plan !== undefined) changes.plan = opts.plan;
  if (opts.embedOrigins !== undefined) {
    const origins = opts.embedOrigins.split(',').map((origin) => origin.trim()).filter(Boolean);
    changes.embed_origins = opts.embedOrigins.trim() === '*' ? null : origins;
  }
  if (opts.einvoiceFormat !== undefined) {
    const format = opts.einvoiceFormat.trim().toLowerCase();
    if (![...EINVOICE_FORMATS, 'none'].includes(format)) throw new UsageError(`--einvoice-format "${opts.einvoiceFormat}": must be one of ${EINVOICE_FORMATS.join(', ')} or none`);
    changes.einvoice_format = format as BusinessChanges['einvoice_format'];
  }
  if (opts.reminders !== undefined) changes.reminder_offsets = reminderOffsets(opts.reminders);
  for (const field of LEGAL_IDENTITY_FIELDS) {
    const value = opts[LEGAL_OPTIONS[field].key];
    if (typeof value === 'string') changes[field] = value;
  }
  return changes;
}

/** `--reminders -3,1,7` → [-3, 1, 7]; `none` → []. Checked before the database is opened: a usage error (exit 2) names the option. */
function reminderOffsets(typed: string): number[] {
  if (typed.trim().toLowerCase() === 'none') return [];
  const parts = typed.split(',').map((part) => part.trim());
  if (!parts.every((part) => /^[+-]?[0-9]{1,4}$/.test(part))) {
    throw new UsageError(`--reminders "${typed}": must be whole days relative to the due date, comma-separated (e.g. -3,1,7), or none`);
  }
  const offsets = parts.map(Number);
  validBody(reminderOffsetsChangeSchema, { reminder_offsets: offsets }, () => '--reminders');
  return offsets;
}

/**
 * The legal identity options are checked as option values, before the database is opened: a
 * malformed IBAN, BIC, tax ID, Peppol ID or e-mail is a usage error (exit 2) naming its option.
 */
function checkLegalIdentityOptions(changes: BusinessChanges): void {
  const given = Object.fromEntries(LEGAL_IDENTITY_FIELDS.filter((field) => changes[field] !== undefined).map((field) => [field, changes[field]]));
  validBody(legalIdentityChangesSchema, given, (field) => LEGAL_OPTIONS[field as LegalIdentityField]?.flag ?? `--${field}`);
}

export function businessCommand(): Command {
  const business = groupCommand('business');

  business
    .command('create')
    .description('Create a business')
    .option('--name <name>', 'business name')
    .option('--currency <code>', 'ISO 4217 currency, e.g. USD')
    .option('--country <cc>', 'ISO 3166-1 alpha-2 country, e.g. US')
    .option('--plan <plan>', 'plan name (default: free)')
    .option('--json', 'machine-readable output: { id, name, currency, country, plan }')
    .addHelpText(
      'after',
      examples('invoicing business create --name "Acme Ltd" --currency GBP --country GB', 'invoicing business create --name Shop --currency USD --plan pro --json'),
    )
    .action(async (raw: CreateOptions) => {
      const opts = await ensureOptions(raw, NEW_BUSINESS_QUESTIONS);
      const created = await withContext(({ services }) =>
        services.businesses.create(validateInput(newBusinessSchema, { name: opts.name!, currency: opts.currency!, country: opts.country, plan: opts.plan })),
      );
      output(opts.json, created, () => [
        `Created business ${created.id}: ${created.name} (${created.currency}${created.country ? `, ${created.country}` : ''}, plan ${created.plan})`,
      ]);
    });

  business
    .command('list')
    .description('List every business, oldest first')
    .option('--json', 'machine-readable output: an array of business records')
    .addHelpText('after', examples('invoicing business list', 'invoicing business list --json'))
    .action(async (opts: { json?: boolean }) => {
      const list = await withContext(({ services }) => services.businesses.list());
      output(opts.json, list, () => listLines(list));
    });

  business
    .command('show <id>')
    .description('Show one business')
    .option('--json', 'machine-readable output: the business profile, with its legal identity')
    .addHelpText('after', examples('invoicing business show 3', 'invoicing business show 3 --json'))
    .action(async (rawId: string, opts: { json?: boolean }) => {
      const id = positiveId(rawId, 'business id');
      const found = await withContext(({ services }) => services.businesses.get(id));
      output(opts.json, found, () => [...profileLines(found), '', `Its keys: invoicing keys list --business ${found.id}`]);
    });

  const update = business
    .command('update <id>')
    .description('Change a business and its legal identity (what invoices show of the seller): only the options given are changed')
    .option('--name <name>', 'new name')
    .option('--currency <code>', 'new ISO 4217 currency (existing invoices keep theirs)')
    .option('--country <cc>', 'new ISO 3166-1 alpha-2 country (\'\' removes it)')
    .option('--no-country', 'remove the country')
    .option('--plan <plan>', 'new plan name')
    .option('--embed-origins <origins>', 'comma-separated origins that may frame the embeddable signing page (embed_url), or * for any (the default)')
    .option(
      '--einvoice-format <format>',
      `the e-invoice invoice e-mails carry: ${EINVOICE_FORMATS.join('|')}|none (facturx replaces the PDF; an XML format goes beside it; none, the default: the PDF only)`,
    )
    .option(
      '--reminders <days>',
      'payment reminders: comma-separated days relative to the due date (negative: before it), e.g. -3,1,7; the client of an invoice awaiting payment is e-mailed on each (live mode only); none, the default: no reminders. A reminder whose date is already past when they are set is not sent',
    );
  for (const field of LEGAL_IDENTITY_FIELDS) {
    const option = LEGAL_OPTIONS[field];
    update.option(`${option.flag} ${option.value}`, `${option.help} ('' clears it)`);
  }
  update
    .option('--json', 'machine-readable output: the business profile, with its legal identity')
    .addHelpText(
      'after',
      examples(
        'invoicing business update 3 --name "Acme Group" --plan pro',
        'invoicing business update 3 --currency EUR --country DE',
        'invoicing business update 3 --legal-name "Acme GmbH" --address-line1 "Hauptstr. 1" --postal-code 10115 --city Berlin --tax-id DE123456789',
        'invoicing business update 3 --iban "DE89 3704 0044 0532 0130 00" --bic COBADEFFXXX --peppol-id 9930:DE123456789',
        'invoicing business update 3 --invoice-footer ""',
        'invoicing business update 3 --einvoice-format xrechnung-cii',
        'invoicing business update 3 --reminders -3,1,7',
        'invoicing business update 3 --reminders none',
        'invoicing business update 3 --embed-origins https://shop.example,https://www.shop.example',
        'invoicing business update 3 --no-country --json',
      ),
    )
    .action(async (rawId: string, opts: UpdateOptions) => {
      const id = positiveId(rawId, 'business id');
      const changes = changesOf(opts);
      if (Object.keys(changes).length === 0) {
        throw new UsageError('nothing to change: give --name, --currency, --country, --no-country, --plan, --embed-origins, --einvoice-format, --reminders or a legal identity option (see --help)');
      }
      checkLegalIdentityOptions(changes);
      const updated = await withContext(({ services }) => services.businesses.update(id, validateInput(businessChangesSchema, changes)));
      output(opts.json, updated, () => [`Updated business ${updated.id}`, ...profileLines(updated)]);
    });

  business.addCommand(gatewayCommand());
  return business;
}

/**
 * `--secrets-stdin`: the secret key and the webhook secret, one per line (CRLF and surrounding spaces
 * dropped). Exactly two lines, so a stray third one is not silently ignored.
 */
async function secretsFromStdin(raw: { secretKey?: string; webhookSecret?: string }): Promise<{ secretKey: string; webhookSecret: string }> {
  if (raw.secretKey !== undefined || raw.webhookSecret !== undefined) {
    throw new UsageError('--secrets-stdin cannot be combined with --secret-key or --webhook-secret');
  }
  const lines = (await readStandardInput())
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  if (lines.length !== 2) throw new UsageError(`--secrets-stdin expects two lines: the secret key, then the webhook secret (got ${lines.length})`);
  return { secretKey: lines[0], webhookSecret: lines[1] };
}

/** `business gateway set|show|remove`: the business's own payment gateway credentials, sealed at rest. */
function gatewayCommand(): Command {
  const gateway = new Command('gateway').description('The payment gateway that takes live payments on the payment page');

  gateway
    .command('set <business-id>')
    .description('Set (or replace) the gateway credentials; the secrets are sealed at rest and never shown again')
    .option('--provider <provider>', 'the gateway (stripe)', 'stripe')
    .option('--secret-key <key>', 'the business\'s live Stripe secret or restricted key (sk_live_… or rk_live_…); test keys are refused: test mode never calls a gateway')
    .option('--webhook-secret <secret>', 'the signing secret of the Stripe endpoint POST {BASE_URL}/gateway/stripe/<business-id>/webhook (whsec_…)')
    .option('--secrets-stdin', 'read the secret key and the webhook secret from standard input, one per line, instead of the options above (kept out of ps and shell history); on a terminal without any of them, both are asked, masked')
    .option('--json', 'machine-readable output: { business_id, provider, secret_key_last4, webhook_secret_last4, updated_at }')
    .addHelpText(
      'after',
      examples(
        'invoicing business gateway set 3 --provider stripe --secret-key sk_live_… --webhook-secret whsec_…',
        'printf \'%s\\n%s\\n\' "$STRIPE_SECRET_KEY" "$STRIPE_WEBHOOK_SECRET" | invoicing business gateway set 3 --secrets-stdin',
      ) +
        '\nIn Stripe, add a webhook endpoint {BASE_URL}/gateway/stripe/<business-id>/webhook for checkout.session.completed,\ncheckout.session.async_payment_succeeded, checkout.session.async_payment_failed and checkout.session.expired.',
    )
    .action(async (rawId: string, raw: { provider: string; secretKey?: string; webhookSecret?: string; secretsStdin?: boolean; json?: boolean }) => {
      const id = positiveId(rawId, 'business id');
      const opts = raw.secretsStdin ? { ...raw, ...(await secretsFromStdin(raw)) } : await ensureOptions(raw, [
        { key: 'secretKey', flag: '--secret-key', message: 'Stripe secret key (sk_live_…)', secret: true, check: fieldCheck(gatewayCredentialsSchema, 'secretKey') },
        { key: 'webhookSecret', flag: '--webhook-secret', message: 'Stripe webhook signing secret (whsec_…)', secret: true, check: fieldCheck(gatewayCredentialsSchema, 'webhookSecret') },
      ]);
      const saved = await withContext(async ({ services }) => {
        await services.businesses.get(id);
        const credentials = validateInput(gatewayCredentialsSchema, { provider: opts.provider, secretKey: String(opts.secretKey), webhookSecret: String(opts.webhookSecret) });
        return services.gateways.set(id, credentials);
      });
      output(opts.json, saved, () => [`Payment gateway set for business ${id}`, ...gatewayLines(saved)]);
    });

  gateway
    .command('show <business-id>')
    .description('Show the gateway: the provider and the last four characters of each secret')
    .option('--json', 'machine-readable output (null when none is set)')
    .addHelpText('after', examples('invoicing business gateway show 3'))
    .action(async (rawId: string, opts: { json?: boolean }) => {
      const id = positiveId(rawId, 'business id');
      const shown = await withContext(({ services }) => services.gateways.show(id));
      output(opts.json, shown, () => (shown ? gatewayLines(shown) : [`Business ${id} has no payment gateway: live invoices cannot be paid online`]));
    });

  gateway
    .command('remove <business-id>')
    .description('Remove the gateway: live invoices can no longer be paid online')
    .option('--json', 'machine-readable output: { removed }')
    .addHelpText('after', examples('invoicing business gateway remove 3'))
    .action(async (rawId: string, opts: { json?: boolean }) => {
      const id = positiveId(rawId, 'business id');
      const removed = await withContext(({ services }) => services.gateways.remove(id));
      output(opts.json, { removed }, () => [removed ? `Payment gateway removed from business ${id}` : `Business ${id} had no payment gateway`]);
    });

  return gateway;
}

function gatewayLines(view: GatewayView): string[] {
  return [`provider: ${view.provider}`, `secret key: …${view.secret_key_last4}`, `webhook secret: …${view.webhook_secret_last4}`];
}
