/** Structured JSON request logs with a request id (echoed as X-Request-Id); keys never reach the log. */
import { randomUUID } from 'node:crypto';
import { RequestHandler } from 'express';
import { Logger } from 'pino';
import { pinoHttp } from 'pino-http';

export function requestLogging(logger: Logger): RequestHandler {
  return pinoHttp({
    logger,
    genReqId: (req, res) => {
      const incoming = req.headers['x-request-id'];
      const id = typeof incoming === 'string' && /^[\w.-]{1,64}$/.test(incoming) ? incoming : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    redact: ['req.headers.authorization', 'req.headers.cookie'],
    customProps: (req) => ({ credential: req.credential?.subject }),
  });
}
