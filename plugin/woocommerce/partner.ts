/**
 * The bridge's client of the partner API, over HTTP with its own key. POSTs carry an Idempotency-Key,
 * so every call is safe to retry: 429 waits for Retry-After, a 409 (the same key still running), 5xx
 * and network errors back off exponentially. What still fails is thrown for the caller to log; the
 * order stays un-invoiced and the poll tries it again.
 */
import type { Got, Method } from 'got';

export interface PartnerOptions {
  apiUrl: string;
  apiKey: string;
  /** Retries after the first attempt. */
  retries?: number;
  /** First backoff; doubled on each retry up to maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  timeoutMs?: number;
}

/** The API answered with an error that a retry will not fix (or retries ran out). */
export class PartnerError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: unknown,
  ) {
    super(`partner API ${status} ${code}: ${message}`);
  }
}

/** The API could not be reached at all. */
export class PartnerUnavailable extends Error {}

export interface Client {
  id: number;
  email: string;
  tax_id?: string | null;
}

export interface Payment {
  id: number;
  amount: number;
  amount_refunded: number;
  status: string;
  metadata: Record<string, string>;
}

export interface Invoice {
  id: number;
  number: string | null;
  status: string;
  client_id: number;
  total: number;
  amount_paid: number;
  currency: string;
  notes: string | null;
  /** Not in lists: in the single read and the answers about one invoice. */
  payments?: Payment[];
  items?: { id: number }[];
  tax_breakdown?: { tax_rate_id: number; percentage: number; inclusive: boolean }[];
  amount_credited?: number;
}

/** An invoice with the payment just recorded or refunded on it, as those calls answer. */
export interface PaymentResult {
  payment: Payment;
  invoice: Invoice;
}

/** A credit note just issued, and its invoice after it (its payments' refunds included). */
export interface CreditResult {
  credit_note: { id: number; number: string; total: number; refund_ids: number[] };
  invoice: Invoice;
}

interface ListOf<T> {
  data: T[];
  meta: { current_page: number; last_page: number };
}

export class PartnerApi {
  private client?: Promise<Got>;

  constructor(private readonly options: PartnerOptions) {}

  ping(): Promise<{ business: { id: number; name: string }; livemode: boolean; scopes: string[] }> {
    return this.call('GET', 'ping');
  }

  /** The client with this e-mail (ignoring case), or null. The search matches parts of e-mails too, so every page is read. */
  async findClientByEmail(email: string): Promise<Client | null> {
    const wanted = email.toLowerCase();
    return this.find<Client>('clients', { search: email }, (c) => c.email.toLowerCase() === wanted);
  }

  /** The first invoice of the client that `matches`, looking through all of them. */
  findInvoice(clientId: number, matches: (invoice: Invoice) => boolean): Promise<Invoice | null> {
    return this.find<Invoice>('invoices', { client_id: clientId }, matches);
  }

  /** The first invoice carrying all of this metadata that `matches`: an index lookup on the API's side. */
  findInvoiceByMetadata(metadata: Record<string, string>, matches: (invoice: Invoice) => boolean): Promise<Invoice | null> {
    return this.find<Invoice>('invoices', Object.fromEntries(Object.entries(metadata).map(([key, value]) => [`metadata[${key}]`, value])), matches);
  }

  /** Sets a client's fields (a B2B buyer's VAT number). */
  async updateClient(id: number, body: object): Promise<Client> {
    return (await this.call<{ client: Client }>('PATCH', `clients/${id}`, { json: body })).client;
  }

  async getInvoice(id: number): Promise<Invoice> {
    return (await this.call<{ invoice: Invoice }>('GET', `invoices/${id}`)).invoice;
  }

  /** One call: finds the client by e-mail or creates it, and creates the invoice issued (numbered, not e-mailed). */
  quickCharge(body: object, idempotencyKey: string): Promise<{ invoice: Invoice; client: Client }> {
    return this.call('POST', 'quick-charge', { json: body, idempotencyKey });
  }

  async sendInvoice(id: number, idempotencyKey: string): Promise<Invoice> {
    return (await this.call<{ invoice: Invoice }>('POST', `invoices/${id}/send`, { idempotencyKey })).invoice;
  }

  /** Issues a draft (numbered, `sent`) without e-mailing it. */
  async issueInvoice(id: number, idempotencyKey: string): Promise<void> {
    await this.call('POST', `invoices/${id}/initiate-payment`, { idempotencyKey });
  }

