/**
 * The input of `/oauth/authorize` and its forms: the authorize request's parameters, carried as
 * they came (strings only, in AUTHORIZE_PARAMETERS's order, so the forms and the redirects back
 * here repeat them alike), and each form's own fields. The schemas coerce rather than refuse
 * (server/pages/route.ts): the authorize check says what is wrong with a request.
 */
import Joi from 'joi';
import { AUTHORIZE_PARAMETERS } from '../oauth/authorization';

export type AuthorizeParameters = Record<string, string>;

/** The parameters, and the form's `fields`; unknown fields are dropped. */
function withParameters<F extends object>(fields: { [K in keyof F]: Joi.Schema<F[K]> }): Joi.ObjectSchema<{ params: AuthorizeParameters } & F> {
  const parameter = Joi.alternatives().try(Joi.string().allow(''), Joi.any().strip());
  return Joi.object<{ params: AuthorizeParameters } & F>({ ...Object.fromEntries(AUTHORIZE_PARAMETERS.map((name) => [name, parameter])), ...fields }).custom((value: Record<string, unknown>) => {
    const params = Object.fromEntries(AUTHORIZE_PARAMETERS.filter((name) => typeof value[name] === 'string').map((name) => [name, value[name]]));
    return { ...Object.fromEntries(Object.keys(fields).map((name) => [name, value[name]])), params };
  });
}

export const authorizeQuery = withParameters({});

export const signInForm = withParameters<{ email: string; password: string }>({
  email: Joi.string().allow('').trim().failover('').default(''),
  password: Joi.string().allow('').failover('').default(''),
});

export const decisionForm = withParameters<{ decision: 'allow' | 'deny' }>({
  decision: Joi.string<'allow' | 'deny'>().valid('allow', 'deny').failover('deny').default('deny'),
});

export const signOutForm = withParameters({});
