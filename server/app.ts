/** createApp: wiring only. Every partner route is served under /api/v1/partner and /api/v1. */
import express, { Express } from 'express';
import type Redis from 'ioredis';
import { Logger } from 'pino';
import { Config } from './config';
import { Database } from './db/database';
import { errorHandler, notFoundRoute } from './http/errors';
import { createGuard } from './http/guard';
import { IdempotencyKeys } from './http/idempotency';
import { mountRoutes } from './http/routes';
import { useRequestLogging } from './http/logging';
import { openapiRoutes } from './openapi/routes';
import { partnerRoutes } from './partner-api';
import { pageAssetRoutes } from './pages/layout';
import { mountPages } from './pages/route';
import { gatewayRoutes } from './gateways/routes';
import { authorizeRoutes } from './authorize/routes';
import { AuthorizePages } from './authorize/service';
import { oauthRoutes } from './oauth/routes';
import { SignInThrottle } from './oauth/sign-in';
import { paymentPageRoutes } from './pay/routes';
import { PaymentPages } from './pay/service';
import { signingPageRoutes } from './sign/routes';
import { SigningPages } from './sign/service';
import { Services } from './services';
import { connectPageRoutes, wooCommerceRoutes } from './woocommerce/routes';

export interface AppDeps {
  config: Config;
  db: Database;
  services: Services;
  logger: Logger;
  redis?: Redis;
}

export const API_PREFIXES = ['/api/v1/partner', '/api/v1'] as const;

export function createApp(deps: AppDeps): Express {
  const { config, db, services } = deps;
  const counters = { redis: deps.redis, redisPrefix: config.redisPrefix, logger: deps.logger };
  const guard = createGuard({
    credentials: services.credentials,
    limits: { perMinute: config.rateLimitPerMinute, authFailuresPerMinute: config.authFailuresPerMinute, ...counters },
  });

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', config.trustProxy);
  useRequestLogging(app, deps.logger);
  mountRoutes(app.router, API_PREFIXES, partnerRoutes, { services, guard, idempotency: new IdempotencyKeys(db, config.idempotencyLeaseMs) });
  for (const prefix of API_PREFIXES) app.use(prefix, openapiRoutes({ baseUrl: config.baseUrl }));
  app.use(pageAssetRoutes());
  app.use(mountPages(paymentPageRoutes(new PaymentPages(services), { perMinute: config.pdfDownloadsPerMinute, ...counters }), services.pageForms));
  app.use(gatewayRoutes(services.gateways));
  app.use(oauthRoutes(services.oauthTokens));
  const authorizePages = new AuthorizePages({
    db,
    tokens: services.oauthTokens,
    owners: services.owners,
    businesses: services.businesses,
    sessions: services.ownerSessions,
    throttle: new SignInThrottle(),
  });
  app.use(mountPages(authorizeRoutes(authorizePages), services.pageForms));
  app.use(mountPages(signingPageRoutes(new SigningPages(services.contracts, services.documents), { perMinute: config.pdfDownloadsPerMinute, ...counters }), services.pageForms));
  // The callback first: the connect page's `/woocommerce/connect/:token` would take its path.
  app.use(wooCommerceRoutes(services.woocommerce));
  app.use(mountPages(connectPageRoutes(services.woocommerce), services.pageForms));
  app.use(notFoundRoute);
  app.use(errorHandler);
  return app;
}
