import Joi from 'joi';
import { ClientInput, createClientBody } from '../clients/schema';
import { recordIdField } from '../invoices/schema';
import { currencyField, moneyField } from '../money/amount';
import { calendarDate } from '../validation';

export interface QuickChargeInput {
  amount: number;
  currency?: string;
  description?: string;
  due_date?: string;
  client_id?: number;
  client?: ClientInput;
}

/** Exactly one of client_id and client: the error names client_id, the field a caller most often forgot. */
export const quickChargeBody = Joi.object<QuickChargeInput>({
  amount: moneyField.greater(0).required(),
  currency: currencyField.description('Default: the business currency'),
  description: Joi.string().trim().min(1).max(1000).description('The line item\'s description'),
  due_date: calendarDate,
  client_id: recordIdField.description('An existing client (exactly one of client_id and client)'),
  client: createClientBody.description('Found by e-mail within the business and mode, or created'),
})
  .xor('client_id', 'client')
  .messages({ 'object.missing': 'give client_id or client', 'object.xor': 'give client_id or client, not both' })
  .error((errors) =>
    errors.map((error) => {
      if (error.code === 'object.missing' || error.code === 'object.xor') error.path = ['client_id'];
      return error;
    }),
  );
