/** A client pays a live invoice in a real browser, through the Stripe double's checkout. */
import { aDraft } from '../support/app';
import { screenshot, screenshotOnPhone, useBrowser } from '../support/browser';
import { useStripeGateway } from '../support/stripe-double';

const ctx = useBrowser();
const gateway = useStripeGateway();
const { stripe } = gateway;

async function paymentUrlOf(invoiceId: number): Promise<string> {
  return (await gateway.live.api.post(`/invoices/${invoiceId}/initiate-payment`)).body.payment_url as string;
}

/** A client pays a new live invoice's checkout with a delayed method and is back on the page saying the payment is being confirmed. */
async function payWithDelayedMethod() {
  stripe.asyncPayments = true;
  const invoice = await aDraft(gateway.live);
  const url = await paymentUrlOf(invoice.id);
  const page = await ctx.browser.newPage();
  await page.goto(url);
  await page.getByRole('button', { name: /^Pay/ }).click();
  await page.getByRole('button', { name: 'Pay with test card' }).click();
  await page.getByText('Confirming your payment').waitFor();
  return { invoice, url, page };
}

describe('paying a live invoice in a browser', () => {
  test('when the client pays through the checkout, then the page comes back as the receipt', async () => {
    // Arrange
    const invoice = await aDraft(gateway.live);
    const url = await paymentUrlOf(invoice.id);
    const page = await ctx.browser.newPage();
    await page.goto(url);
    await screenshot(page, 'pay-live-unpaid');
    await screenshotOnPhone(ctx.browser, url, 'pay-live-unpaid');

    // Act
    await page.getByRole('button', { name: /^Pay/ }).click();
    await page.getByRole('button', { name: 'Pay with test card' }).click();
    await page.waitForURL((target) => target.toString().startsWith(url));
    await page.getByText('Paid — thank you').waitFor();
    await screenshot(page, 'pay-live-receipt');

    // Assert
    const read = (await gateway.live.api.get(`/invoices/${invoice.id}`)).body.invoice;
    expect(read).toMatchObject({ status: 'paid', payments: [expect.objectContaining({ gateway: 'stripe', method: 'card' })] });
    expect(await page.getByRole('cell', { name: 'Card' }).isVisible()).toBe(true);
    await page.close();
  });

  test('when the gateway confirms only later, then the return page waits, reloading itself, and shows Paid once confirmed', async () => {
    // Arrange: a delayed payment method, its event held back
    stripe.holdEvents = true;

    // Act
    const { invoice, page } = await payWithDelayedMethod();
    await screenshot(page, 'pay-live-confirming');
    await screenshotOnPhone(ctx.browser, page.url(), 'pay-live-confirming');
    const beforeConfirmation = (await gateway.live.api.get(`/invoices/${invoice.id}`)).body.invoice;
    const sessionId = new URL(page.url()).searchParams.get('checkout_session')!;
    await stripe.settleAsync(sessionId, 'succeeded');
    await page.getByText('Paid — thank you').waitFor({ timeout: 15_000 });

    // Assert
    expect(beforeConfirmation.amount_paid).toBe(0);
    expect((await gateway.live.api.get(`/invoices/${invoice.id}`)).body.invoice.status).toBe('paid');
    stripe.asyncPayments = false;
    stripe.holdEvents = false;
    await page.close();
  });

  test('when Stripe cannot charge the amount exactly (12.345 KWD), then the page shows no Pay button but says online payment is not available for this amount', async () => {
    // Arrange
    const invoice = await aDraft(gateway.live, { currency: 'KWD', items: [{ description: 'Consulting', quantity: 1, unit_price: 12.345 }] });
    const url = await paymentUrlOf(invoice.id);
    const page = await ctx.browser.newPage();

    // Act
    await page.goto(url);
    await screenshot(page, 'pay-live-amount-not-accepted');
    await screenshotOnPhone(ctx.browser, url, 'pay-live-amount-not-accepted');

    // Assert
    expect(await page.getByText('Online payment is not available for this amount.').isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: /^Pay/ }).count()).toBe(0);
    await page.close();
  });

  test('when a delayed payment is still pending, then the payment page itself offers no Pay button and says the payment is being confirmed', async () => {
    // Arrange: the client paid with a delayed method; Stripe's checkout.session.completed says unpaid
    const { url, page } = await payWithDelayedMethod();

    // Act: the client opens the link from the e-mail again
    await page.goto(url);
    await screenshot(page, 'pay-live-pending');
    await screenshotOnPhone(ctx.browser, url, 'pay-live-pending');

    // Assert: the page reloads itself every few seconds, so its text is awaited rather than sampled mid-reload
    await page.getByText('Confirming your payment with the payment provider').waitFor({ state: 'visible' });
    expect(await page.getByRole('button', { name: /^Pay/ }).count()).toBe(0);
    stripe.asyncPayments = false;
    await page.close();
  });
});
