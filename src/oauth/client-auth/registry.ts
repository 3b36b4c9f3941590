import type { ClientAuthMethod } from '../../domain/client.ts';
import type { ClientAuthEndpoint } from '../../observability/audit.ts';
import { clientSecretBasic } from './client-secret-basic.ts';
import { clientSecretJwt } from './client-secret-jwt.ts';
import { clientSecretPost } from './client-secret-post.ts';
import type { ClientAuthMethodHandler, ClientAuthSetup, ClientSecretKind } from './method.ts';
import { none } from './none.ts';
import { privateKeyJwt } from './private-key-jwt.ts';

/**
 * The client authentication methods gatehouse implements, in the order they are tried on a request
 * and listed in discovery. Adding one is one file exporting a `ClientAuthMethodHandler` plus its
 * line here (docs/architecture.md, "How to add a client-authentication method").
 */
export const CLIENT_AUTH_METHODS = [clientSecretBasic, clientSecretPost, clientSecretJwt, privateKeyJwt, none] as const satisfies readonly ClientAuthMethodHandler[];

// Every ClientAuthMethod a client row can name is implemented here, and nothing else is.
type Implemented = (typeof CLIENT_AUTH_METHODS)[number]['method'];
const _everyMethodImplemented: [Exclude<ClientAuthMethod, Implemented>] extends [never] ? true : never = true;

/** Which endpoints admit public clients (RFC 7662 §2.1: introspection needs an authorized, confidential caller). */
export const CLIENT_AUTH_ENDPOINTS: Readonly<Record<ClientAuthEndpoint, { allowPublic: boolean }>> = {
  token: { allowPublic: true },
  introspection: { allowPublic: false },
  revocation: { allowPublic: true },
  // RFC 8628 §3.1: device clients (CLI, TV apps) are usually public; confidential ones authenticate as at the token endpoint.
  device_authorization: { allowPublic: true },
};

/** What this configuration gives the methods (ClientAuthRequirement): GATEHOUSE_KEY_ENCRYPTION_KEY set or not. */
export function clientAuthSetup(config: { keyEncryptionKey?: string | undefined }): ClientAuthSetup {
  return { keyEncryptionKey: config.keyEncryptionKey !== undefined };
}

/** The methods `endpoint` accepts under `setup`, in registry order: public ones only where it admits public clients, and only those whose requirements the configuration meets. */
function usableAt(endpoint: ClientAuthEndpoint, setup: ClientAuthSetup): ClientAuthMethodHandler[] {
  const { allowPublic } = CLIENT_AUTH_ENDPOINTS[endpoint];
  return CLIENT_AUTH_METHODS.filter((method) => (allowPublic || !method.public) && method.requires.every((requirement) => setup[requirement]));
}

/** The method names `endpoint` accepts under `setup`, in registry order: its *_auth_methods_supported in discovery. */
export function authMethodsFor(endpoint: ClientAuthEndpoint, setup: ClientAuthSetup): ClientAuthMethod[] {
  return usableAt(endpoint, setup).map((method) => method.method);
}

/**
 * The JWS algorithms `endpoint` accepts for client assertions under `setup`, in registry order,
 * each once: its *_auth_signing_alg_values_supported in discovery (OIDC Discovery §3, RFC 8414 §2).
 */
export function authSigningAlgsFor(endpoint: ClientAuthEndpoint, setup: ClientAuthSetup): string[] {
  return [...new Set(usableAt(endpoint, setup).flatMap((method) => method.signingAlgs))];
}

/** The algorithms `method` accepts for its client assertions (empty: the method has none). */
export function signingAlgsOf(method: ClientAuthMethod | undefined): readonly string[] {
  return CLIENT_AUTH_METHODS.find((candidate) => candidate.method === method)?.signingAlgs ?? [];
}

/** The handler of `method`; every ClientAuthMethod has one (checked above). */
function handlerOf(method: ClientAuthMethod): ClientAuthMethodHandler {
  return CLIENT_AUTH_METHODS.find((candidate) => candidate.method === method)!;
}

/**
 * How a client registered with `method` holds its secret (the handler's `secret`). A client that
 * registered no method (one from before token_endpoint_auth_method was stored) may use either
 * method that presents the secret itself, so keeps it hashed.
 */
export function secretOf(method: ClientAuthMethod | undefined): ClientSecretKind {
  return method === undefined ? 'hashed' : handlerOf(method).secret;
}

/** Every method name, in registry order: token_endpoint_auth_method values registration accepts. */
export const CLIENT_AUTH_METHOD_NAMES: readonly ClientAuthMethod[] = CLIENT_AUTH_METHODS.map((method) => method.method);

/** The body parameters any method reads, each once: every endpoint that authenticates clients refuses them repeated (RFC 6749 §3.2). */
export const CLIENT_AUTH_PARAMS: readonly string[] = [...new Set(CLIENT_AUTH_METHODS.flatMap((method) => method.params))];
