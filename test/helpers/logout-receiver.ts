/**
 * A relying party's back-channel logout endpoint for the tests (OpenID Connect Back-Channel Logout
 * 1.0 §2.5, §2.8): a real HTTP server on 127.0.0.1 that keeps every `logout_token` POSTed to each
 * path, and answers 200 — or a status a test sets (an RP failing), or nothing at all (down).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedLogout {
  path: string;
  contentType: string | undefined;
  logoutToken: string | undefined;
}

export interface LogoutReceiver {
  url(path: string): string;
  received: ReceivedLogout[];
  /** The status every POST gets (200 by default). */
  status: number;
  /** Stop answering (connections cut); start() listens again on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function startLogoutReceiver(): Promise<LogoutReceiver> {
  let server: Server | undefined;
  let port = 0;
  const state: LogoutReceiver = {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    received: [],
    status: 200,
    async stop() {
      const s = server;
      server = undefined;
      if (!s) return;
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    },
    async start() {
      if (server) return;
      server = createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
          const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
          state.received.push({ path: request.url ?? '', contentType: request.headers['content-type'], logoutToken: form.get('logout_token') ?? undefined });
          response.writeHead(state.status, { 'cache-control': 'no-store' }).end(state.status === 200 ? '' : 'logout failed');
        });
      });
      await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', () => resolve()));
      port = (server.address() as AddressInfo).port;
    },
  };
  await state.start();
  return state;
}
