/** OAuth app input, from the CLI (`oauth apps create`): validated before the service sees it. */
import Joi from 'joi';

export interface NewApp {
  name: string;
  redirectUris: string[];
  public?: boolean;
  webhookUrl?: string;
  webhookSecret?: string;
}

/** https, or http on the loopback (a developer's machine); no fragment (RFC 6749 §3.1.2). */
const redirectUri = Joi.string()
  .max(2048)
  .custom((value: string, helpers) => {
    try {
      const url = new URL(value);
      const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
      if (url.hash || !(url.protocol === 'https:' || (url.protocol === 'http:' && loopback))) return helpers.error('any.invalid');
      return value;
    } catch {
      return helpers.error('any.invalid');
    }
  })
  .messages({ 'any.invalid': 'each redirect URI must be an absolute https URL (http only on localhost) without a fragment' });

export const newAppSchema = Joi.object<NewApp>({
  name: Joi.string().trim().min(1).max(255).required(),
  redirectUris: Joi.array().items(redirectUri).min(1).max(20).unique().required(),
  public: Joi.boolean().default(false),
  webhookUrl: Joi.string().max(2048),
  webhookSecret: Joi.string().min(16).max(255),
});
