// authenticateClient decides once, for every method, that the client registered the method it
// used and that the endpoint admits it (issue 23, item 4): a method's `verify` checks credentials
// only, so a new method that forgets the rule cannot open a hole. The HTTP tests
// (test/http/token.test.ts, jwt-client-auth.test.ts, discovery.test.ts) check the same over the wire.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Client, ClientAuthMethod } from '../domain/client.ts';
import { ManualClock } from '../lib/clock.ts';
import type { AuditEvent } from '../observability/audit.ts';
import { authenticateClient } from './client-auth.ts';
import { JWT_BEARER_ASSERTION } from './client-auth/jwt-assertion.ts';
import type { ClientAuthMethodHandler, ClientAuthRequest } from './client-auth/method.ts';
import { CLIENT_AUTH_METHODS } from './client-auth/registry.ts';
import { InvalidClient } from './errors.ts';

/** A JWT with iss = sub = 'c' and a made-up signature: enough to be recognised and read; `verify` is replaced here. */
const unsignedJwt = (alg: string) => [{ alg, typ: 'JWT' }, { iss: 'c', sub: 'c' }].map((part) => Buffer.from(JSON.stringify(part)).toString('base64url')).join('.') + '.sig';

/** A request each method recognises, naming client 'c'. */
const REQUESTS: Record<ClientAuthMethod, ClientAuthRequest> = {
  client_secret_basic: { authorization: `Basic ${Buffer.from('c:s').toString('base64')}`, body: {} },
  client_secret_post: { authorization: undefined, body: { client_id: 'c', client_secret: 's' } },
  client_secret_jwt: { authorization: undefined, body: { client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: unsignedJwt('HS256') } },
  private_key_jwt: { authorization: undefined, body: { client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: unsignedJwt('RS256') } },
  none: { authorization: undefined, body: { client_id: 'c' } },
};

const client = (registered: ClientAuthMethod | undefined): Client => ({
  clientId: 'c',
  name: 'c',
  secretHash: undefined,
  active: true,
  redirectUris: [],
  tokenEndpointAuthMethod: registered,
  grantTypes: [],
  codeChallengeMethod: undefined,
  scope: undefined,
  refreshTokens: false,
  rotateRefreshTokens: false,
  accessTokenTtl: undefined,
  postLogoutRedirectUris: [],
  idTokenSignedResponseAlg: 'RS256',
  userinfoSignedResponseAlg: undefined,
  metadata: {},
  createdAt: 0,
  updatedAt: 0,
});

/** authenticateClient over one stored client, the throttle off, audit events collected. */
function authenticator(registered: ClientAuthMethod | undefined) {
  const events: AuditEvent[] = [];
  const stored = client(registered);
  const deps = {
    config: { throttle: false },
    store: { clients: { get: async (clientId: string) => (clientId === stored.clientId ? stored : undefined) } },
    clock: new ManualClock(),
    audit: { emit: (event: AuditEvent) => events.push(event) },
    clientAuth: {},
  } as unknown as Parameters<typeof authenticateClient>[0];
  return {
    events,
    authenticate: (request: ClientAuthRequest, methods: readonly ClientAuthMethodHandler[], endpoint: 'token' | 'introspection' = 'token') =>
      authenticateClient(deps, { ...request, ip: '192.0.2.1' }, { name: endpoint, url: `https://sso.example/oauth2/${endpoint}` }, methods),
  };
}

/** The outcome of an authentication: the method accepted, or the refusal as the audit and the wire see it. */
async function outcome(attempt: Promise<{ method: ClientAuthMethod }>) {
  try {
    return { accepted: (await attempt).method };
  } catch (error) {
    assert.ok(error instanceof InvalidClient, String(error));
    return { refused: error.description, usedBasic: error.usedBasic, detail: error.detail };
  }
}

