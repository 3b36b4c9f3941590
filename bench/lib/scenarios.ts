/**
 * The scenarios of `npm run bench` (issue 6): each turns the fixture into autocannon requests and
 * says which ceiling it is compared with and what ratio it must reach.
 */
import type autocannon from 'autocannon';
import type { Store } from '../../src/storage/ports.ts';
import { mintCodes, mintRefreshTokens, REDIRECT_URI, SCOPE, type Fixture } from './fixtures.ts';
import { loginFlow, mintCodesViaAuthorization, type FrontChannel } from './front-channel.ts';

export type CeilingId = 'R1' | 'R2' | 'R3';
export type ScenarioId = 'S1' | 'S2' | 'S3' | 'S4a' | 'S4b' | 'S5' | 'S6';

export interface ScenarioContext {
  /** http://127.0.0.1:PORT */
  base: string;
  store: Store;
  fixture: Fixture;
  /** The front channel as probed on this server: what S5 and S6 need, or why they cannot run. */
  frontChannel: FrontChannel;
  /** Ceilings measured in this run (per second, one core). */
  ceilings: Partial<Record<CeilingId, number>>;
  /** Operations per second already measured for a scenario on this server, to size pools. */
  measured: Partial<Record<ScenarioId, number>>;
  /** Operations per second of a scenario's warm-up on this server, to size its rounds' pools. */
  warmedUp: Partial<Record<ScenarioId, number>>;
  /** Cores the server may use, to size pools. */
  serverCores: number;
}

export interface Prepared {
  requests: autocannon.Request[];
  /** Overrides the scenario's opStatus (S6: whatever status the login answered in the probe). */
  opStatus?: number;
  /**
   * End the run after this many requests instead of after the duration: a pool sized from an
   * estimate of the rate is then used up exactly, however the rate turns out.
   */
  amount?: number;
  /** Called after the run: a warning when a pool ran dry. */
  after?: () => string | undefined;
}

export interface Scenario {
  id: ScenarioId;
  name: string;
  ceiling: CeilingId;
  /** Minimum ratio of operations per second to the ceiling (issue 6 §3). */
  target: number;
  /** Status codes that count as success; anything else is reported. */
  ok: number[];
  /** The status of the response that completes one operation (S6: the POST's 302). */
  opStatus: number;
  /** A hot path: figures on PostgreSQL are compared with SQLite's. */
  hotPath: boolean;
  connections?: number;
  /** Prepares one run of `seconds`; a string says why the scenario cannot be measured. */
  prepare(ctx: ScenarioContext, seconds: number): Promise<Prepared | string>;
}

const FORM = 'application/x-www-form-urlencoded';

function form(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}

/** Requests drawing one value each from `pool`; an exhausted pool sends an invalid value (a visible 400). */
function fromPool(pool: string[], build: (value: string) => autocannon.Request): { request: autocannon.Request; after: () => string | undefined } {
  let next = 0;
  let dry = 0;
  return {
    request: {
      setupRequest: () => {
        const value = pool[next++];
        if (value === undefined) dry++;
        return build(value ?? 'exhausted');
      },
    },
    after: () => (dry > 0 ? `pool of ${pool.length} ran dry (${dry} requests sent an invalid value)` : undefined),
  };
}

