/**
 * A TCP proxy in the test process, put between gatehouse and PostgreSQL so a test can take the
 * database away and give it back without touching the shared server:
 *
 * - `refuse()`: every open connection is reset and new ones are closed at once, as when the
 *   database restarts or a firewall rejects (the client sees ECONNRESET / "Connection terminated").
 * - `blackhole()`: connections stay open but nothing gets through either way, and new ones are
 *   accepted and never answered, as in a network partition (the client sees only silence).
 * - `restore()`: traffic flows again; what a blackhole held back is delivered, as when a
 *   partition heals.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

type Mode = 'open' | 'refuse' | 'blackhole';

/** One client connection and its upstream; while held, bytes each way are kept, not sent. */
interface Pair {
  client: Socket;
  upstream: Socket | undefined;
  toUpstream: Buffer[];
  toClient: Buffer[];
}

export interface TcpProxy {
  port: number;
  /** Connections accepted so far (open, refused or held). */
  readonly accepted: number;
  refuse(): void;
  blackhole(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: Mode = 'open';
  let accepted = 0;
  const pairs = new Set<Pair>();

  const drop = (pair: Pair) => {
    pair.client.destroy();
    pair.upstream?.destroy();
    pairs.delete(pair);
  };

  const flush = (pair: Pair) => {
    if (!pair.upstream) return;
    for (const chunk of pair.toUpstream.splice(0)) pair.upstream.write(chunk);
    for (const chunk of pair.toClient.splice(0)) pair.client.write(chunk);
  };

  const link = (pair: Pair) => {
    const upstream = connect(target.port, target.host);
    pair.upstream = upstream;
    upstream.on('data', (chunk: Buffer) => {
      if (mode === 'open') pair.client.write(chunk);
      else pair.toClient.push(chunk);
    });
    upstream.on('error', () => drop(pair)).on('close', () => drop(pair));
    flush(pair);
  };

  const server: Server = createServer((client) => {
    accepted++;
    client.on('error', () => {});
    if (mode === 'refuse') {
      client.resetAndDestroy();
      return;
    }
    const pair: Pair = { client, upstream: undefined, toUpstream: [], toClient: [] };
    pairs.add(pair);
    client.on('data', (chunk: Buffer) => {
      if (mode === 'open' && pair.upstream) pair.upstream.write(chunk);
      else pair.toUpstream.push(chunk);
    });
    client.on('close', () => drop(pair));
    // A connection made during a blackhole is linked when it is restored, if its client still waits.
    if (mode === 'open') link(pair);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('proxy has no port');

  return {
    port: address.port,
    get accepted() {
      return accepted;
    },
    refuse() {
      mode = 'refuse';
      for (const pair of pairs) {
        pair.client.resetAndDestroy();
        pair.upstream?.destroy();
      }
      pairs.clear();
    },
    blackhole() {
      mode = 'blackhole';
    },
    restore() {
      mode = 'open';
      for (const pair of pairs) {
        if (pair.upstream) flush(pair);
        else link(pair);
      }
    },
    async close() {
      for (const pair of pairs) drop(pair);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
