/** Every migration in order. Listed by hand so compiled and ts-jest runs apply the same files. */
import { Knex } from 'knex';
import * as createBusinesses from './20261121120000_create_businesses';
import * as createApiKeys from './20261121120100_create_api_keys';
import * as createClients from './20261121120200_create_clients';
import * as createIdempotencyKeys from './20261121120300_create_idempotency_keys';
import * as addInvoiceCounters from './20261121130000_add_invoice_counters_to_businesses';
import * as createInvoices from './20261121130100_create_invoices';
import * as createInvoiceItems from './20261121130200_create_invoice_items';
import * as createPayments from './20261121130300_create_payments';
import * as createEvents from './20261121130400_create_events';
import * as createExpenses from './20261121130500_create_expenses';
import * as createContracts from './20261121130600_create_contracts';
import * as createWebhookDeliveries from './20261122090000_create_webhook_deliveries';
import * as addKeyExpiry from './20261122100000_add_expires_at_to_api_keys';
import * as widenEmailNormalized from './20261123090000_widen_clients_email_normalized';
import * as addLastAttemptNumber from './20261123090100_add_last_attempt_number_to_webhook_deliveries';
import * as createEmailMessages from './20261124090000_create_email_messages';
import * as addIdempotencyOwner from './20261124120000_add_owner_to_idempotency_keys';
import * as createContractSignatures from './20261124130000_create_contract_signatures';
import * as createPaymentGateways from './20261124140000_create_payment_gateways';
import * as createOAuth from './20261124150000_create_oauth';
import * as addAppToDeliveries from './20261124160000_add_app_to_webhook_deliveries';
import * as uniqueGatewayReference from './20261124170000_payments_unique_gateway_reference';
import * as createMetadata from './20261124180000_create_metadata';
import * as createRefunds from './20261124190000_create_refunds';
import * as addRefundRequestKey from './20261124200000_add_request_key_to_refunds';
import * as addCheckoutExpiry from './20261125100000_add_expires_at_to_checkout_sessions';
import * as addRefundReconciliation from './20261125110000_add_reconciliation_to_refunds';
import * as addOAuthTokenScopes from './20261125130000_add_scopes_to_oauth_tokens';
import * as createOwnerSessions from './20261125130100_create_owner_sessions';
import * as bindSealedSecrets from './20261125140000_bind_sealed_secrets_to_rows';
import * as addCheckoutLastRead from './20261125150000_add_last_read_at_to_checkout_sessions';
import * as createBusinessClocks from './20261125170000_create_business_clocks';
import * as addLegalIdentity from './20261129100000_add_legal_identity';
import * as createTaxRates from './20261129100100_create_tax_rates';
import * as addTaxesToInvoices from './20261129100200_add_taxes_and_parties_to_invoices';
import * as indexRefundsById from './20261129120000_index_refunds_by_id';
import * as createCreditNotes from './20261130100000_create_credit_notes';
import * as createWooStores from './20261201100000_create_woocommerce_stores';
import * as addEinvoiceFormat from './20261202100000_add_einvoice_format_to_businesses';
import * as addImportedDocumentsToExpenses from './20261202110000_add_imported_documents_to_expenses';
import * as addOverdueNotifiedAt from './20261203100000_add_overdue_notified_at_to_invoices';
import * as createRecurringInvoices from './20261204100000_create_recurring_invoices';
import * as addReminders from './20261204110000_add_reminders';

export interface NamedMigration extends Knex.Migration {
  name: string;
}

export const migrations: NamedMigration[] = [
  { name: '20261121120000_create_businesses', ...createBusinesses },
  { name: '20261121120100_create_api_keys', ...createApiKeys },
  { name: '20261121120200_create_clients', ...createClients },
  { name: '20261121120300_create_idempotency_keys', ...createIdempotencyKeys },
  { name: '20261121130000_add_invoice_counters_to_businesses', ...addInvoiceCounters },
  { name: '20261121130100_create_invoices', ...createInvoices },
  { name: '20261121130200_create_invoice_items', ...createInvoiceItems },
  { name: '20261121130300_create_payments', ...createPayments },
  { name: '20261121130400_create_events', ...createEvents },
  { name: '20261121130500_create_expenses', ...createExpenses },
  { name: '20261121130600_create_contracts', ...createContracts },
  { name: '20261122090000_create_webhook_deliveries', ...createWebhookDeliveries },
  { name: '20261122100000_add_expires_at_to_api_keys', ...addKeyExpiry },
  { name: '20261123090000_widen_clients_email_normalized', ...widenEmailNormalized },
  { name: '20261123090100_add_last_attempt_number_to_webhook_deliveries', ...addLastAttemptNumber },
  { name: '20261124090000_create_email_messages', ...createEmailMessages },
  { name: '20261124120000_add_owner_to_idempotency_keys', ...addIdempotencyOwner },
  { name: '20261124130000_create_contract_signatures', ...createContractSignatures },
  { name: '20261124140000_create_payment_gateways', ...createPaymentGateways },
  { name: '20261124150000_create_oauth', ...createOAuth },
  { name: '20261124160000_add_app_to_webhook_deliveries', ...addAppToDeliveries },
  { name: '20261124170000_payments_unique_gateway_reference', ...uniqueGatewayReference },
  { name: '20261124180000_create_metadata', ...createMetadata },
  { name: '20261124190000_create_refunds', ...createRefunds },
  { name: '20261124200000_add_request_key_to_refunds', ...addRefundRequestKey },
  { name: '20261125100000_add_expires_at_to_checkout_sessions', ...addCheckoutExpiry },
  { name: '20261125110000_add_reconciliation_to_refunds', ...addRefundReconciliation },
  { name: '20261125130000_add_scopes_to_oauth_tokens', ...addOAuthTokenScopes },
  { name: '20261125130100_create_owner_sessions', ...createOwnerSessions },
  { name: '20261125140000_bind_sealed_secrets_to_rows', ...bindSealedSecrets },
  { name: '20261125150000_add_last_read_at_to_checkout_sessions', ...addCheckoutLastRead },
  { name: '20261125170000_create_business_clocks', ...createBusinessClocks },
  { name: '20261129100000_add_legal_identity', ...addLegalIdentity },
  { name: '20261129100100_create_tax_rates', ...createTaxRates },
  { name: '20261129100200_add_taxes_and_parties_to_invoices', ...addTaxesToInvoices },
  { name: '20261129120000_index_refunds_by_id', ...indexRefundsById },
  { name: '20261130100000_create_credit_notes', ...createCreditNotes },
  { name: '20261201100000_create_woocommerce_stores', ...createWooStores },
  { name: '20261202100000_add_einvoice_format_to_businesses', ...addEinvoiceFormat },
  { name: '20261202110000_add_imported_documents_to_expenses', ...addImportedDocumentsToExpenses },
  { name: '20261203100000_add_overdue_notified_at_to_invoices', ...addOverdueNotifiedAt },
  { name: '20261204100000_create_recurring_invoices', ...createRecurringInvoices },
  { name: '20261204110000_add_reminders', ...addReminders },
];
