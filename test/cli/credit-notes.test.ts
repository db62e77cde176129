/** `invoicing credit-notes create|list`: credit notes from the command line, as the real binary. */
import { aDraft } from '../support/app';
import { useCliApp } from '../support/cli';

const ctx = useCliApp();

const business = () => String(ctx.t.businessId);

async function aSentInvoice(): Promise<any> {
  const draft = await aDraft(ctx.t);
  await ctx.t.api.post(`/invoices/${draft.id}/initiate-payment`);
  return (await ctx.t.api.get(`/invoices/${draft.id}`)).body.invoice;
}

describe('invoicing credit-notes create', () => {
  test('when given no lines, then it credits all that is left of the invoice, which is then void, and says so', async () => {
    // Arrange: 150.00, of which Hosting (30.00) was credited already.
    const invoice = await aSentInvoice();
    await ctx.t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ invoice_item_id: invoice.items[1].id }] });

    // Act
    const res = await ctx.cli('credit-notes', 'create', '--business', business(), '--mode', 'test', '--invoice', String(invoice.id), '--reason', 'order_change', '--memo', 'Order cancelled');

    // Assert
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(new RegExp(`^Created test credit note CN-\\d{6} \\(id \\d+\\) on invoice ${invoice.number}: 120\\.00 USD\\nTaken off the amount due: 120\\.00 USD\\nInvoice ${invoice.number} is void; amount due 0\\.00 USD\\n$`));
    expect((await ctx.t.api.get(`/invoices/${invoice.id}`)).body.invoice).toMatchObject({ status: 'void', amount_credited: 150 });
  });

  test('when given a line and a quantity, with --refund and --json, then it prints the note and the invoice as the API answers', async () => {
    const invoice = await aSentInvoice();
    await ctx.t.api.post(`/invoices/${invoice.id}/payments`, { method: 'cash' });

    const res = await ctx.cli('credit-notes', 'create', '--business', business(), '--mode', 'test', '--invoice', String(invoice.id), '--line', `${invoice.items[0].id}:1`, '--refund', '--json');

    expect(res.code).toBe(0);
    const printed = JSON.parse(res.stdout);
    expect(printed.credit_note).toMatchObject({ total: 50, amount_applied: 0, amount_refunded: 50, refund_ids: [expect.any(Number)] });
    expect(printed.invoice).toMatchObject({ status: 'paid', amount_paid: 100, amount_credited: 50 });
    expect((await ctx.t.api.get(`/credit-notes/${printed.credit_note.id}`)).body.credit_note).toEqual(printed.credit_note);
  });

  test.each([
    ['--amount without --description', ['--amount', '5'], 'give --amount and --description together'],
    ['a malformed --line', ['--line', 'first'], '--line must be an invoice line id'],
    ['an unknown reason', ['--line', '1', '--reason', 'whim'], '--reason "whim": must be one of'],
  ])('when given %s, then it exits 2 naming the option', async (_case, args, message) => {
    const invoice = await aSentInvoice();

    const res = await ctx.cli('credit-notes', 'create', '--business', business(), '--mode', 'test', '--invoice', String(invoice.id), ...args);

    expect(res.code).toBe(2);
    expect(res.stderr).toContain(message);
    expect((await ctx.t.api.get(`/credit-notes?invoice_id=${invoice.id}`)).body.data).toEqual([]);
  });
});

describe('invoicing credit-notes list', () => {
  test('when the business has credit notes, then it lists them with what each applied, refunded or left out of band', async () => {
    const invoice = await aSentInvoice();
    await ctx.t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ description: 'Goodwill', quantity: 1, unit_price: 12.5 }], reason: 'other' });

    const res = await ctx.cli('credit-notes', 'list', '--business', business(), '--invoice', String(invoice.id));

    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/ID\s+MODE\s+NUMBER\s+INVOICE\s+TOTAL\s+APPLIED\s+REFUNDED\s+OUT OF BAND\s+REASON\s+CREATED/);
    expect(res.stdout).toMatch(new RegExp(`test\\s+CN-\\d{6}\\s+${invoice.id}\\s+12\\.50 USD\\s+12\\.50 USD\\s+0\\.00 USD\\s+0\\.00 USD\\s+other`));
  });
});
