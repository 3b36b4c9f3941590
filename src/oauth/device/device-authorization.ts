import type { DeviceAuthorization } from '../../domain/device-authorization.ts';
import { hashSecret } from '../../lib/hash.ts';
import { authenticateClient } from '../client-auth.ts';
import { CLIENT_AUTH_PARAMS } from '../client-auth/registry.ts';
import type { OAuthDeps } from '../deps.ts';
import { ENDPOINT_PATHS } from '../discovery.ts';
import { SlowDown, UnauthorizedClient } from '../errors.ts';
import { deviceCodeGrant } from '../grants/device-code.ts';
import { param, rejectRepeated, type RawParams } from '../params.ts';
import { allowedResourceAudiences, parseResources, withAudiences } from '../resource.ts';
import { formatScope, grantedAudiences, grantedScope, parseScope } from '../scope.ts';
import { addressGroup, counterKey } from '../throttling/keys.ts';
import { formatUserCode, generateUserCode } from './user-code.ts';

/** The device authorization response (RFC 8628 §3.2). */
export interface DeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** Every parameter the endpoint reads: scope and the client-auth ones (client_id among them). None may be repeated (RFC 8628 §3.1, RFC 6749 §3.2). */
export const DEVICE_AUTHORIZATION_PARAMS: readonly string[] = [...new Set(['scope', ...CLIENT_AUTH_PARAMS])];

/** How often a new user code is drawn when the one drawn is taken (a 1 in 10^5 event even with 250,000 live codes). */
const USER_CODE_TRIES = 5;

/** The user-code page (RFC 8628 §3.2 verification_uri), under the issuer. */
export function verificationUri(config: OAuthDeps['config']): string {
  return `${config.issuer}${ENDPOINT_PATHS.deviceVerification}`;
}

/**
 * POST /oauth2/device_authorization (RFC 8628 §3.1–3.2): authenticates the client (public
 * clients too: CLI and TV apps usually are; client-auth/registry.ts), which must have registered
 * the device_code grant; grants the requested scope as the authorization endpoint does; stores the
 * device code's hash with a fresh user code; answers where the user goes and how often to poll.
 */
export async function deviceAuthorizationEndpoint(deps: OAuthDeps, authorization: string | undefined, body: RawParams, ip?: string): Promise<DeviceAuthorizationResponse> {
  rejectRepeated(body, DEVICE_AUTHORIZATION_PARAMS);
  const { client } = await authenticateClient(deps, { authorization, body, ip }, { name: 'device_authorization', url: `${deps.config.issuer}${ENDPOINT_PATHS.deviceAuthorization}` });
  if (!client.grantTypes.includes(deviceCodeGrant.type)) throw new UnauthorizedClient('This client may not use the device authorization grant.');
  const requested = parseScope(param(body, 'scope'));
  const resources = parseResources(body);
  // RFC 6749 §3.3 as at the authorization endpoint: unknown values dropped; audiences outside `aud`
  // invalid_scope; RFC 8707 §2 `resource` of a server outside `aud`, or unknown, invalid_target.
  const asked = grantedScope(requested, client, await grantedAudiences(deps.store.clients, client, requested));
  const scope = withAudiences(asked, await allowedResourceAudiences(deps.store.clients, client, resources));

  const now = deps.clock.now();
  await takeDeviceAuthorization(deps, ip, now);
  const { deviceCodeTtl: ttl, deviceCodeInterval: interval } = deps.config;
  const deviceCode = deps.random.token(32);
  for (let attempt = 1; ; attempt++) {
    const userCode = generateUserCode();
    const row: DeviceAuthorization = {
      deviceCodeHash: hashSecret(deviceCode),
      userCode,
      clientId: client.clientId,
      scope: formatScope(scope),
      status: 'pending',
      createdAt: now,
      expiresAt: now + ttl * 1000,
      interval,
      lastPolledAt: undefined,
      approval: undefined,
      decidedAt: undefined,
      consumedAt: undefined,
    };
    if (await deps.store.deviceAuthorizations.insert(row)) {
      const shown = formatUserCode(userCode);
      const uri = verificationUri(deps.config);
      return {
        device_code: deviceCode,
        user_code: shown,
        verification_uri: uri,
        verification_uri_complete: `${uri}?user_code=${encodeURIComponent(shown)}`,
        expires_in: ttl,
        interval,
      };
    }
    if (attempt >= USER_CODE_TRIES) throw new Error('no free user code after several draws');
  }
}

/**
 * Each device authorization stores a row until cleanup, and public clients need no secret to ask
 * for one: a fixed-window budget per client address (RateLimitStore.take, one atomic statement)
 * bounds the rows one address can create, as the silent authorizations' limit does for codes.
 * Refused: 429 slow_down with Retry-After, as the client-authentication throttle answers.
 */
async function takeDeviceAuthorization(deps: OAuthDeps, ip: string | undefined, now: number): Promise<void> {
  const { deviceAuthorizationsPerAddress: limit, deviceAuthorizationsWindow: window } = deps.config;
  if (limit === 0 || ip === undefined) return;
  const counted = await deps.store.rateLimits.take([{ key: counterKey('device-start-ip', addressGroup(ip)), limit }], now, now + window * 1000);
  if (counted.length === 0) throw new SlowDown(`Too many device authorizations from this address; retry in ${window} s.`, window);
}
