/**
 * How long a client may take, so that a slow or stalled one cannot hold a connection (and, during
 * a shutdown, the process) for ever. Fastify's default `requestTimeout` is 0, no limit at all.
 *
 * | what | setting (default) | enforced by | answer |
 * |---|---|---|---|
 * | request line + headers, from the first byte | GATEHOUSE_HEADERS_TIMEOUT (60 s) | Node's `headersTimeout` | 408, connection closed |
 * | the whole request, body included | GATEHOUSE_REQUEST_TIMEOUT (300 s) | Node's `requestTimeout` | 408, connection closed |
 * | silence while a body arrives | GATEHOUSE_BODY_TIMEOUT (60 s) | the socket's inactivity timeout (Fastify's `connectionTimeout`) and onSocketTimeout below | 408, connection closed |
 * | an idle keep-alive connection | 72 s (Fastify's `keepAliveTimeout`) | Node | closed |
 *
 * Node checks the headers and request timeouts every `connectionsCheckingInterval` (30 s by
 * default, which would let a request outlive its timeout by half a minute); it is derived here
 * from the timeouts. The 408s are written by clientErrorHandler (plugins/limits.ts), with the
 * security headers, as Node's own parser errors are.
 *
 * None of these limits the time gatehouse itself takes to answer: a request is bounded there by
 * GATEHOUSE_DATABASE_TIMEOUT, and cutting a login in the middle of its password check would
 * only make the client retry it.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyServerOptions } from 'fastify';
import type { Config } from '../../config.ts';
import { clientErrorHandler } from './limits.ts';

type TimeoutConfig = Pick<Config, 'headersTimeout' | 'bodyTimeout' | 'requestTimeout'>;

/** Fastify's options for the timeouts, and Node's under `http`. */
export function timeoutOptions(config: TimeoutConfig): Pick<FastifyServerOptions, 'connectionTimeout' | 'requestTimeout'> & { http: { headersTimeout: number; connectionsCheckingInterval: number } } {
  const headersMs = config.headersTimeout * 1000;
  const requestMs = config.requestTimeout * 1000;
  return {
    requestTimeout: requestMs,
    // The socket's inactivity timeout; onSocketTimeout decides what it means in each phase.
    connectionTimeout: config.bodyTimeout * 1000,
    http: {
      headersTimeout: headersMs,
      // A tenth of the shorter timeout, at most a second: a request outlives it by at most that.
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.min(headersMs, requestMs) / 10)),
    },
  };
}

/**
 * Handles the socket inactivity timeout (GATEHOUSE_BODY_TIMEOUT). With a `timeout` listener on
 * the server Node no longer destroys a silent socket itself, so every phase is decided here:
 *
 * - a request whose body has not all arrived, nothing answered yet: 408 (RFC 9110 §15.5.9);
 * - a request received in full and not yet answered: left alone, gatehouse is working on it;
 * - anything else (an answer the client stopped reading, silence in the middle of headers, an
 *   idle keep-alive connection, whose socket timeout Node sets to the keep-alive timeout): the
 *   connection is closed, as Node would without this listener.
 */
export function useBodyTimeout(server: Server, config: Pick<Config, 'issuer'>): void {
  const exchanges = new WeakMap<Socket, { request: IncomingMessage; response: ServerResponse }>();
  server.on('request', (request: IncomingMessage, response: ServerResponse) => exchanges.set(request.socket, { request, response }));
  const answer = clientErrorHandler(config);
  server.on('timeout', (socket: Socket) => {
    const exchange = exchanges.get(socket);
    if (exchange && !exchange.request.complete && !exchange.response.headersSent) {
      answer(Object.assign(new Error('request body timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket);
      return;
    }
    if (exchange && exchange.request.complete && !exchange.response.headersSent) return;
    socket.destroy();
  });
}
