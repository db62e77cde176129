/** A business's gateway client, built from its sealed credentials: the one place that opens them. */
import { Database } from '../db/database';
import { GatewayError, NotFound } from '../errors';
import { SealedPlace, SecretBox, SecretBoxError } from '../keys/secret-box';
import { PaymentGateway } from './gateway';
import { GatewayCredentials, GatewayProvider } from './model';
import { StripeGateway } from './stripe';

/** Which amounts each provider can charge exactly: known from the provider alone, no secret opened. */
const PROVIDER_ACCEPTS: Record<GatewayProvider, (amount: number, currency: string) => boolean> = { stripe: (amount, currency) => StripeGateway.accepts(amount, currency) };

/** Whether `provider` can move exactly `amount` minor units of `currency` (charge or refund). */
export function providerAccepts(provider: GatewayProvider, amount: number, currency: string): boolean {
  return PROVIDER_ACCEPTS[provider](amount, currency);
}

/** The smallest amount (minor units) `provider` can move in `currency`, for a message; null when none up to 1000. */
export function smallestAccepted(provider: GatewayProvider, currency: string): number | null {
  for (let amount = 1; amount <= 1000; amount += 1) if (providerAccepts(provider, amount, currency)) return amount;
  return null;
}

/** Where a gateway secret is sealed: its column of its business's row, and nowhere else. */
function placeOf(row: Pick<GatewayCredentials, 'id' | 'business_id'>, column: 'secret_key_sealed' | 'webhook_secret_sealed'): SealedPlace {
  return { table: 'payment_gateways', column, id: row.id, businessId: row.business_id };
}

export class GatewayClients {
  constructor(
    private readonly db: Database,
    private readonly secrets: SecretBox,
    private readonly options: { stripeApiUrl?: string },
  ) {}

  /**
   * Throws NotFound when the business has no gateway, and GatewayError when its credentials do not
   * open (altered, copied from another row, or sealed under another application key): set them again.
   */
  async of(businessId: number): Promise<PaymentGateway> {
    const row = await GatewayCredentials.query(this.db.current).findOne({ business_id: businessId });
    if (!row) throw new NotFound('Payment gateway');
    try {
      const credentials = {
        secretKey: this.secrets.open(row.secret_key_sealed, placeOf(row, 'secret_key_sealed')),
        webhookSecret: this.secrets.open(row.webhook_secret_sealed, placeOf(row, 'webhook_secret_sealed')),
      };
      return new StripeGateway(credentials, this.options.stripeApiUrl);
    } catch (err) {
      if (!(err instanceof SecretBoxError)) throw err;
      throw new GatewayError('The stored payment gateway credentials of this business cannot be opened: set them again (invoicing business gateway set)');
    }
  }

  /** Whether the business's gateway can charge exactly this amount (minor units); null when it has none. */
  async accepts(businessId: number, amount: number, currency: string): Promise<boolean | null> {
    const row = await GatewayCredentials.query(this.db.current).findOne({ business_id: businessId });
    return row ? providerAccepts(row.provider, amount, currency) : null;
  }

  /** Both secrets sealed for their columns of the gateway row `row` (which must already have its id). */
  seal(row: Pick<GatewayCredentials, 'id' | 'business_id'>, credentials: { secretKey: string; webhookSecret: string }): Pick<GatewayCredentials, 'secret_key_sealed' | 'webhook_secret_sealed'> {
    return {
      secret_key_sealed: this.secrets.seal(credentials.secretKey, placeOf(row, 'secret_key_sealed')),
      webhook_secret_sealed: this.secrets.seal(credentials.webhookSecret, placeOf(row, 'webhook_secret_sealed')),
    };
  }
}
