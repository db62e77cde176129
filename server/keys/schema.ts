/** API key input, from the CLI (`keys create`, `keys update`, `init`): validated before the service sees it. */
import Joi from 'joi';
import { ALL_SCOPES, Scope } from '../auth/scopes';
import { Mode } from './token';

/** How long the old key of a rotation keeps working: at once (`0`) up to 30 days. */
export const MAX_ROTATION_GRACE_MS = 30 * 24 * 3600 * 1000;

export interface NewKey {
  businessId: number;
  mode: Mode;
  scopes: Scope[];
  webhookUrl?: string;
  webhookSecret?: string;
}

/** Changes to an existing key; `webhookUrl: null` removes its webhook. */
export interface KeyChanges {
  scopes?: Scope[];
  webhookUrl?: string | null;
  webhookSecret?: string;
  /** Replace the signing secret with a newly generated one. */
  generateWebhookSecret?: boolean;
}

const scopes = Joi.array()
  .items(Joi.string().valid(...ALL_SCOPES))
  .min(1)
  .unique();

// Sealed, 150 bytes become 243 characters: within the column's 255.
const webhookSecret = Joi.string().min(16).max(150, 'utf8');

export const newKeySchema = Joi.object<NewKey>({
  businessId: Joi.number().integer().positive().required(),
  mode: Joi.string().valid('test', 'live').required(),
  scopes: scopes.required(),
  webhookUrl: Joi.string().max(2048),
  webhookSecret,
});

export const keyChangesSchema = Joi.object<KeyChanges>({
  scopes,
  webhookUrl: Joi.string().max(2048).allow(null),
  webhookSecret,
  generateWebhookSecret: Joi.boolean(),
})
  .oxor('webhookSecret', 'generateWebhookSecret')
  .or('scopes', 'webhookUrl', 'webhookSecret', 'generateWebhookSecret')
  .messages({ 'object.missing': 'nothing to change: give scopes, a webhook URL or a webhook secret' });
