/** The signing page's form. Its schema coerces rather than refuses (server/pages/route.ts): the page says what is missing. */
import Joi from 'joi';
import { signerName } from '../contracts/schema';

export interface SigningFormFields {
  /**
   * Which form was posted: the page's Sign, or the decline page's `Confirm decline`; anything else
   * is Sign. `decline` (a page from before the decline page) asks for the confirmation, declining nothing.
   */
  action: 'sign' | 'decline' | 'confirm_decline';
  /** The signer's name, trimmed; null when missing or not a name. */
  full_name: string | null;
  /** `yes` when "I agree" is ticked. */
  agree: 'yes' | null;
}

export const signingFormFields = Joi.object<SigningFormFields>({
  action: Joi.string().valid('sign', 'decline', 'confirm_decline').failover('sign').default('sign'),
  full_name: signerName.failover(null).default(null),
  agree: Joi.string().valid('yes').failover(null).default(null),
});
