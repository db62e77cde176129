import { Router } from 'express';
import Joi from 'joi';
import { Guard } from '../http/guard';
import { credentialOf, recordId, validBody, validQuery } from '../http/request';
import { body, query } from '../http/validate';
import {
  createInvoiceBody,
  InvoiceChanges,
  InvoiceInput,
  InvoiceListParams,
  listInvoicesQuery,
  simulatePaymentBody,
  updateInvoiceBody,
} from './schema';
import { PaymentService } from '../payments/service';
import { InvoiceService } from './service';

/** Actions take no body: any field sent is an unknown field (422). */
const noFields = Joi.object({});

export function invoiceRoutes(svc: InvoiceService, payments: PaymentService, guard: Guard): Router {
  const r = Router();
  r.get('/invoices', ...guard('invoices:read'), query(listInvoicesQuery), async (req, res) => {
    res.json(await svc.list(credentialOf(req), validQuery<InvoiceListParams>(req)));
  });
  r.get('/invoices/:id', ...guard('invoices:read'), async (req, res) => {
    res.json({ invoice: await svc.get(credentialOf(req), recordId(req, 'Invoice')) });
  });
  r.get('/invoices/:id/payment-status', ...guard('invoices:read'), async (req, res) => {
    res.json(await svc.paymentStatus(credentialOf(req), recordId(req, 'Invoice')));
  });
  r.post('/invoices', ...guard('invoices:write'), body(createInvoiceBody), async (req, res) => {
    res.status(201).json({ invoice: await svc.create(credentialOf(req), validBody<InvoiceInput>(req)) });
  });
  r.patch('/invoices/:id', ...guard('invoices:write'), body(updateInvoiceBody), async (req, res) => {
    res.json({ invoice: await svc.update(credentialOf(req), recordId(req, 'Invoice'), validBody<InvoiceChanges>(req)) });
  });
  r.delete('/invoices/:id', ...guard('invoices:write'), async (req, res) => {
    res.json(await svc.remove(credentialOf(req), recordId(req, 'Invoice')));
  });
  r.post('/invoices/:id/send', ...guard('invoices:write'), body(noFields), async (req, res) => {
    res.json(await svc.send(credentialOf(req), recordId(req, 'Invoice')));
  });
  r.post('/invoices/:id/void', ...guard('invoices:write'), body(noFields), async (req, res) => {
    res.json({ invoice: await svc.void(credentialOf(req), recordId(req, 'Invoice')) });
  });
  r.post('/invoices/:id/initiate-payment', ...guard('invoices:write', 'payments:write'), body(noFields), async (req, res) => {
    res.json(await svc.initiatePayment(credentialOf(req), recordId(req, 'Invoice')));
  });
  r.post('/invoices/:id/simulate-payment', ...guard('invoices:write', 'payments:write'), body(simulatePaymentBody), async (req, res) => {
    const { amount } = validBody<{ amount?: number }>(req);
    res.status(201).json(await payments.simulate(credentialOf(req), recordId(req, 'Invoice'), amount));
  });
  return r;
}
