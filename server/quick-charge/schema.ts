/** Quick-charge in and out: the request (joi) and the response shape. */
import { Static, Type } from '@sinclair/typebox';
import Joi from 'joi';
import { ClientInput, ClientShape, createClientBody } from '../clients/schema';
import { InvoiceDetailShape, InvoiceTaxInput, invoiceTaxFields, ItemInput, itemsField, recordIdField, taxRateIdsField } from '../invoices/schema';
import { MetadataChanges, metadataField } from '../metadata/schema';
import { currencyField, moneyField } from '../money/amount';
import { closed } from '../shapes/common';
import { component, described } from '../shapes/component';
import { calendarDate, optionalText } from '../validation';

export interface QuickChargeInput extends InvoiceTaxInput {
  amount?: number;
  description?: string;
  /** The one line's tax rates, with amount. */
  tax_rate_ids?: number[];
  items?: ItemInput[];
  currency?: string;
  issue_date?: string;
  due_date?: string;
  notes?: string | null;
  metadata?: MetadataChanges;
  client_id?: number;
  client?: ClientInput;
}

/** Which field an "exactly one of" error names: the one a caller most often forgot. */
const NAMED_FIELD: Record<string, string> = { client_id: 'client_id', amount: 'amount' };

/**
 * Exactly one of client_id and client, and exactly one of amount (one line, with its description)
 * and items (the lines of an order, e.g. the WooCommerce bridge's).
 */
export const quickChargeBody = Joi.object<QuickChargeInput>({
  amount: moneyField.greater(0).description('One line of this amount (exactly one of amount and items)'),
  description: Joi.string().trim().min(1).max(1000).description('The line\'s description, with amount; default: Payment'),
  tax_rate_ids: taxRateIdsField.description("The one line's tax rates, with amount (each item has its own)"),
  items: itemsField.description('The invoice lines, as on POST /invoices (exactly one of amount and items)'),
  ...invoiceTaxFields,
  currency: currencyField.description('Default: the business currency'),
  issue_date: calendarDate.description('Default: today (UTC)'),
  due_date: calendarDate,
  notes: optionalText(5000).description('Shown to the client on the invoice and its payment page'),
  metadata: metadataField.description('The invoice\'s metadata'),
  client_id: recordIdField.description('An existing client (exactly one of client_id and client)'),
  client: createClientBody.description('Found by e-mail within the business and mode, or created (with its metadata; a client found is not changed)'),
})
  .xor('client_id', 'client')
  .xor('amount', 'items')
  .without('items', ['description', 'tax_rate_ids'])
  .error((errors) =>
    errors.map((error) => {
      if (error.code === 'object.missing' || error.code === 'object.xor') {
        const peers = (error.local as { peers: string[] }).peers;
        const field = peers.map((peer) => NAMED_FIELD[peer]).find(Boolean) ?? peers[0];
        error.path = [field];
        error.message = `give ${peers.join(' or ')}${error.code === 'object.xor' ? ', not both' : ''}`;
      }
      if (error.code === 'object.without') {
        const field = (error.local as { peer: string }).peer;
        error.path = [field];
        error.message = `${field} goes with amount; each item has its own`;
      }
      return error;
    }),
  );

export const QuickChargeResultShape = component(
  'QuickChargeResult',
  closed({
    invoice: described(InvoiceDetailShape, 'Issued (status sent) with one line item'),
    client: ClientShape,
    payment_url: Type.String({ format: 'uri' }),
  }),
);
export type QuickChargeResult = Static<typeof QuickChargeResultShape>;
