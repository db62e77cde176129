import { routeUsing } from '../http/routes';
import { BusinessEnvelope, PingShape } from './schema';
import { BusinessService } from './service';
import { toPing } from './view';

const route = routeUsing<{ businesses: BusinessService }>();

/** `GET /ping` verifies a key; `GET /business` returns the profile. Neither needs a scope. */
export const businessRoutes = [
  route({
    method: 'get',
    path: '/ping',
    operationId: 'ping',
    summary: 'Verify a key',
    tag: 'Business',
    scopes: [],
    response: { status: 200, description: 'The key\'s business, scopes and mode', schema: PingShape },
    handle: async ({ cred }, s) => toPing(await s.businesses.ofCredential(cred), cred),
  }),
  route({
    method: 'get',
    path: '/business',
    operationId: 'getBusiness',
    summary: 'The business profile',
    tag: 'Business',
    scopes: [],
    response: { status: 200, description: 'The business', schema: BusinessEnvelope },
    handle: async ({ cred }, s) => ({ business: await s.businesses.ofCredential(cred) }),
  }),
];
