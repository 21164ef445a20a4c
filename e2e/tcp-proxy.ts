// A TCP proxy in front of a started server, for tests that cut connections from the
// server's side: every connection accepted is piped to the target unchanged (TLS
// passes through, so the client still talks to the server itself), and cutAll()
// resets every connection open now, both halves, as a server or a load balancer
// that drops its connections does. Listens on 127.0.0.1 only.

import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  /** The port it listens on (127.0.0.1). */
  readonly port: number;
  /** Connections accepted since it started. */
  accepted(): number;
  /** Resets every open connection (both sides); returns how many it cut. */
  cutAll(): number;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<{ client: Socket; upstream: Socket }>();
  let accepted = 0;
  const server: Server = createServer((client) => {
    accepted++;
    const upstream = createConnection(target);
    const pair = { client, upstream };
    open.add(pair);
    const end = () => {
      open.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the proxy has no TCP address');
  const proxy: TcpProxy = {
    port: address.port,
    accepted: () => accepted,
    cutAll() {
      const cut = open.size;
      for (const { client, upstream } of [...open]) {
        // A reset, not a clean close: the response in flight ends without its last chunk.
        client.resetAndDestroy();
        upstream.resetAndDestroy();
      }
      open.clear();
      return cut;
    },
    async close() {
      proxy.cutAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
