/** The domain services, built once per process and shared by the HTTP routes, the CLI and the jobs. */
import { BusinessService } from './businesses/service';
import { ClientService } from './clients/service';
import { Config } from './config';
import { ContractService } from './contracts/service';
import { CreditNoteService } from './credit-notes/service';
import { BusinessClocks } from './db/clocks';
import { Database } from './db/database';
import { Clock, systemClock } from './clock';
import pino, { Logger } from 'pino';
import { createMailer } from './email/mailer';
import { EmailQueue } from './email/queue';
import { Outbox } from './events/outbox';
import { EventService } from './events/service';
import { ExpenseService } from './expenses/service';
import { InvoiceDocuments } from './invoices/documents';
import { InvoiceLinks } from './invoices/links';
import { PaymentPath } from './invoices/payment-path';
import { InvoiceService } from './invoices/service';
import { loadAppKey } from './keys/app-key';
import { SecretBox } from './keys/secret-box';
import { KeyService } from './keys/service';
import { GatewayClients } from './gateways/clients';
import { GatewayService } from './gateways/service';
import { AppService } from './oauth/apps';
import { GrantService } from './oauth/grants';
import { OwnerService } from './owners/service';
import { OAuthTokens } from './oauth/tokens';
import { OwnerSessions } from './oauth/sign-in';
import { Credentials } from './oauth/credentials';
import { FormTokens } from './pages/form-token';
import { FormGuard } from './pages/hygiene';
import { PaymentService } from './payments/service';
import { QuickChargeService } from './quick-charge/service';
import { RefundService } from './refunds/service';
import { TaxRateService } from './tax-rates/service';
import { WebhookService } from './webhooks/service';

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
  /** Credit notes, and the void of an invoice (which issues one). */
  creditNotes: CreditNoteService;
  /** Invoice and receipt PDFs. */
  documents: InvoiceDocuments;
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
>;

export function createServices(db: Database, config: ServiceConfig, clock: Clock = systemClock, logger: Logger = pino({ level: 'silent' })): Services {
  const appKey = loadAppKey(config);
  const keys = new KeyService(db, { webhookAllowPrivate: config.webhookAllowPrivate, cacheTtlMs: config.keyCacheTtlMs, secretBox: new SecretBox(appKey, 'webhook_secret') }, clock);
  const oauthTokens = new OAuthTokens(db, { cacheTtlMs: config.keyCacheTtlMs }, clock);
  const outbox = new Outbox(db, clock);
  const clocks = new BusinessClocks(db, { cacheTtlMs: config.keyCacheTtlMs }, clock);
  const businesses = new BusinessService(db);
  const clients = new ClientService(db);
  const taxRates = new TaxRateService(db, businesses);
  const links = new InvoiceLinks(config.baseUrl);
  const paymentPath = new PaymentPath(db, outbox, links, clocks);
  const documents = new InvoiceDocuments(db, links, { threads: config.pdfThreads });
  const emails = new EmailQueue(db, createMailer(config), logger, {
    clock,
    invoicePdf: (actor, invoiceId) => documents.pdf(actor, invoiceId, { wait: true }),
    leaseSeconds: config.webhookLeaseSeconds,
    firstAttemptWaitMs: config.emailFirstAttemptWaitMs,
    messageIdHost: new URL(config.baseUrl).hostname,
  });
  const invoices = new InvoiceService(db, businesses, emails, outbox, links, taxRates);
  const gatewayClients = new GatewayClients(db, new SecretBox(appKey, 'gateway_secret'), { stripeApiUrl: config.stripeApiUrl });
  const refunds = new RefundService(db, outbox, gatewayClients, logger, links, clock);
  const gateways = new GatewayService(db, paymentPath, refunds, gatewayClients, logger, links, clock);
  invoices.whenVoided((actor, invoiceId) => gateways.expireStaleCheckouts(actor, invoiceId));
  clients.whenTaxStatusChanges((trx, actor, client) => invoices.repriceDraftsOf(trx, actor, client));
  paymentPath.whenRecorded((actor, invoiceId) => gateways.expireStaleCheckouts(actor, invoiceId));
  const owners = new OwnerService(db, businesses, clock);
  return {
    clocks,
    emails,
    businesses,
    keys,
    clients,
    expenses: new ExpenseService(db, businesses),
    taxRates,
    contracts: new ContractService(db, businesses, outbox, clocks, { baseUrl: config.baseUrl }),
    payments: new PaymentService(db),
    paymentPath,
    refunds,
    invoices,
    creditNotes: new CreditNoteService(db, businesses, outbox, invoices, refunds, taxRates, links, documents, logger),
    documents,
    quickCharge: new QuickChargeService(db, businesses, clients, invoices),
    outbox,
    events: new EventService(db, outbox, clock),
    webhooks: new WebhookService(db, outbox, clock),
    pageForms: new FormGuard(new FormTokens(appKey, clock), config.baseUrl),
    owners,
    oauthApps: new AppService(db, new SecretBox(appKey, 'webhook_secret'), { webhookAllowPrivate: config.webhookAllowPrivate }, clock),
    oauthGrants: new GrantService(db, clock),
    oauthTokens,
    ownerSessions: new OwnerSessions(owners, config.baseUrl.startsWith('https:')),
    credentials: new Credentials(keys, oauthTokens),
    gateways,
  };
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