describe('authenticateClient: the registered method, decided once for every method', () => {
  test('each method is accepted exactly for the clients that registered it, and refused before its verify for the others', async () => {
    const names = CLIENT_AUTH_METHODS.map((method) => method.method);
    // What each refusal reads today (issue 23 item 4 moved these checks out of the handlers unchanged).
    const expected = (used: ClientAuthMethod, registered: ClientAuthMethod | undefined) => {
      const secretMethod = used === 'client_secret_basic' || used === 'client_secret_post';
      if (used === registered || (registered === undefined && secretMethod)) return { accepted: used };
      const detail = used === 'none' ? 'confidential client sent no secret' : registered === 'none' && secretMethod ? 'public client sent a secret' : `client registered ${registered ?? 'a secret method'} but used ${used}`;
      return { refused: 'Client authentication failed.', usedBasic: used === 'client_secret_basic', detail };
    };
    for (const registered of [...names, undefined]) {
      for (const used of names) {
        const verified: string[] = [];
        // Every handler's verify replaced by one that accepts anything: only the central check can refuse.
        const methods = CLIENT_AUTH_METHODS.map((method) => ({ ...method, verify: () => void verified.push(method.method) }));
        const { authenticate, events } = authenticator(registered);
        const want = expected(used, registered);
        const label = `${used} by a client registered with ${registered ?? 'no method'}`;
        assert.deepEqual(await outcome(authenticate(REQUESTS[used], methods)), want, label);
        assert.deepEqual(verified, 'accepted' in want ? [used] : [], label);
        assert.deepEqual(events, 'accepted' in want ? [] : [{ event: 'client_auth.failed', endpoint: 'token', clientId: 'c', reason: want.detail, ip: '192.0.2.1' }], label);
      }
    }
  });

  test('a new method whose verify checks nothing is still refused to a client that registered another one', async () => {
    let verifiedFor: string | undefined;
    // A made-up method that trusts whoever names a client: it checks neither the registered method nor anything else.
    const trusting = {
      method: 'private_key_jwt',
      params: ['trust_me'],
      public: false,
      secret: 'none',
      usedBasic: false,
      requires: [],
      signingAlgs: [],
      detect: ({ body }) => body.trust_me !== undefined,
      present: () => ({ clientId: 'c' }),
      verify: (verified) => void (verifiedFor = verified.tokenEndpointAuthMethod),
    } as const satisfies ClientAuthMethodHandler;
    const request = { authorization: undefined, body: { trust_me: 'yes' } };
    for (const registered of ['client_secret_basic', 'client_secret_post', 'client_secret_jwt', 'none', undefined] as const) {
      assert.deepEqual(
        await outcome(authenticator(registered).authenticate(request, [trusting])),
        { refused: 'Client authentication failed.', usedBasic: false, detail: `client registered ${registered ?? 'a secret method'} but used private_key_jwt` },
        String(registered),
      );
      assert.equal(verifiedFor, undefined, 'verify is never reached');
    }
    assert.deepEqual(await outcome(authenticator('private_key_jwt').authenticate(request, [trusting])), { accepted: 'private_key_jwt' });
    assert.equal(verifiedFor, 'private_key_jwt');
  });

  test("a public client's method is refused where the endpoint needs a confidential caller (RFC 7662 §2.1), before verify", async () => {
    const verified: string[] = [];
    const methods = CLIENT_AUTH_METHODS.map((method) => ({ ...method, verify: () => void verified.push(method.method) }));
    const { authenticate, events } = authenticator('none');
    assert.deepEqual(await outcome(authenticate(REQUESTS.none, methods, 'introspection')), { refused: 'Public clients may not use this endpoint.', usedBasic: false, detail: 'public client' });
    assert.deepEqual(events, [{ event: 'client_auth.failed', endpoint: 'introspection', clientId: 'c', reason: 'public client', ip: '192.0.2.1' }]);
    assert.deepEqual(verified, []);
    assert.deepEqual(await outcome(authenticate(REQUESTS.none, methods, 'token')), { accepted: 'none' });
  });
});
