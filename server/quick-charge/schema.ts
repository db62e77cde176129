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

/** Exactly one of client_id and client, reported on client_id. */
export const quickChargeBody = Joi.object<QuickChargeInput>({
  amount: moneyField.greater(0).required(),
  currency: currencyField,
  description: Joi.string().trim().min(1).max(1000),
  due_date: calendarDate,
  client_id: recordIdField
    .when('client', { is: Joi.exist(), then: Joi.forbidden(), otherwise: Joi.required() })
    .messages({ 'any.required': 'give client_id or client', 'any.unknown': 'give client_id or client, not both' }),
  client: createClientBody,
});
