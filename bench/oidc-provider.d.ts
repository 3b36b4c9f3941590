/**
 * The part of oidc-provider (v9, plain JavaScript without bundled types) that the benchmark's
 * peer uses: bench/peers/oidc-provider.ts. Option names as in its documentation (docs/README.md
 * of the package); everything is passed through as the JSON-like values it documents.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface Configuration {
    /** A class constructed once per model name ("AccessToken", "DeviceCode", …). */
    adapter?: new (model: string) => unknown;
    clients?: Record<string, unknown>[];
    jwks?: { keys: Record<string, unknown>[] };
    cookies?: { keys?: string[] };
    features?: Record<string, { enabled: boolean } & Record<string, unknown>>;
    ttl?: Record<string, number>;
  }

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    /** The Koa application's request listener, for node:http. */
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
    on(event: 'server_error', listener: (ctx: unknown, error: Error) => void): this;
  }
}
