import { routeUsing } from '../http/routes';
import { Deleted } from '../shapes/common';
import { createExpenseBody, ExpenseEnvelope, ExpenseList, listExpensesQuery, updateExpenseBody } from './schema';
import { ExpenseService } from './service';

const route = routeUsing<{ expenses: ExpenseService }>();

export const expenseRoutes = [
  route({
    method: 'get',
    path: '/expenses',
    operationId: 'listExpenses',
    summary: 'List expenses',
    tag: 'Expenses',
    scopes: ['expenses:read'],
    query: listExpensesQuery,
    response: { status: 200, description: 'A page of expenses', schema: ExpenseList },
    handle: ({ cred, query }, s) => s.expenses.list(cred, query),
  }),
  route({
    method: 'post',
    path: '/expenses',
    operationId: 'createExpense',
    summary: 'Create an expense',
    tag: 'Expenses',
    scopes: ['expenses:write'],
    body: createExpenseBody,
    response: { status: 201, description: 'The new expense', schema: ExpenseEnvelope },
    handle: async ({ cred, body }, s) => ({ expense: await s.expenses.create(cred, body) }),
  }),
  route({
    method: 'get',
    path: '/expenses/{id}',
    operationId: 'getExpense',
    summary: 'Read an expense',
    tag: 'Expenses',
    scopes: ['expenses:read'],
    record: 'Expense',
    response: { status: 200, description: 'The expense', schema: ExpenseEnvelope },
    handle: async ({ cred, id }, s) => ({ expense: await s.expenses.get(cred, id) }),
  }),
  route({
    method: 'patch',
    path: '/expenses/{id}',
    operationId: 'updateExpense',
    summary: 'Update an expense',
    tag: 'Expenses',
    scopes: ['expenses:write'],
    record: 'Expense',
    body: updateExpenseBody,
    response: { status: 200, description: 'The updated expense', schema: ExpenseEnvelope },
    handle: async ({ cred, id, body }, s) => ({ expense: await s.expenses.update(cred, id, body) }),
  }),
  route({
    method: 'delete',
    path: '/expenses/{id}',
    operationId: 'deleteExpense',
    summary: 'Delete an expense',
    tag: 'Expenses',
    scopes: ['expenses:write'],
    record: 'Expense',
    response: { status: 200, description: 'Deleted', schema: Deleted },
    handle: ({ cred, id }, s) => s.expenses.remove(cred, id),
  }),
];
