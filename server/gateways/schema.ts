/** Gateway credentials, from the CLI (`business gateway set`): validated before the service sees them. */
import Joi from 'joi';
import { GatewayCredentialsInput } from './gateway';
import { GatewayProvider, GATEWAY_PROVIDERS } from './model';

export type NewGatewayCredentials = GatewayCredentialsInput & { provider: GatewayProvider };

export const gatewayCredentialsSchema = Joi.object<NewGatewayCredentials>({
  provider: Joi.string()
    .valid(...GATEWAY_PROVIDERS)
    .required(),
  // Test mode never calls a gateway (spec): a test key would only let test cards pay live invoices.
  secretKey: Joi.string()
    .pattern(/^(sk|rk)_(test|live)_[A-Za-z0-9]{8,}$/)
    .pattern(/^(sk|rk)_live_/, 'live')
    .required()
    .messages({
      'string.pattern.base': 'the secret key must be a Stripe secret key (sk_live_… or rk_live_…)',
      'string.pattern.name': 'the secret key must be a live key (sk_live_… or rk_live_…): test mode never calls a gateway, so test keys are refused',
    }),
  webhookSecret: Joi.string()
    .pattern(/^whsec_[A-Za-z0-9+/=]{8,}$/)
    .required()
    .messages({ 'string.pattern.base': 'the webhook secret must be a Stripe endpoint secret (whsec_…)' }),
});
