/** A business's gateway client, built from its sealed credentials: the one place that opens them. */
import { Database } from '../db/database';
import { NotFound } from '../errors';
import { SecretBox } from '../keys/secret-box';
import { PaymentGateway } from './gateway';
import { GatewayCredentials } from './model';
import { StripeGateway } from './stripe';

export class GatewayClients {
  constructor(
    private readonly db: Database,
    readonly secrets: SecretBox,
    private readonly options: { stripeApiUrl?: string },
  ) {}

  /** Throws NotFound when the business has no gateway. */
  async of(businessId: number): Promise<PaymentGateway> {
    const row = await GatewayCredentials.query(this.db.current).findOne({ business_id: businessId });
    if (!row) throw new NotFound('Payment gateway');
    const credentials = { secretKey: this.secrets.open(row.secret_key_sealed), webhookSecret: this.secrets.open(row.webhook_secret_sealed) };
    return new StripeGateway(credentials, this.options.stripeApiUrl);
  }
}
