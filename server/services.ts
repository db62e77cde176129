/**
 * The domain services, built once per process and shared by the HTTP routes, the CLI and the jobs.
 * Each is built, and its module required, when it is first used: the server's routes use them all
 * as it starts, while a CLI command loads only the few it calls (`business list` needs neither the
 * PDF renderer nor the mailer, the job engine or the OAuth server).
 */
import path from 'node:path';
import type { Logger } from 'pino';
import type { BusinessService } from './businesses/service';
import type { ClientService } from './clients/service';
import type { Config } from './config';
import type { ContractService } from './contracts/service';
import type { CreditNoteService } from './credit-notes/service';
import type { EinvoiceService } from './einvoice/service';
import type { DocumentTask } from './einvoice/worker';
import type { BusinessClocks } from './db/clocks';
import type { Database } from './db/database';
import { Clock, systemClock } from './clock';
import type { EmailQueue } from './email/queue';
import type { Outbox } from './events/outbox';
import type { EventService } from './events/service';
import type { ExpenseService } from './expenses/service';
import type { InvoiceDocuments } from './invoices/documents';
import type { InvoiceLinks } from './invoices/links';
import type { PaymentPath } from './invoices/payment-path';
import type { InvoiceService } from './invoices/service';
import type { CollectionSteps, FollowUpWork } from './invoices/collection-steps';
import type { OverdueSweep } from './invoices/overdue';
import type { ReminderSweep } from './invoices/reminders';
import { loadAppKey } from './keys/app-key';
import type { KeyService } from './keys/service';
import type { GatewayClients } from './gateways/clients';
import type { GatewayService } from './gateways/service';
import type { AppService } from './oauth/apps';
import type { GrantService } from './oauth/grants';
import type { OwnerService } from './owners/service';
import type { OAuthTokens } from './oauth/tokens';
import type { OwnerSessions } from './oauth/sign-in';
import type { Credentials } from './oauth/credentials';
import type { FormGuard } from './pages/hygiene';
import type { PaymentService } from './payments/service';
import type { PdfPool } from './pdf/pool';
import type { QuickChargeService } from './quick-charge/service';
import type { RecurringInvoiceService } from './recurring-invoices/service';
import type { RecurringInvoiceSweep } from './recurring-invoices/sweep';
import type { RefundService } from './refunds/service';
import type { TaxRateService } from './tax-rates/service';
import type { TestClockService } from './test-clock/service';
import type { WebhookService } from './webhooks/service';
import type { WooCommerceService } from './woocommerce/service';

export interface Services {
  /** Each business's clock (a test mode's may be frozen): what dates the records written acting for it. */
  clocks: BusinessClocks;
  emails: EmailQueue;
  businesses: BusinessService;
  keys: KeyService;
  clients: ClientService;
  expenses: ExpenseService;
  /** Tax rates, and their terms for pricing invoice lines. */
  taxRates: TaxRateService;
  contracts: ContractService;
  /** The payments resource: list, read, metadata. */
  payments: PaymentService;
  /** The one payment path: every payment recorded against its invoice. */
  paymentPath: PaymentPath;
  refunds: RefundService;
  invoices: InvoiceService;
  /** The sweep that fires `invoice.overdue` once per invoice. */
  overdue: OverdueSweep;
  /** Test clocks: a business's test-mode time, moved forward with what falls due on the way. */
  testClocks: TestClockService;
  /** The sweep that sends each payment reminder once per invoice and offset. */
  reminders: ReminderSweep;
  /** Reminders and `invoice.overdue` of one business and mode, in time order: what a test clock's advance runs after issuance. */
  followUps: FollowUpWork;
  /** Credit notes, and the void of an invoice (which issues one). */
  creditNotes: CreditNoteService;
  /** The document threads: every PDF and e-invoice is made there, off the request thread. */
  documentThreads: PdfPool<DocumentTask>;
  /** Recurring invoices: the schedules. */
  recurringInvoices: RecurringInvoiceService;
  /** The sweep that issues each recurring invoice's dates, once per date (and a test clock's `runDue`). */
  recurringSweep: RecurringInvoiceSweep;
  /** Invoice and receipt PDFs. */
  documents: InvoiceDocuments;
  /** Invoices as EN 16931 e-invoices (UBL, CII). */
  einvoices: EinvoiceService;
  quickCharge: QuickChargeService;
  outbox: Outbox;
  /** The event log partners read back (`GET /events`). */
  events: EventService;
  webhooks: WebhookService;
  gateways: GatewayService;
  owners: OwnerService;
  oauthApps: AppService;
  oauthGrants: GrantService;
  oauthTokens: OAuthTokens;
  /** The owner's signed-in session on the OAuth authorize pages. */
  ownerSessions: OwnerSessions;
  /** Bearer tokens → credentials: keys and OAuth access tokens. */
  credentials: Credentials;
  /** CSRF protection of the hosted pages' forms. */
  pageForms: FormGuard;
  /** Connected WooCommerce stores: their connection, deliveries, polls and orders. */
  woocommerce: WooCommerceService;
}

