/** createApp: wiring only. Every partner route is served under /api/v1/partner and /api/v1. */
import express, { Express, Router } from 'express';
import type Redis from 'ioredis';
import { Logger } from 'pino';
import { businessRoutes } from './businesses/routes';
import { clientRoutes } from './clients/routes';
import { Config } from './config';
import { contractRoutes } from './contracts/routes';
import { Database } from './db/database';
import { expenseRoutes } from './expenses/routes';
import { errorHandler, notFoundRoute } from './http/errors';
import { createGuard } from './http/guard';
import { requestLogging } from './http/logging';
import { openapiRoutes } from './openapi/routes';
import { invoiceRoutes } from './invoices/routes';
import { paymentPageRoutes } from './pay/routes';
import { paymentRoutes } from './payments/routes';
import { quickChargeRoutes } from './quick-charge/routes';
import { webhookRoutes } from './webhooks/routes';
import { Services } from './services';

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
  const guard = createGuard({
    db,
    keys: services.keys,
    limits: {
      perMinute: config.rateLimitPerMinute,
      authFailuresPerMinute: config.authFailuresPerMinute,
      redis: deps.redis,
      redisPrefix: config.redisPrefix,
    },
  });

  const api = Router();
  api.use(openapiRoutes());
  api.use(businessRoutes(services.businesses, guard));
  api.use(clientRoutes(services.clients, guard));
  api.use(invoiceRoutes(services.invoices, services.payments, guard));
  api.use(quickChargeRoutes(services.quickCharge, guard));
  api.use(paymentRoutes(services.payments, guard));
  api.use(webhookRoutes(services.webhooks, guard));
  api.use(expenseRoutes(services.expenses, guard));
  api.use(contractRoutes(services.contracts, guard));

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', config.trustProxy);
  app.use(requestLogging(deps.logger));
  for (const prefix of API_PREFIXES) app.use(prefix, api);
  app.use(paymentPageRoutes(services.invoices));
  app.use(notFoundRoute);
  app.use(errorHandler);
  return app;
}
