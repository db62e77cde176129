/**
 * Structured JSON request logs with a request id (echoed as X-Request-Id). A request is logged once,
 * when its response is done, by method, URL, status and time only: headers, and so keys, never reach
 * the log, and the URL is the route's pattern with its query values redacted (`loggedPath`), so
 * payment and signing tokens and OAuth parameters do not either. Written by hand rather than with pino-http, whose per-request child logger and listeners
 * cost a tenth of a cached GET's time; `req.log` (the request id's child logger) is made only when
 * a handler logs something.
 */
import { randomUUID } from 'node:crypto';
import { IncomingMessage } from 'node:http';
import { Express, Request } from 'express';
import { Logger } from 'pino';
import { startStopwatch } from '../clock';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** The request id: the caller's X-Request-Id when reasonable, else a new UUID. */
      id: string;
      /** A logger whose lines carry the request id. */
      log: Logger;
    }
  }
}

const REASONABLE_ID = /^[\w.-]{1,64}$/;

function requestIdOf(incoming: IncomingMessage['headers'][string]): string {
  return typeof incoming === 'string' && REASONABLE_ID.test(incoming) ? incoming : randomUUID();
}

const CHILD_LOGGER = Symbol('child logger');

/** Every value of a query string becomes `…`; the names stay (OAuth's state, a search for an e-mail address). */
function redactedQuery(url: string): string {
  const at = url.indexOf('?');
  if (at < 0) return '';
  const names = url
    .slice(at + 1)
    .split('&')
    .filter(Boolean)
    .map((pair) => `${pair.split('=')[0]}=…`);
  return names.length ? `?${names.join('&')}` : '';
}

/** The static part of a route pattern, before its first parameter: `/api/v1/invoices/` of `/api/v1/invoices/:id`. */
function staticPrefix(pattern: string): string {
  const at = pattern.indexOf(':');
  return (at < 0 ? pattern : pattern.slice(0, at)).toLowerCase();
}

/** Record ids (`:id`, `:businessId`) are not secrets and help find a request: they are logged as sent. */
const RECORD_ID = /^(id|[a-z]+Id)$/;

/**
 * The path a log line may hold: the pattern of the route that served the request (`/pay/:token`,
 * `/contracts/:token/sign`), with record ids filled in; the pattern of an API route served under
 * both prefixes is the one the request came in on. A request no route matched (an unknown path,
 * maybe a mistyped token) keeps its first segment only: `/pay/…`.
 */
function loggedPath(req: Request): string {
  const path = req.originalUrl.split('?')[0];
  const route = req.route as { path?: string | string[] } | undefined;
  const patterns = typeof route?.path === 'string' ? [route.path] : (route?.path ?? []);
  const inApp = patterns
    .map((pattern) => `${req.baseUrl}${pattern}`)
    .sort((a, b) => staticPrefix(b).length - staticPrefix(a).length)
    .find((pattern) => path.toLowerCase().startsWith(staticPrefix(pattern)));
  if (!inApp) {
    const first = /^\/[^/]*/.exec(path)?.[0] ?? '/';
    return first.length < path.length ? `${first}/…` : first;
  }
  const params = (req.params ?? {}) as Record<string, string>;
  return inApp.replace(/:(\w+)/g, (whole, name: string) => (RECORD_ID.test(name) && typeof params[name] === 'string' && /^\d+$/.test(params[name]) ? params[name] : whole));
}

/** Logs every request of `app` to `logger`, and gives its requests `req.log`. */
export function useRequestLogging(app: Express, logger: Logger): void {
  // A getter on the app's request prototype, not a property set per request: most requests never log.
  Object.defineProperty(app.request, 'log', {
    configurable: true,
    get(this: Request & { [CHILD_LOGGER]?: Logger }) {
      return (this[CHILD_LOGGER] ??= logger.child({ reqId: this.id }));
    },
  });
  app.use((req, res, next) => {
    const elapsed = startStopwatch();
    const reqId = requestIdOf(req.headers['x-request-id']);
    req.id = reqId;
    res.setHeader('X-Request-Id', reqId);
    res.once('close', () => {
      // A caller that hung up (a long poll it abandoned, a timeout of its own) is worth a warning, not an error.
      const aborted = !res.writableFinished;
      const level = res.statusCode >= 500 ? 'error' : aborted ? 'warn' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      const line = {
        reqId,
        req: { method: req.method, url: `${loggedPath(req)}${redactedQuery(req.originalUrl)}`, remoteAddress: req.socket?.remoteAddress },
        res: { statusCode: res.statusCode },
        responseTime: Math.round(elapsed.elapsedMs()),
        credential: req.credential?.subject,
      };
      logger[level](line, aborted ? 'request aborted' : level === 'error' ? 'request errored' : 'request completed');
    });
    next();
  });
}