export type ServiceConfig = Pick<
  Config,
  | 'webhookAllowPrivate'
  | 'keyCacheTtlMs'
  | 'baseUrl'
  | 'smtpUrl'
  | 'mailFrom'
  | 'mailOutboxDir'
  | 'appSecretKey'
  | 'databaseUrl'
  | 'webhookLeaseSeconds'
  | 'emailFirstAttemptWaitMs'
  | 'pdfThreads'
  | 'stripeApiUrl'
  | 'wooPollSeconds'
>;

/** The modules of the services, required when a service is first built (see above). */
/* eslint-disable @typescript-eslint/no-require-imports -- required when first used (see above) */
const modules = {
  businesses: () => require('./businesses/service') as typeof import('./businesses/service'),
  clients: () => require('./clients/service') as typeof import('./clients/service'),
  contracts: () => require('./contracts/service') as typeof import('./contracts/service'),
  creditNotes: () => require('./credit-notes/service') as typeof import('./credit-notes/service'),
  einvoices: () => require('./einvoice/service') as typeof import('./einvoice/service'),
  clocks: () => require('./db/clocks') as typeof import('./db/clocks'),
  mailer: () => require('./email/mailer') as typeof import('./email/mailer'),
  emails: () => require('./email/queue') as typeof import('./email/queue'),
  outbox: () => require('./events/outbox') as typeof import('./events/outbox'),
  events: () => require('./events/service') as typeof import('./events/service'),
  expenses: () => require('./expenses/service') as typeof import('./expenses/service'),
  documents: () => require('./invoices/documents') as typeof import('./invoices/documents'),
  pdfPool: () => require('./pdf/pool') as typeof import('./pdf/pool'),
  links: () => require('./invoices/links') as typeof import('./invoices/links'),
  paymentPath: () => require('./invoices/payment-path') as typeof import('./invoices/payment-path'),
  invoices: () => require('./invoices/service') as typeof import('./invoices/service'),
  overdue: () => require('./invoices/overdue') as typeof import('./invoices/overdue'),
  reminders: () => require('./invoices/reminders') as typeof import('./invoices/reminders'),
  collectionSteps: () => require('./invoices/collection-steps') as typeof import('./invoices/collection-steps'),
  secretBox: () => require('./keys/secret-box') as typeof import('./keys/secret-box'),
  keys: () => require('./keys/service') as typeof import('./keys/service'),
  gatewayClients: () => require('./gateways/clients') as typeof import('./gateways/clients'),
  gateways: () => require('./gateways/service') as typeof import('./gateways/service'),
  oauthApps: () => require('./oauth/apps') as typeof import('./oauth/apps'),
  oauthGrants: () => require('./oauth/grants') as typeof import('./oauth/grants'),
  owners: () => require('./owners/service') as typeof import('./owners/service'),
  oauthTokens: () => require('./oauth/tokens') as typeof import('./oauth/tokens'),
  ownerSessions: () => require('./oauth/sign-in') as typeof import('./oauth/sign-in'),
  credentials: () => require('./oauth/credentials') as typeof import('./oauth/credentials'),
  formTokens: () => require('./pages/form-token') as typeof import('./pages/form-token'),
  pageForms: () => require('./pages/hygiene') as typeof import('./pages/hygiene'),
  payments: () => require('./payments/service') as typeof import('./payments/service'),
  quickCharge: () => require('./quick-charge/service') as typeof import('./quick-charge/service'),
  recurringInvoices: () => require('./recurring-invoices/service') as typeof import('./recurring-invoices/service'),
  recurringSweep: () => require('./recurring-invoices/sweep') as typeof import('./recurring-invoices/sweep'),
  refunds: () => require('./refunds/service') as typeof import('./refunds/service'),
  taxRates: () => require('./tax-rates/service') as typeof import('./tax-rates/service'),
  testClocks: () => require('./test-clock/service') as typeof import('./test-clock/service'),
  webhooks: () => require('./webhooks/service') as typeof import('./webhooks/service'),
  woocommerce: () => require('./woocommerce/service') as typeof import('./woocommerce/service'),
  pino: () => require('pino') as typeof import('pino'),
};
/* eslint-enable @typescript-eslint/no-require-imports */

