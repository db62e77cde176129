/** Where an invoice's client pays it: the hosted payment page, under the server's configured base URL. */
export class InvoiceLinks {
  private readonly baseUrl: string;

  constructor(baseUrl: string) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
  }

  /** The payment page of the invoice whose unguessable token this is. */
  paymentUrl(paymentToken: string): string {
    return `${this.baseUrl}/pay/${paymentToken}`;
  }
}
