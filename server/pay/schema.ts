/** The payment page's input. Its schemas coerce rather than refuse (server/pages/route.ts). */
import Joi from 'joi';

export interface PaymentPageQuery {
  /** The checkout the client came back from, when the query names one in the gateway's form; null otherwise. */
  checkout_session: string | null;
}

export const paymentPageQuery = Joi.object<PaymentPageQuery>({
  checkout_session: Joi.string().pattern(/^[A-Za-z0-9_]{1,255}$/).failover(null).default(null),
});