/** What the services share besides each other: the application key, the links and the gateways' clients. */
interface Shared {
  links: InvoiceLinks;
  /** Reminders and `invoice.overdue`, worked many to a transaction (the two sweeps and the advance share it). */
  collectionSteps: CollectionSteps;
  gatewayClients: GatewayClients;
  appKey: Buffer;
}

/** An object whose every property is built by its factory when first read, then kept. */
function builtWhenRead<T extends object>(factories: { [K in keyof T]: () => T[K] }): T {
  const built = {} as T;
  for (const name of Object.keys(factories) as (keyof T)[]) {
    let value: T[typeof name] | undefined;
    Object.defineProperty(built, name, { enumerable: true, get: () => (value ??= factories[name]()) });
  }
  return built;
}

export function createServices(db: Database, config: ServiceConfig, clock: Clock = systemClock, logger?: Logger): Services {
  const log = () => (logger ??= modules.pino().default({ level: 'silent' }));
  const shared: Shared = builtWhenRead<Shared>({
    appKey: () => loadAppKey(config),
    links: () => new (modules.links().InvoiceLinks)(config.baseUrl),
    collectionSteps: () => new (modules.collectionSteps().CollectionSteps)(db, services.outbox, services.emails, shared.links),
    gatewayClients: () =>
      new (modules.gatewayClients().GatewayClients)(db, new (modules.secretBox().SecretBox)(shared.appKey, 'gateway_secret'), { stripeApiUrl: config.stripeApiUrl }),
  });
  const webhookSecrets = () => new (modules.secretBox().SecretBox)(shared.appKey, 'webhook_secret');
  const services: Services = builtWhenRead<Services>({
    clocks: () => new (modules.clocks().BusinessClocks)(db, { cacheTtlMs: config.keyCacheTtlMs }, clock),
    keys: () => new (modules.keys().KeyService)(db, { webhookAllowPrivate: config.webhookAllowPrivate, cacheTtlMs: config.keyCacheTtlMs, secretBox: webhookSecrets() }, clock),
    oauthTokens: () => new (modules.oauthTokens().OAuthTokens)(db, { cacheTtlMs: config.keyCacheTtlMs }, clock),
    outbox: () => new (modules.outbox().Outbox)(db, clock),
    businesses: () => new (modules.businesses().BusinessService)(db, services.clocks),
    clients: () => {
      const clients = new (modules.clients().ClientService)(db);
      clients.whenTaxStatusChanges((trx, actor, client) => services.invoices.repriceDraftsOf(trx, actor, client));
      return clients;
    },
    taxRates: () => new (modules.taxRates().TaxRateService)(db, services.businesses),
    paymentPath: () => {
      const paymentPath = new (modules.paymentPath().PaymentPath)(db, services.outbox, shared.links, services.clocks);
      paymentPath.whenRecorded((actor, invoiceId) => services.gateways.expireStaleCheckouts(actor, invoiceId));
      return paymentPath;
    },
    documentThreads: () => new (modules.pdfPool().PdfPool)<DocumentTask>(path.join(__dirname, 'einvoice/worker'), config.pdfThreads),
    documents: () => new (modules.documents().InvoiceDocuments)(db, shared.links, services.documentThreads),
    emails: () =>
      new (modules.emails().EmailQueue)(db, modules.mailer().createMailer(config), log(), {
        clock,
        invoiceAttachments: (actor, invoiceId) => services.einvoices.emailAttachments(actor, invoiceId),
        leaseSeconds: config.webhookLeaseSeconds,
        firstAttemptWaitMs: config.emailFirstAttemptWaitMs,
        messageIdHost: new URL(config.baseUrl).hostname,
      }),
    invoices: () => {
      const invoices = new (modules.invoices().InvoiceService)(db, services.businesses, services.emails, services.outbox, shared.links, services.taxRates);
      invoices.whenVoided((actor, invoiceId) => services.gateways.expireStaleCheckouts(actor, invoiceId));
      invoices.whenSending((invoice, format, wasDraft) => services.einvoices.assertReadyToSend(invoice, format, wasDraft));
      return invoices;
    },
    overdue: () => new (modules.overdue().OverdueSweep)(db, shared.collectionSteps, log(), { clock }),
    reminders: () => new (modules.reminders().ReminderSweep)(db, shared.collectionSteps, log(), { clock }),
    followUps: () => new (modules.collectionSteps().FollowUpWork)(shared.collectionSteps, [services.reminders, services.overdue]),
    // Issuance makes invoices; the follow-ups (reminders, overdue) act on them at the moments after.
    testClocks: () => new (modules.testClocks().TestClockService)(db, services.clocks, { issuance: [services.recurringSweep], followUps: services.followUps }),
    refunds: () => new (modules.refunds().RefundService)(db, services.outbox, shared.gatewayClients, log(), shared.links, services.clocks, clock),
    gateways: () => new (modules.gateways().GatewayService)(db, services.paymentPath, services.refunds, shared.gatewayClients, log(), shared.links, services.clocks, clock),
    owners: () => new (modules.owners().OwnerService)(db, services.businesses, clock),
    expenses: () => new (modules.expenses().ExpenseService)(db, services.businesses),
    contracts: () => new (modules.contracts().ContractService)(db, services.businesses, services.outbox, services.clocks, { baseUrl: config.baseUrl }),
    payments: () => new (modules.payments().PaymentService)(db),
    creditNotes: () =>
      new (modules.creditNotes().CreditNoteService)(
        db,
        services.businesses,
        services.outbox,
        services.invoices,
        services.refunds,
        services.taxRates,
        shared.links,
        services.documents,
        log(),
      ),
    einvoices: () => new (modules.einvoices().EinvoiceService)(services.businesses, services.invoices, services.creditNotes, services.documents, services.documentThreads, log()),
    recurringInvoices: () =>
      new (modules.recurringInvoices().RecurringInvoiceService)(db, services.businesses, services.invoices, services.taxRates, services.clocks),
    recurringSweep: () => new (modules.recurringSweep().RecurringInvoiceSweep)(db, services.recurringInvoices, log(), { clock }),
    quickCharge: () => new (modules.quickCharge().QuickChargeService)(db, services.businesses, services.clients, services.invoices),
    events: () => new (modules.events().EventService)(db, services.outbox, clock),
    webhooks: () => new (modules.webhooks().WebhookService)(db, services.outbox, clock),
    pageForms: () => new (modules.pageForms().FormGuard)(new (modules.formTokens().FormTokens)(shared.appKey, clock), config.baseUrl),
    oauthApps: () => new (modules.oauthApps().AppService)(db, webhookSecrets(), { webhookAllowPrivate: config.webhookAllowPrivate }, clock),
    oauthGrants: () => new (modules.oauthGrants().GrantService)(db, clock),
    ownerSessions: () => new (modules.ownerSessions().OwnerSessions)(services.owners, config.baseUrl.startsWith('https:')),
    credentials: () => new (modules.credentials().Credentials)(services.keys, services.oauthTokens),
    woocommerce: () =>
      new (modules.woocommerce().WooCommerceService)(
        db,
        services.keys,
        services.businesses,
        new (modules.secretBox().SecretBox)(shared.appKey, 'woocommerce_secret'),
        log(),
        { baseUrl: config.baseUrl, pollEveryMs: config.wooPollSeconds * 1000, allowPrivate: config.webhookAllowPrivate },
        clock,
      ),
  });
  return services;
}

/**
 * The embedded database migrates itself so a first run needs nothing else; a MySQL server with
 * pending migrations is left alone and refused, since its schema is the operator's to change.
 */
export async function prepareSchema(db: Database, config: Pick<Config, 'appSecretKey' | 'databaseUrl'>): Promise<void> {
  if (db.dialect === 'sqlite') return db.migrate({ appKey: () => loadAppKey(config) });
  const pending = await db.pendingMigrations();
  if (pending.length) throw new Error(`The database has ${pending.length} pending migration(s): run \`invoicing migrate\` first`);
}
