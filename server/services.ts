/** The domain services, built once per process and shared by the HTTP routes, the CLI and the jobs. */
import { BusinessService } from './businesses/service';
import { ClientService } from './clients/service';
import { Config } from './config';
import { ContractService } from './contracts/service';
import { Database } from './db/database';
import { createMailer } from './email/mailer';
import { ExpenseService } from './expenses/service';
import { InvoiceService } from './invoices/service';
import { KeyService } from './keys/service';
import { PaymentService } from './payments/service';
import { QuickChargeService } from './quick-charge/service';

export interface Services {
  businesses: BusinessService;
  keys: KeyService;
  clients: ClientService;
  expenses: ExpenseService;
  contracts: ContractService;
  payments: PaymentService;
  invoices: InvoiceService;
  quickCharge: QuickChargeService;
}

export type ServiceConfig = Pick<Config, 'webhookAllowPrivate' | 'keyCacheTtlMs' | 'baseUrl' | 'smtpUrl' | 'mailFrom' | 'mailOutboxDir'>;

export function createServices(db: Database, config: ServiceConfig): Services {
  const businesses = new BusinessService(db);
  const clients = new ClientService(db);
  const payments = new PaymentService(db);
  const invoices = new InvoiceService(db, businesses, payments, createMailer(config), { baseUrl: config.baseUrl });
  return {
    businesses,
    keys: new KeyService(db, { webhookAllowPrivate: config.webhookAllowPrivate, cacheTtlMs: config.keyCacheTtlMs }),
    clients,
    expenses: new ExpenseService(db, businesses),
    contracts: new ContractService(db, businesses, { baseUrl: config.baseUrl }),
    payments,
    invoices,
    quickCharge: new QuickChargeService(db, businesses, clients, invoices),
  };
}
