/**
 * The WooCommerce connection's routes:
 * - the connect page `GET|POST /woocommerce/connect/{token}` (the store's address, then WooCommerce)
 *   and WooCommerce's return to `…/done`: hosted pages, the unguessable token their capability;
 * - `POST /woocommerce/connect/callback`: WooCommerce's post of the keys the owner approved (JSON;
 *   anything but 200 makes WooCommerce delete the keys);
 * - `POST /woocommerce/stores/{public id}/webhook`: a connected store's deliveries, signed with its
 *   webhook secret over the raw body.
 */
import express, { Router } from 'express';
import { UNFRAMED } from '../pages/hygiene';
import { pageRoute, PageRoute } from '../pages/route';
import { CALLBACK_PATH, callbackBodySchema, returnQuery, storeFormFields } from './schema';
import { CallbackRefused, DeliveryAnswer, WooCommerceService } from './service';
import { connectAnswer, returnAnswer } from './view';

const STORE_FORM = 'woocommerce-store';

export function connectPageRoutes(stores: WooCommerceService): PageRoute[] {
  return [
    pageRoute({
      method: 'get', path: '/woocommerce/connect/:token', headers: UNFRAMED,
      handle: async ({ params, forms }) => connectAnswer(await stores.openLink(params.token), { formToken: forms.issue(STORE_FORM, params.token) }),
    }),
    pageRoute({
      method: 'post', path: '/woocommerce/connect/:token', form: storeFormFields, headers: UNFRAMED,
      handle: async ({ params, forms, form }) => {
        const { token } = params;
        if (!forms.accepts(STORE_FORM, token)) return connectAnswer(await stores.openLink(token), 'refused');
        const { state, problem } = await stores.chooseStore(token, form.store_url);
        const formToken = forms.issue(STORE_FORM, token);
        if (problem) return connectAnswer(state, { formToken, problem, typed: form.store_url });
        // Back to the page, which now offers the store's approval: a form may not end up at another site.
        if (state.kind === 'open') return { redirect: `/woocommerce/connect/${encodeURIComponent(token)}`, status: 303 };
        return connectAnswer(state, { formToken });
      },
    }),
    pageRoute({
      method: 'get', path: '/woocommerce/connect/:token/done', query: returnQuery, headers: UNFRAMED,
      handle: async ({ params, query }) => returnAnswer(params.token, await stores.openLink(params.token), query.success),
    }),
  ];
}

const DELIVERY_STATUS: Record<DeliveryAnswer, number> = { received: 202, ping: 200, unknown_store: 404, bad_signature: 401, bad_request: 400 };

export function wooCommerceRoutes(stores: WooCommerceService): Router {
  const r = Router();
  r.post(CALLBACK_PATH, express.json({ limit: '16kb', type: () => true }), async (req, res) => {
    const checked = callbackBodySchema.validate(req.body ?? {}, { abortEarly: false });
    if (checked.error) {
      // Named, never quoted: the body carries secrets.
      const fields = [...new Set(checked.error.details.map((d) => d.path.join('.')))];
      res.status(400).json({ error: 'bad_request', message: `Missing or invalid: ${fields.join(', ')}` });
      return;
    }
    try {
      const store = await stores.connectFromCallback(checked.value);
      res.status(200).json({ connected: true, store_url: store.store_url });
    } catch (err) {
      if (!(err instanceof CallbackRefused)) throw err;
      req.log.warn({ status: err.status, reason: err.message }, 'WooCommerce keys refused');
      res.status(err.status).json({ error: 'refused', message: err.message });
    }
  });
  // The signature covers the raw bytes: the body is kept as it came, whatever its content type says.
  r.post('/woocommerce/stores/:publicId/webhook', express.raw({ type: () => true, limit: '5mb' }), async (req, res) => {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const answer = await stores.receiveDelivery(String(req.params.publicId), body, (name) => req.get(name));
    if (answer === 'bad_signature') req.log.warn({ delivery: req.get('x-wc-webhook-delivery-id') }, 'WooCommerce delivery with a bad signature refused');
    res.status(DELIVERY_STATUS[answer]).json(answer === 'received' || answer === 'ping' ? { received: true } : { error: answer });
  });
  return r;
}