export const SCENARIOS: Scenario[] = [
  {
    id: 'S1',
    name: 'introspection (valid access token)',
    ceiling: 'R1',
    target: 0.35,
    ok: [200],
    opStatus: 200,
    hotPath: true,
    async prepare({ fixture }) {
      return {
        requests: [{ method: 'POST', path: '/uas/oauth2/introspection', headers: { 'content-type': FORM, authorization: fixture.rs.basic }, body: form({ token: fixture.accessToken }) }],
      };
    },
  },
  {
    id: 'S2',
    name: 'userinfo (Bearer header)',
    ceiling: 'R1',
    target: 0.35,
    ok: [200],
    opStatus: 200,
    hotPath: true,
    async prepare({ fixture }) {
      return { requests: [{ method: 'GET', path: '/uas/oauth2/userinfo', headers: { authorization: `Bearer ${fixture.accessToken}` } }] };
    },
  },
  {
    id: 'S3',
    name: 'authorization_code exchange (basic, RS256 ID token)',
    ceiling: 'R2',
    target: 0.7,
    ok: [200],
    opStatus: 200,
    hotPath: true,
    async prepare({ base, store, fixture, frontChannel, ceilings, serverCores, warmedUp }, seconds) {
      // The rounds get codes as a relying party does, from the authorization endpoint with an SSO
      // session, as many as the warm-up's rate says a round uses. The warm-up (and any run before
      // the front channel exists) gets codes put straight into the store, as many as the signing
      // ceiling allows, since every exchange signs one ID token.
      const rate = warmedUp.S3;
      const viaAuthorization = frontChannel.available && rate !== undefined;
      const codes = viaAuthorization
        ? await mintCodesViaAuthorization(base, frontChannel, Math.ceil(rate * seconds * 1.2) + 100)
        : await mintCodes(store, fixture, Math.ceil((ceilings.R2 ?? 2000) * serverCores * seconds * 1.3) + 500);
      const { request, after } = fromPool(codes, (code) => ({
        method: 'POST',
        path: '/uas/oauth2/token',
        headers: { 'content-type': FORM, authorization: fixture.rp.basic },
        body: form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }),
      }));
      return { requests: [request], after, ...(viaAuthorization ? { amount: codes.length } : {}) };
    },
  },
  {
    id: 'S4a',
    name: 'refresh_token grant, rotation off (one token reused)',
    ceiling: 'R1',
    target: 0.15,
    ok: [200],
    opStatus: 200,
    hotPath: true,
    async prepare({ fixture }) {
      return {
        requests: [
          {
            method: 'POST',
            path: '/uas/oauth2/token',
            headers: { 'content-type': FORM, authorization: fixture.rp.basic },
            body: form({ grant_type: 'refresh_token', refresh_token: fixture.refreshToken }),
          },
        ],
      };
    },
  },
  {
    id: 'S4b',
    name: 'refresh_token grant, rotation on (pre-minted pool)',
    ceiling: 'R1',
    target: 0.15,
    ok: [200],
    opStatus: 200,
    hotPath: true,
    async prepare({ store, fixture, measured, warmedUp, ceilings }, seconds) {
      // Rotation adds one guarded UPDATE and one more row to S4a's work, so S4a's rate bounds the
      // warm-up; the rounds use up a pool sized from the warm-up's own rate.
      const rate = warmedUp.S4b;
      const size = rate !== undefined ? Math.ceil(rate * seconds * 1.2) + 100 : Math.ceil((measured.S4a ?? (ceilings.R1 ?? 10_000) * 0.5) * seconds * 1.5) + 1000;
      const tokens = await mintRefreshTokens(store, fixture, size);
      const { request, after } = fromPool(tokens, (token) => ({
        method: 'POST',
        path: '/uas/oauth2/token',
        headers: { 'content-type': FORM, authorization: fixture.rotating.basic },
        body: form({ grant_type: 'refresh_token', refresh_token: token }),
      }));
      return { requests: [request], after, ...(rate !== undefined ? { amount: tokens.length } : {}) };
    },
  },
  {
    id: 'S5',
    name: 'authorization request with SSO session (302 + code)',
    ceiling: 'R1',
    target: 0.15,
    ok: [302],
    opStatus: 302,
    hotPath: true,
    async prepare({ frontChannel }) {
      if (!frontChannel.available) return `not yet measurable: ${frontChannel.reason}`;
      return { requests: [{ method: 'GET', path: frontChannel.authorizePath, headers: { cookie: frontChannel.sessionCookie } }] };
    },
  },
  {
    id: 'S6',
    name: 'password login (GET authorization, POST form, 302)',
    ceiling: 'R3',
    target: 0.9,
    ok: [200, 302, 303],
    opStatus: 302,
    hotPath: false,
    connections: 8,
    async prepare({ frontChannel, fixture }) {
      if (!frontChannel.available) return `not yet measurable: ${frontChannel.reason}`;
      return { requests: loginFlow(frontChannel, fixture.login), opStatus: frontChannel.loginStatus };
    },
  },
];

/** An authorization request of the rp for `endpointPath` (the discovery document's authorization_endpoint). */
export function authorizePath(fixture: Fixture, state: string, endpointPath: string): string {
  const query = new URLSearchParams({ response_type: 'code', client_id: fixture.rp.clientId, redirect_uri: REDIRECT_URI, scope: SCOPE, state, nonce: 'n-0S6_WzA2Mj' });
  return `${endpointPath}?${query}`;
}

/** The path of the authorization endpoint as the server's discovery document names it. */
export async function authorizationEndpointPath(base: string): Promise<string | undefined> {
  try {
    const response = await fetch(`${base}/uas/.well-known/openid-configuration`);
    if (!response.ok) return undefined;
    const metadata = (await response.json()) as { authorization_endpoint?: string };
    return metadata.authorization_endpoint ? new URL(metadata.authorization_endpoint).pathname : undefined;
  } catch {
    return undefined;
  }
}
