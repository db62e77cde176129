/**
 * A reverse proxy in front of the real app, to stand for the network between the bridge and the
 * partner API: it forwards every request unless told to answer some itself (a 429, a 503, nothing).
 */
import http from 'node:http';
import { AddressInfo } from 'node:net';

interface Fault {
  matches: (method: string, path: string) => boolean;
  remaining: number;
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export interface TestProxy {
  url: string;
  /** Method and path of every request that reached the proxy, in order. */
  requests: { method: string; path: string; status: number }[];
  /** The most requests it had under way at once. */
  maxInFlight: number;
  /** The next `times` requests matching method and path prefix get `status` instead of the app's answer. */
  fail(method: string, pathPrefix: string, times: number, status: number, headers?: Record<string, string>, body?: unknown): void;
  /** Forgets every fault not yet used up: the API is healthy again. */
  recover(): void;
  stop(): Promise<void>;
}

export async function startProxy(target: string): Promise<TestProxy> {
  const faults: Fault[] = [];
  const requests: TestProxy['requests'] = [];
  let inFlight = 0;
  const forward = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    inFlight += 1;
    proxy.maxInFlight = Math.max(proxy.maxInFlight, inFlight);
    res.on('close', () => (inFlight -= 1));
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const fault = faults.find((f) => f.remaining > 0 && f.matches(method, path));
    if (fault) {
      fault.remaining -= 1;
      requests.push({ method, path, status: fault.status });
      res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
      res.end(JSON.stringify(fault.body));
      return;
    }
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k))) as Record<string, string>;
    const answer = await fetch(`${target}${path}`, { method, headers, body: ['GET', 'HEAD'].includes(method) ? undefined : Buffer.concat(chunks) });
    requests.push({ method, path, status: answer.status });
    const out: Record<string, string> = {};
    answer.headers.forEach((value, key) => {
      if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(key)) out[key] = value;
    });
    res.writeHead(answer.status, out);
    res.end(Buffer.from(await answer.arrayBuffer()));
  };
  const server = http.createServer((req, res) => void forward(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxy: TestProxy = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    maxInFlight: 0,
    fail(method, pathPrefix, times, status, headers = {}, body = { error: status === 429 ? 'rate_limited' : 'server_error', message: 'injected by the test proxy' }) {
      faults.push({ matches: (m, p) => m === method && p.startsWith(pathPrefix), remaining: times, status, headers, body });
    },
    recover() {
      faults.length = 0;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
