/**
 * A load balancer in front of several server processes, as a production deployment has one: each
 * request goes to the next process in turn, so every process receives deliveries and callbacks.
 */
import http from 'node:http';
import { AddressInfo } from 'node:net';

export interface Balancer {
  url: string;
  /** How many requests each target answered, by target. */
  served: Map<string, number>;
  stop(): Promise<void>;
}

/** Starts the balancer on `port` of 127.0.0.1 (0: any), forwarding to `targets` (http://host:port) round-robin. */
export async function startBalancer(targets: string[], port = 0): Promise<Balancer> {
  let next = 0;
  const served = new Map(targets.map((target) => [target, 0]));
  const server = http.createServer((req, res) => {
    const target = targets[next++ % targets.length];
    const upstream = http.request(`${target}${req.url ?? '/'}`, { method: req.method, headers: req.headers }, (answer) => {
      served.set(target, (served.get(target) ?? 0) + 1);
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