  /** A payment received elsewhere (the shop's checkout); the amount defaults to what is due. */
  recordPayment(invoiceId: number, body: object, idempotencyKey: string): Promise<PaymentResult> {
    return this.call('POST', `invoices/${invoiceId}/payments`, { json: body, idempotencyKey });
  }

  /**
   * The active tax rate of ours carrying this metadata, else a new one with `body` (the key makes a
   * concurrent creation of the same rate one rate).
   */
  async findOrCreateTaxRate(metadata: Record<string, string>, body: object, idempotencyKey: string): Promise<number> {
    const found = await this.call<ListOf<{ id: number }>>('GET', 'tax-rates', {
      searchParams: { active: 'true', per_page: 1, ...Object.fromEntries(Object.entries(metadata).map(([key, value]) => [`metadata[${key}]`, value])) },
    });
    if (found.data[0]) return found.data[0].id;
    return (await this.call<{ tax_rate: { id: number } }>('POST', 'tax-rates', { json: { ...body, metadata }, idempotencyKey })).tax_rate.id;
  }

  /** A credit note on the invoice (`refund: true` refunds what it does not take off the amount due from the invoice's payments). */
  creditInvoice(invoiceId: number, body: object, idempotencyKey: string): Promise<CreditResult> {
    return this.call('POST', `invoices/${invoiceId}/credit-notes`, { json: body, idempotencyKey });
  }

  async voidInvoice(id: number, idempotencyKey: string): Promise<Invoice> {
    return (await this.call<{ invoice: Invoice }>('POST', `invoices/${id}/void`, { idempotencyKey })).invoice;
  }

  private async find<T>(path: string, filter: Record<string, string | number>, matches: (item: T) => boolean): Promise<T | null> {
    for (let page = 1; ; page += 1) {
      const list = await this.call<ListOf<T>>('GET', path, { searchParams: { ...filter, per_page: 100, page } });
      const found = list.data.find(matches);
      if (found) return found;
      if (page >= list.meta.last_page) return null;
    }
  }

  private async call<T>(
    method: Method,
    path: string,
    request: { json?: object; idempotencyKey?: string; searchParams?: Record<string, string | number> } = {},
  ): Promise<T> {
    const got = await this.got();
    let res;
    try {
      res = await got(path, {
        method,
        json: request.json,
        searchParams: request.searchParams,
        headers: request.idempotencyKey ? { 'idempotency-key': request.idempotencyKey } : {},
      });
    } catch (err) {
      throw new PartnerUnavailable(`partner API unreachable: ${(err as Error).message}`);
    }
    const body = res.body as { error?: string; message?: string } | undefined;
    if (res.statusCode >= 200 && res.statusCode < 300) return body as T;
    throw new PartnerError(res.statusCode, body?.error ?? 'error', body?.message ?? res.statusMessage ?? '', body);
  }

  private got(): Promise<Got> {
    const { apiUrl, apiKey, retries = 5, baseDelayMs = 500, maxDelayMs = 30_000, timeoutMs = 15_000 } = this.options;
    // got is an ES module: loaded once, with import().
    this.client ??= import('got').then(({ got }) =>
      got.extend({
        prefixUrl: apiUrl.replace(/\/+$/, ''),
        headers: { authorization: `Bearer ${apiKey}`, 'user-agent': 'invoicing-woocommerce-bridge' },
        responseType: 'json',
        throwHttpErrors: false,
        timeout: { request: timeoutMs },
        retry: {
          limit: retries,
          // Every POST carries an Idempotency-Key, so it is as safe to repeat as a GET.
          methods: ['GET', 'POST', 'PUT'],
          statusCodes: [408, 409, 429, 500, 502, 503, 504],
          maxRetryAfter: 120_000,
          calculateDelay: ({ attemptCount, error, retryAfter, computedValue }) => {
            if (computedValue === 0) return 0;
            // Our server sends Retry-After on every answer (its rate-limit window); only a 429 means "wait that long".
            if (error.response?.statusCode === 429 && retryAfter) return retryAfter;
            return Math.min(baseDelayMs * 2 ** (attemptCount - 1), maxDelayMs) * (0.9 + Math.random() * 0.2);
          },
        },
      }),
    );
    return this.client;
  }
}
