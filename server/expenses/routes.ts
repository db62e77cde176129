import { Router } from 'express';
import { Guard } from '../http/guard';
import { credentialOf, recordId, validBody, validQuery } from '../http/request';
import { body, query } from '../http/validate';
import { createExpenseBody, ExpenseInput, ExpenseListParams, listExpensesQuery, updateExpenseBody } from './schema';
import { ExpenseService } from './service';

export function expenseRoutes(svc: ExpenseService, guard: Guard): Router {
  const r = Router();
  r.get('/expenses', ...guard('expenses:read'), query(listExpensesQuery), async (req, res) => {
    res.json(await svc.list(credentialOf(req), validQuery<ExpenseListParams>(req)));
  });
  r.get('/expenses/:id', ...guard('expenses:read'), async (req, res) => {
    res.json({ expense: await svc.get(credentialOf(req), recordId(req, 'Expense')) });
  });
  r.post('/expenses', ...guard('expenses:write'), body(createExpenseBody), async (req, res) => {
    res.status(201).json({ expense: await svc.create(credentialOf(req), validBody<ExpenseInput>(req)) });
  });
  r.patch('/expenses/:id', ...guard('expenses:write'), body(updateExpenseBody), async (req, res) => {
    res.json({ expense: await svc.update(credentialOf(req), recordId(req, 'Expense'), validBody<Partial<ExpenseInput>>(req)) });
  });
  r.delete('/expenses/:id', ...guard('expenses:write'), async (req, res) => {
    res.json(await svc.remove(credentialOf(req), recordId(req, 'Expense')));
  });
  return r;
}
