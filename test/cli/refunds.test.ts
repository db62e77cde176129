/** `invoicing refunds list`: a business's refunds from the command line, as the real binary. */
import { aDraft } from '../support/app';
import { useCliApp } from '../support/cli';

const ctx = useCliApp();

/** A test-mode invoice paid by a payment received elsewhere, refunded `amount` (major units). */
async function aRefund(amount: number): Promise<{ payment: any; refund: any }> {
  const draft = await aDraft(ctx.t);
  await ctx.t.api.post(`/invoices/${draft.id}/initiate-payment`);
  const payment = (await ctx.t.api.post(`/invoices/${draft.id}/payments`, { method: 'cash' })).body.payment;
  const refund = (await ctx.t.api.post(`/payments/${payment.id}/refund`, { amount, reason: 'Returned goods' })).body.refund;
  return { payment, refund };
}

describe('invoicing refunds list', () => {
  test('when a business has refunds, then --json lists them as GET /refunds/{id} shows them, and --payment narrows the list', async () => {
    // Arrange
    const first = await aRefund(12.5);
    const second = await aRefund(3);

    // Act
    const all = await ctx.cli('refunds', 'list', '--business', String(ctx.t.businessId), '--json');
    const one = await ctx.cli('refunds', 'list', '--business', String(ctx.t.businessId), '--payment', String(second.payment.id), '--json');

    // Assert
    expect(all.code).toBe(0);
    expect(JSON.parse(all.stdout)).toEqual({ data: [{ ...first.refund, failure_reason: null }, { ...second.refund, failure_reason: null }], more: false });
    expect(JSON.parse(one.stdout).data.map((r: any) => r.id)).toEqual([second.refund.id]);
  });

  test('when listed for people, then each refund is a row with its mode, amount, status and reason', async () => {
    const { refund } = await aRefund(7);

    const res = await ctx.cli('refunds', 'list', '--business', String(ctx.t.businessId), '--mode', 'test', '--status', 'succeeded');

    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/ID\s+MODE\s+PAYMENT\s+INVOICE\s+AMOUNT\s+STATUS/);
    expect(res.stdout).toMatch(new RegExp(`^${refund.id}\\s+test\\s+\\d+\\s+\\d+\\s+7\\.00 USD\\s+succeeded\\s+-\\s+.*Returned goods$`, 'm'));
  });

  test.each([
    ['an unknown status', ['--status', 'refunded'], 2, '--status must be one of pending, succeeded, failed'],
    ['an unknown mode', ['--mode', 'sandbox'], 2, '--mode must be test or live'],
  ])('when given %s, then it is a usage error', async (_case, args, code, message) => {
    const res = await ctx.cli('refunds', 'list', '--business', String(ctx.t.businessId), ...args);

    expect(res.code).toBe(code);
    expect(res.stderr).toContain(message);
  });

  test('when the business does not exist, then it says so and exits non-zero', async () => {
    const res = await ctx.cli('refunds', 'list', '--business', '999999');

    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/Business 999999 not found/);
  });
});
