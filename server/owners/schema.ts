/** Owner input, from the CLI (`owners create`, `owners reset-password`): validated before the service sees it. */
import Joi from 'joi';

export interface NewOwner {
  businessId: number;
  email: string;
  password: string;
}

const MIN_PASSWORD_LENGTH = 12;

const password = Joi.string()
  .min(MIN_PASSWORD_LENGTH)
  .max(1024)
  .required()
  .messages({ 'string.min': `the password must be at least ${MIN_PASSWORD_LENGTH} characters` });

export const newOwnerSchema = Joi.object<NewOwner>({
  businessId: Joi.number().integer().min(1).required(),
  email: Joi.string().trim().max(254).email({ tlds: { allow: false } }).required(),
  password,
});

/** A password reset: the new password, named as `owners create` names it. */
export const passwordResetSchema = Joi.object<{ password: string }>({ password });
