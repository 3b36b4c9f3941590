/**
 * The part of oidc-provider (v9, plain JavaScript without bundled types) that the benchmark's
 * peer uses: bench/peers/oidc-provider.ts. Option names as in its documentation (docs/README.md
 * of the package); everything is passed through as the JSON-like values it documents.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface Grant {
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }

  /** The parts of `ctx.oidc` the peer's loadExistingGrant reads. */
  export interface KoaContextWithOIDC {
    oidc: {
      provider: Provider;
      client?: { clientId: string };
      session?: { accountId?: string; grantIdFor(clientId: string): string | undefined };
      result?: { consent?: { grantId?: string } };
    };
  }

  export interface Configuration {
    /** A class constructed once per model name ("AccessToken", "DeviceCode", …). */
    adapter?: new (model: string) => unknown;
    clients?: Record<string, unknown>[];
    jwks?: { keys: Record<string, unknown>[] };
    cookies?: { keys?: string[] };
    claims?: Record<string, string[]>;
    findAccount?: (ctx: unknown, id: string) => Promise<{ accountId: string; claims(): Promise<Record<string, unknown>> } | undefined>;
    loadExistingGrant?: (ctx: KoaContextWithOIDC) => Promise<Grant | undefined>;
    issueRefreshToken?: (ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) => Promise<boolean>;
    rotateRefreshToken?: () => boolean;
    pkce?: { required: () => boolean };
    features?: Record<string, { enabled: boolean } & Record<string, unknown>>;
    ttl?: Record<string, number>;
  }

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    Grant: { new (init: { clientId: string; accountId: string }): Grant; find(id: string): Promise<Grant | undefined> };
    /** The Koa application's request listener, for node:http. */
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
    on(event: 'server_error', listener: (ctx: unknown, error: Error) => void): this;
    interactionDetails(request: IncomingMessage, response: ServerResponse): Promise<{ uid: string; prompt: { name: string } }>;
    interactionFinished(request: IncomingMessage, response: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
  }
}
