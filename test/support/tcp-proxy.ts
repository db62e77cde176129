/**
 * A TCP proxy the test controls, in front of a shared service (MariaDB, Redis): `cut()` drops every
 * connection and refuses new ones, as a network outage or a crashed server would; `restore()`
 * lets connections through again; `holdOnce(text, ms)` holds the first request that contains
 * `text`, and what follows it, for `ms`, as a busy server would. The shared service itself is
 * never stopped.
 */
import net from 'node:net';

export interface TcpProxy {
  port: number;
  cut(): void;
  restore(): void;
  holdOnce(text: string, ms: number): void;
  stop(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let open = true;
  let hold: { text: string; ms: number } | undefined;
  const server = net.createServer((client) => {
    if (!open) return void client.destroy();
    const upstream = net.connect(targetPort, targetHost);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.on('data', (chunk: Buffer) => {
      if (!hold || !chunk.includes(hold.text)) return void upstream.write(chunk);
      const { ms } = hold;
      hold = undefined;
      client.pause();
      setTimeout(() => {
        upstream.write(chunk);
        client.resume();
      }, ms);
    });
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = () => {
    open = false;
    for (const socket of sockets) socket.destroy();
  };
  return {
    port: (server.address() as net.AddressInfo).port,
    cut,
    restore() {
      open = true;
    },
    holdOnce(text, ms) {
      hold = { text, ms };
    },
    async stop() {
      cut();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
