/**
 * The scenarios of `npm run bench` (issue 6): each turns the fixture into autocannon requests and
 * says which ceiling it is compared with and what ratio it must reach.
 */
import type autocannon from 'autocannon';
import type { Store } from '../../src/storage/ports.ts';
import { ASSERTION_TYPE, mintAssertions, type ClientKey } from './assertions.ts';
import { DEVICE_CODE_GRANT, mintCodes, mintRefreshTokens, REDIRECT_URI, SCOPE, type ClientCredentials, type Fixture, type MachineClients } from './fixtures.ts';
import { loginFlow, mintCodesViaAuthorization, passkeyLoginFlow, probePasskeyLogin, probeSecondFactorLogin, secondFactorLoginFlow, type FrontChannel } from './front-channel.ts';
import { PasskeyLogins } from './passkey-logins.ts';
import type { PeerFixture } from './peer.ts';
import { missing, pathOf, requestDeviceCodes, type DeviceCodes, type Discovery } from './protocol.ts';
import { TotpLogins } from './totp-logins.ts';

export type CeilingId = 'R1' | 'R2' | 'R3' | 'R4' | 'R5';
export type ScenarioId = 'S1' | 'S2' | 'S3' | 'S3-ES' | 'S3j' | 'S3a' | 'S4a' | 'S4b' | 'S5' | 'S6' | 'S6t' | 'S6p' | 'S7' | 'S7a' | 'S8' | 'S9' | 'S10';

/** What S7–S9 need of a server, gatehouse or the peer, so that both get the same requests. */
interface MachineSide {
  /** Operations per second of a scenario's warm-up on this server, to size its rounds' pools. */
  warmedUp: Partial<Record<ScenarioId, number>>;
  /** Ceilings measured in this run (per second, one core). */
  ceilings: Partial<Record<CeilingId, number>>;
  /** Cores the server may use, to size pools. */
  serverCores: number;
  /** The server's discovery document. */
  discovery: Discovery | undefined;
  /** S8's client key (the same for gatehouse's client and the peer's). */
  clientKey: ClientKey;
  /** S9's pending device codes, made once per server and polled round-robin by every run. */
  deviceCodes?: DeviceCodes & {
    next: number;
    /** Codes answered `slow_down` once: their interval grew by 5 s (RFC 8628 §3.5), so they are not polled again. */
    retired: Set<string>;
    expiresAt: number;
    /** Responses per second of the last run that polled them (slow_down answers included), to size the pool. */
    observedRate?: number;
  };
}

export interface ScenarioContext extends MachineSide {
  kind: 'gatehouse';
  /** http://127.0.0.1:PORT */
  base: string;
  store: Store;
  fixture: Fixture;
  /** The front channel as probed on this server: what S5 and S6 need, or why they cannot run. */
  frontChannel: FrontChannel;
  /** Operations per second already measured for a scenario on this server, to size pools. */
  measured: Partial<Record<ScenarioId, number>>;
  /** S7–S9's clients, or why gatehouse's registration refused each. */
  machine: MachineClients;
  /** S6t's users with a TOTP factor (grown before each run) and its probe's answer, made on first use. */
  secondFactor?: { logins: TotpLogins; probe: Awaited<ReturnType<typeof probeSecondFactorLogin>> };
  /** S6p's users with a passkey and its probe's answer, made on first use. */
  passkeys?: { logins: PasskeyLogins; probe: Awaited<ReturnType<typeof probePasskeyLogin>> };
}

/** The peers of the same run (bench/peers/*.ts). */
export type PeerName = 'oidc-provider' | 'better-auth';

/** A peer (bench/peers/*.ts) as the peer half of a scenario sees it. */
export interface PeerContext extends MachineSide {
  kind: 'peer';
  name: PeerName;
  /** Scenarios the peer does not offer, and why: reported as "not offered", never measured. */
  notOffered?: Partial<Record<ScenarioId, string>>;
  /** http://127.0.0.1:PORT */
  base: string;
  fixture: PeerFixture;
  /** Operations per second already measured for a scenario on the peer. */
  measured: Partial<Record<ScenarioId, number>>;
  /** An access token of the peer's, for its S1 (made on first use). */
  accessToken?: string;
  /** The peer's front channel as probed (its own login interaction), for its S3–S6. */
  frontChannel: FrontChannel;
  /** An access token of the peer's account from a code exchange (scope openid profile email), for its S2. */
  userAccessToken?: string;
}

export interface Prepared {
  requests: autocannon.Request[];
  /** Overrides the scenario's opStatus (S6: whatever status the login answered in the probe). */
  opStatus?: number;
  /** Overrides the scenario's ok statuses (the peer's S5 answers 303 where gatehouse answers 302). */
  ok?: number[];
  /** Completed operations, counted by the scenario's own requests (the peer's S6: redirects to the client with a code). */
  operations?: () => number;
  /**
   * End the run after this many requests instead of after the duration: a pool sized from an
   * estimate of the rate is then used up exactly, however the rate turns out.
   */
  amount?: number;
  /** Called after the run: a warning when a pool ran dry. */
  after?: () => string | undefined;
  /**
   * Responses with the operation's status whose body is not the expected one (S9: a 400 whose
   * `error` is not `authorization_pending`): taken off the operations and counted as unexpected.
   */
  mismatches?: () => number;
  /** Said about a measured round in the log and the JSON (S8: its pool against the expected rate). */
  note?: string;
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
  /**
   * Another scenario of the same suite this one is compared with, and the least ratio of their
   * operations per second (issue 13: S3j against S3, the same grant with one more signature; S10
   * against S1, the same introspection with a five-claim policy).
   */
  versus?: { id: ScenarioId; target: number };
  /**
   * Settings of a second gatehouse server, started beside the first on the same store and core,
   * that this scenario runs on instead (issue 14: S3a and S7a, S3 and S7 with the audit store off).
   */
  serverEnv?: Record<string, string>;
  /** The same operation on the peer, measured in the same run (issue 12, "Speed"). */
  peer?: {
    /** Minimum ratio of gatehouse's operations per second to the peer's; undefined: reported only. */
    target?: number;
    prepare(ctx: PeerContext, seconds: number): Promise<Prepared | string>;
  };
}

const FORM = 'application/x-www-form-urlencoded';
/** autocannon's connections unless --connections says otherwise (sizes S9's pool; more connections only add margin). */
const DEFAULT_CONNECTIONS = 16;
/** S6's and S6t's connections: enough to keep libuv's four hashing threads busy. */
const LOGIN_CONNECTIONS = 8;

function form(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}

/** Requests drawing one value each from `pool`; an exhausted pool sends an invalid value (a visible 400). */
function fromPool(pool: string[], build: (value: string) => autocannon.Request): { request: autocannon.Request; after: () => string | undefined } {
  let next = 0;
  let dry = 0;
  return {
    request: {
      // Spread over autocannon's own request so that it keeps the Host header it derives from the
      // URL (a request built from scratch gets "Host: undefined:undefined", which the peer cannot
      // turn into its endpoint URLs).
      setupRequest: (request) => {
        const value = pool[next++];
        if (value === undefined) dry++;
        return { ...request, ...build(value ?? 'exhausted') };
      },
    },
    after: () => (dry > 0 ? `pool of ${pool.length} ran dry (${dry} requests sent an invalid value)` : undefined),
  };
}

/** The server's name in "S7: gatehouse has no client_credentials grant yet". */
function serverName(side: ScenarioContext | PeerContext): string {
  return side.kind === 'gatehouse' ? 'gatehouse' : `the peer (${side.name})`;
}

/** A path (and query) with one query parameter replaced. */
function withParam(path: string, name: string, value: string): string {
  const url = new URL(path, 'http://host');
  url.searchParams.set(name, value);
  return `${url.pathname}${url.search}`;
}

/** Each code exchanged at `tokenEndpoint` by `client` (client_secret_basic), `concurrency` in flight: the token responses. */
async function exchangeCodes(tokenEndpoint: string, client: ClientCredentials, codes: string[], concurrency = 24): Promise<{ access_token?: string; refresh_token?: string }[]> {
  const out: { access_token?: string; refresh_token?: string }[] = [];
  let next = 0;
  const lane = async () => {
    while (next < codes.length) {
      const code = codes[next++]!;
      const response = await fetch(tokenEndpoint, { method: 'POST', headers: { 'content-type': FORM, authorization: client.basic }, body: form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }) });
      const body = (await response.json()) as { access_token?: string; refresh_token?: string; error?: string };
      if (!response.ok) throw new Error(`the code exchange answered ${response.status}: ${JSON.stringify(body)}`);
      out.push(body);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, codes.length) }, lane));
  return out;
}

/**
 * The peer's S3 and S3-ES: as gatehouse's rounds, codes from its authorization endpoint with the
 * probe's SSO session, as many as the warm-up's rate says a round uses (the warm-up: from R2).
 */
async function peerCodeExchange(side: PeerContext, seconds: number, id: ScenarioId, client: ClientCredentials): Promise<Prepared | string> {
  const front = side.frontChannel;
  if (!front.available) return `${id}: ${front.reason}`;
  const tokenEndpoint = side.discovery?.token_endpoint;
  if (!tokenEndpoint) return `${id}: the peer names no token_endpoint`;
  const rate = side.warmedUp[id] || undefined;
  const count = Math.ceil((rate ?? (side.ceilings.R2 ?? 1000) * 0.5 * side.serverCores) * seconds * 1.2) + 100;
  const codes = await mintCodesViaAuthorization(side.base, { ...front, authorizePath: withParam(front.authorizePath, 'client_id', client.clientId) }, count);
  const { request, after } = fromPool(codes, (code) => ({
    method: 'POST',
    path: pathOf(tokenEndpoint),
    headers: { 'content-type': FORM, authorization: client.basic },
    body: form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }),
  }));
  return { requests: [request], after, ...(rate !== undefined ? { amount: codes.length } : {}) };
}

/** The peer's S2: its UserInfo endpoint with the Bearer access token of one code exchange. */
async function peerUserinfo(side: PeerContext): Promise<Prepared | string> {
  const front = side.frontChannel;
  if (!front.available) return `S2: ${front.reason}`;
  const { token_endpoint: tokenEndpoint, userinfo_endpoint: userinfo } = side.discovery ?? {};
  if (!tokenEndpoint || !userinfo) return 'S2: the peer names no token_endpoint or userinfo_endpoint';
  if (side.userAccessToken === undefined) {
    const [code] = await mintCodesViaAuthorization(side.base, front, 1, 1);
    side.userAccessToken = (await exchangeCodes(tokenEndpoint, side.fixture.rp, [code!]))[0]?.access_token;
  }
  return { requests: [{ method: 'GET', path: pathOf(userinfo), headers: { authorization: `Bearer ${side.userAccessToken}` } }] };
}

/**
 * The peer's S4 (gatehouse's S4b): rotating refresh tokens, each used once, from a pool made
 * before the run by code exchanges (the peer keeps its tokens in its own memory, not in a store
 * the bench could fill), sized from the warm-up's rate (the warm-up: from R1).
 */
async function peerRefresh(side: PeerContext, seconds: number): Promise<Prepared | string> {
  const front = side.frontChannel;
  if (!front.available) return `S4b: ${front.reason}`;
  const tokenEndpoint = side.discovery?.token_endpoint;
  if (!tokenEndpoint) return 'S4b: the peer names no token_endpoint';
  const rate = side.warmedUp.S4b || undefined;
  const count = Math.ceil((rate ?? (side.ceilings.R1 ?? 10_000) * 0.1 * side.serverCores) * seconds * 1.2) + 100;
  const started = performance.now();
  const codes = await mintCodesViaAuthorization(side.base, front, count);
  const tokens = (await exchangeCodes(tokenEndpoint, side.fixture.rp, codes)).map((t) => t.refresh_token).filter((t): t is string => t !== undefined);
  if (tokens.length === 0) return 'S4b: the peer issued no refresh token';
  const { request, after } = fromPool(tokens, (token) => ({
    method: 'POST',
    path: pathOf(tokenEndpoint),
    headers: { 'content-type': FORM, authorization: side.fixture.rp.basic },
    body: form({ grant_type: 'refresh_token', refresh_token: token }),
  }));
  return { requests: [request], after, ...(rate !== undefined ? { amount: tokens.length } : {}), note: `pool of ${tokens.length} refresh tokens made by as many authorizations and code exchanges in ${((performance.now() - started) / 1000).toFixed(1)} s before the run` };
}

/** The peer's S6: its own login interaction, one login per pass, counted at the redirect to the client with a code. */
function peerLogin(side: PeerContext): Prepared | string {
  const front = side.frontChannel;
  if (!front.available) return `S6: ${front.reason}`;
  let completed = 0;
  return { requests: loginFlow(front, side.fixture.login, () => completed++), opStatus: front.loginStatus, operations: () => completed };
}

function machineClients(side: ScenarioContext | PeerContext): MachineClients {
  return side.kind === 'gatehouse' ? side.machine : side.fixture;
}

/** S7 on either server: RFC 6749 §4.4.2, the client authenticated with HTTP Basic (§2.3.1). */
async function clientCredentialsBasic(side: ScenarioContext | PeerContext): Promise<Prepared | string> {
  const why = missing(side.discovery, serverName(side), { grant: 'client_credentials', authMethod: 'client_secret_basic' });
  if (why) return `S7: ${why}`;
  const client = machineClients(side).ccBasic;
  if (typeof client === 'string') return `S7: ${serverName(side)} ${client}`;
  return {
    requests: [{ method: 'POST', path: pathOf(side.discovery!.token_endpoint!), headers: { 'content-type': FORM, authorization: client.basic }, body: form({ grant_type: 'client_credentials' }) }],
  };
}

/**
 * S8 on either server: client_credentials with a client assertion (RFC 7523 §2.2; OIDC Core §9
 * private_key_jwt), `aud` the token endpoint. Each request spends one assertion of a pool signed
 * before the run: sized from the warm-up's rate for the rounds (which then end when it is used
 * up), from the ceilings for the warm-up.
 */
async function clientCredentialsJwt(side: ScenarioContext | PeerContext, seconds: number): Promise<Prepared | string> {
  const why = missing(side.discovery, serverName(side), { grant: 'client_credentials', authMethod: 'private_key_jwt' });
  if (why) return `S8: ${why}`;
  const client = machineClients(side).ccJwt;
  if (typeof client === 'string') return `S8: ${serverName(side)} ${client}`;
  // A warm-up that completed nothing (every request refused) says nothing about the rate.
  const rate = side.warmedUp.S8 || undefined;
  const estimate = Math.min(side.ceilings.R4 ?? 5000, (side.ceilings.R1 ?? 10_000) * 0.3) * side.serverCores;
  const size = rate !== undefined ? Math.ceil(rate * seconds * 1.2) + 100 : Math.ceil(estimate * seconds * 1.2) + 200;
  const tokenEndpoint = side.discovery!.token_endpoint!;
  const started = performance.now();
  const assertions = await mintAssertions(side.clientKey, client.clientId, tokenEndpoint, size);
  const signing = (performance.now() - started) / 1000;
  const { request, after } = fromPool(assertions, (assertion) => ({
    method: 'POST',
    path: pathOf(tokenEndpoint),
    headers: { 'content-type': FORM },
    body: form({ grant_type: 'client_credentials', client_id: client.clientId, client_assertion_type: ASSERTION_TYPE, client_assertion: assertion }),
  }));
  return {
    requests: [request],
    after,
    ...(rate !== undefined ? { amount: assertions.length } : {}),
    note: `pool of ${size} assertions for ${rate !== undefined ? `the warm-up's ${Math.round(rate)}/s` : `an estimated ${Math.round(estimate)}/s`} × ${seconds} s, signed in ${signing.toFixed(1)} s on the load generator's core before the round`,
  };
}

/**
 * More device codes than this are not requested (filling the pool takes 10–20 s at this size): at
 * gatehouse's 1 s interval it covers 12,500 polls/s. The peer names no interval, so its pool is
 * sized for RFC 8628's default of 5 s and hits this cap; it never answers slow_down anyway.
 */
const MAX_DEVICE_CODES = 50_000;

/**
 * S9 on either server: a device polling the token endpoint (RFC 8628 §3.4) before anyone has
 * entered its user code: every answer is 400 `authorization_pending` (§3.5). A code polled faster
 * than its interval would get `slow_down` instead, so the run polls a pool of pending codes
 * round-robin, large enough that at the rate of the previous run each is polled at most once per
 * 4 intervals (the rate comes in bursts, and one `slow_down` adds 5 s to that code's interval, so
 * the margin is wide); a code answered `slow_down` is retired from the pool. A `slow_down` (or any
 * other error) is counted as unexpected, never as an operation.
 */
async function devicePolling(side: ScenarioContext | PeerContext, seconds: number, connections: number): Promise<Prepared | string> {
  const why = missing(side.discovery, serverName(side), { grant: DEVICE_CODE_GRANT, endpoint: 'device_authorization_endpoint' });
  if (why) return `S9: ${why}`;
  const client = machineClients(side).device;
  if (typeof client === 'string') return `S9: ${serverName(side)} ${client}`;
  const endpoint = side.discovery!.device_authorization_endpoint!;
  const observedRate = side.deviceCodes?.observedRate;
  if (side.deviceCodes && side.deviceCodes.expiresAt < Date.now() + (seconds + 30) * 1000) side.deviceCodes = undefined;
  if (!side.deviceCodes) {
    const first = await requestDeviceCodes(endpoint, client.clientId, 64);
    // RFC 8628 §3.2: expires_in is required; the pool is dropped before its codes can expire.
    side.deviceCodes = { ...first, next: 0, retired: new Set(), expiresAt: Date.now() + first.expiresIn * 1000, ...(observedRate ? { observedRate } : {}) };
  }
  const pool = side.deviceCodes;
  // Sized from the responses per second of the previous run (the warm-up before the first round);
  // the warm-up's own pool from a guess, and any slow_down it gets is not reported.
  const rate = pool.observedRate ?? (side.ceilings.R1 ?? 10_000) * 0.1 * side.serverCores;
  const wanted = Math.min(MAX_DEVICE_CODES, Math.ceil(rate * pool.interval * 4) + 2 * connections + pool.retired.size);
  let note = `${pool.codes.length - pool.retired.size} pending device codes polled round-robin (interval ${pool.interval} s)`;
  if (pool.codes.length < wanted) {
    const started = performance.now();
    const more = await requestDeviceCodes(endpoint, client.clientId, wanted - pool.codes.length);
    pool.codes.push(...more.codes);
    pool.interval = Math.max(pool.interval, more.interval);
    note = `${pool.codes.length - pool.retired.size} pending device codes polled round-robin (interval ${pool.interval} s; ${more.codes.length} requested in ${((performance.now() - started) / 1000).toFixed(1)} s before the run)`;
  }
  let mismatched = 0;
  let slowDown = 0;
  let responses = 0;
  let first = 0;
  let last = 0;
  const tokenPath = pathOf(side.discovery!.token_endpoint!);
  return {
    requests: [
      {
        setupRequest: (request, context) => {
          let code = pool.codes[pool.next++ % pool.codes.length]!;
          for (let skipped = 0; pool.retired.has(code) && skipped < pool.codes.length; skipped++) code = pool.codes[pool.next++ % pool.codes.length]!;
          // One request in flight per connection: the connection's context names the code polled.
          context.code = code;
          return { ...request, method: 'POST', path: tokenPath, headers: { 'content-type': FORM }, body: form({ grant_type: DEVICE_CODE_GRANT, device_code: code, client_id: client.clientId }) };
        },
        onResponse: (status, body, context) => {
          last = performance.now();
          if (responses++ === 0) first = last;
          if (status !== 400) return;
          const error = errorOf(body);
          if (error === 'authorization_pending') return;
          mismatched++;
          if (error === 'slow_down') {
            slowDown++;
            if (typeof context.code === 'string') pool.retired.add(context.code);
          }
        },
      },
    ],
    mismatches: () => {
      if (responses > 1 && last > first) pool.observedRate = (responses - 1) / ((last - first) / 1000);
      return mismatched;
    },
    after: () => (slowDown ? `${slowDown} polls answered slow_down: the pool of ${pool.codes.length} codes was too small for the rate` : mismatched ? `${mismatched} 400s were not authorization_pending` : undefined),
    note,
  };
}

function errorOf(body: string): string | undefined {
  try {
    return (JSON.parse(body) as { error?: string }).error;
  } catch {
    return undefined;
  }
}

/** The peer's S1: introspection of a live access token (one of its client_credentials tokens). */
async function peerIntrospection(side: PeerContext): Promise<Prepared | string> {
  const endpoint = side.discovery?.introspection_endpoint;
  if (!endpoint || !side.discovery?.token_endpoint) return 'S1: the peer names no introspection_endpoint';
  side.accessToken ??= await clientCredentialsToken(side.discovery.token_endpoint, side.fixture.ccBasic);
  return { requests: [{ method: 'POST', path: pathOf(endpoint), headers: { 'content-type': FORM, authorization: side.fixture.rs.basic }, body: form({ token: side.accessToken }) }] };
}

async function clientCredentialsToken(tokenEndpoint: string, client: ClientCredentials): Promise<string> {
  const response = await fetch(tokenEndpoint, { method: 'POST', headers: { 'content-type': FORM, authorization: client.basic }, body: form({ grant_type: 'client_credentials' }) });
  const body = (await response.json()) as { access_token?: string };
  if (!response.ok || !body.access_token) throw new Error(`the peer's token endpoint answered ${response.status}: ${JSON.stringify(body)}`);
  return body.access_token;
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
    peer: { prepare: (side) => peerIntrospection(side) },
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
    peer: { prepare: (side) => peerUserinfo(side) },
  },
  {
    id: 'S3',
    name: 'authorization_code exchange (basic, RS256 ID token)',
    ceiling: 'R2',
    target: 0.7,
    ok: [200],
    opStatus: 200,
    hotPath: true,
    // Issue 14: what the audit store may cost, held against S3a (the store off) of the same run.
    versus: { id: 'S3a', target: 0.95 },
    prepare: (ctx, seconds) => prepareCodeExchange(ctx, seconds, 'S3', SCOPE),
    peer: { prepare: (side, seconds) => peerCodeExchange(side, seconds, 'S3', side.fixture.rp) },
  },
  {
    // Issue 27: S3 for a relying party whose ID tokens are signed with ES256, on both servers.
    id: 'S3-ES',
    name: 'authorization_code exchange as S3, ES256 ID token',
    ceiling: 'R2',
    target: 0.7,
    ok: [200],
    opStatus: 200,
    hotPath: true,
    prepare: (ctx, seconds) => prepareCodeExchange(ctx, seconds, 'S3-ES', SCOPE, ctx.fixture.rpEs),
    peer: { prepare: (side, seconds) => peerCodeExchange(side, seconds, 'S3-ES', side.fixture.rpEs) },
  },
  {
    // Issue 14: S3 on a second server with GATEHOUSE_AUDIT_STORE=off, so `S3 / S3a` of the same run
    // is what keeping audit events in the store costs a token exchange (docs/performance.md).
    id: 'S3a',
    name: 'authorization_code exchange as S3, audit store off (reference for S3)',
    ceiling: 'R2',
    target: 0.7,
    ok: [200],
    opStatus: 200,
    hotPath: true,
    serverEnv: { GATEHOUSE_AUDIT_STORE: 'off' },
    prepare: (ctx, seconds) => prepareCodeExchange(ctx, seconds, 'S3a', SCOPE),
  },
  {
    id: 'S3j',
    name: 'authorization_code exchange as S3, the access token a JWT (RFC 9068, RS256)',
    ceiling: 'R2',
    // S3's target with the one more signature the issue allows (0.85 × 0.7); what it is held to is `versus`.
    target: 0.6,
    ok: [200],
    opStatus: 200,
    hotPath: true,
    versus: { id: 'S3', target: 0.85 },
    // The scope names a resource server registered with access_token_format jwt: the access token is
    // a JWT, signed after the unit of work and keyed by its hash in one more statement (docs/decisions.md
    // JA6), beside the ID token's signature.
    prepare: (ctx, seconds) => prepareCodeExchange(ctx, seconds, 'S3j', `${SCOPE} ${ctx.fixture.jwtRs.clientId}`),
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
    peer: { prepare: (side, seconds) => peerRefresh(side, seconds) },
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
    peer: {
      async prepare({ frontChannel }) {
        if (!frontChannel.available) return `S5: ${frontChannel.reason}`;
        return { requests: [{ method: 'GET', path: frontChannel.authorizePath, headers: { cookie: frontChannel.sessionCookie } }], opStatus: frontChannel.ssoStatus, ok: [frontChannel.ssoStatus] };
      },
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
    connections: LOGIN_CONNECTIONS,
    async prepare({ frontChannel, fixture }) {
      if (!frontChannel.available) return `not yet measurable: ${frontChannel.reason}`;
      return { requests: loginFlow(frontChannel, fixture.login), opStatus: frontChannel.loginStatus };
    },
    peer: { prepare: async (side) => peerLogin(side) },
  },
  {
    // Issue 24: S6's login for users with a TOTP factor — the password, the second factor's page,
    // the code — held against S6 of the same run (what the second factor costs a login).
    id: 'S6t',
    name: 'password + TOTP login (GET authorization, POST password, POST code, 303)',
    ceiling: 'R3',
    // About S6's target with the second step's share the `versus` target allows (0.85 × 0.9 ≈ 0.77);
    // provisional (the issue sets none): what it is held to is `versus`.
    target: 0.75,
    ok: [200, 302, 303],
    opStatus: 303,
    hotPath: false,
    connections: LOGIN_CONNECTIONS,
    versus: { id: 'S6', target: 0.85 },
    prepare: (ctx) => prepareSecondFactorLogin(ctx),
  },
  {
    // Issue 24: a username-less passkey login — the login page, the passkey options, the signed
    // answer — held against S6 of the same run: no argon2id, one ES256 verification instead.
    id: 'S6p',
    name: 'passkey login without a username (GET authorization, POST options, POST assertion, 303)',
    ceiling: 'R3',
    // Provisional (the issue sets none, "a fraction of a password login"): at least S6's rate, per `versus`.
    target: 0.9,
    ok: [200, 302, 303],
    opStatus: 303,
    hotPath: false,
    connections: LOGIN_CONNECTIONS,
    versus: { id: 'S6', target: 1 },
    prepare: (ctx) => preparePasskeyLogin(ctx),
  },
  {
    id: 'S7',
    name: 'client_credentials grant (client_secret_basic)',
    ceiling: 'R1',
    target: 0.15,
    ok: [200],
    opStatus: 200,
    hotPath: true,
    versus: { id: 'S7a', target: 0.95 },
    prepare: (ctx) => clientCredentialsBasic(ctx),
    peer: { target: 2, prepare: (side) => clientCredentialsBasic(side) },
  },
  {
    // Issue 14: S7 with GATEHOUSE_AUDIT_STORE=off; the cheapest grant, so the store's share is largest.
    id: 'S7a',
    name: 'client_credentials grant as S7, audit store off (reference for S7)',
    ceiling: 'R1',
    target: 0.15,
    ok: [200],
    opStatus: 200,
    hotPath: true,
    serverEnv: { GATEHOUSE_AUDIT_STORE: 'off' },
    prepare: (ctx) => clientCredentialsBasic(ctx),
  },
  {
    id: 'S8',
    name: 'client_credentials grant (private_key_jwt, ES256)',
    ceiling: 'R4',
    target: 0.5,
    ok: [200],
    opStatus: 200,
    hotPath: true,
    prepare: (ctx, seconds) => clientCredentialsJwt(ctx, seconds),
    peer: { target: 2, prepare: (side, seconds) => clientCredentialsJwt(side, seconds) },
  },
  {
    id: 'S9',
    name: 'device flow polling (400 authorization_pending)',
    ceiling: 'R1',
    target: 0.15,
    ok: [400],
    opStatus: 400,
    hotPath: true,
    prepare: (ctx, seconds) => devicePolling(ctx, seconds, DEFAULT_CONNECTIONS),
    peer: { prepare: (side, seconds) => devicePolling(side, seconds, DEFAULT_CONNECTIONS) },
  },
  {
    // Issue 13, "Speed": S1's introspection, for a token whose client has an authorization policy
    // releasing five claims (bench/lib/fixtures.ts benchPolicy): the policy costs one statement.
    id: 'S10',
    name: 'introspection, client with a five-claim policy',
    ceiling: 'R1',
    target: 0.35,
    ok: [200],
    opStatus: 200,
    hotPath: true,
    versus: { id: 'S1', target: 0.9 },
    async prepare({ base, fixture }) {
      const request = { method: 'POST', path: '/uas/oauth2/introspection', headers: { 'content-type': FORM, authorization: fixture.rs.basic }, body: form({ token: fixture.policyAccessToken }) } as const;
      // The five claims must be there, or the figure measures something else.
      const probe = (await (await fetch(`${base}${request.path}`, { method: 'POST', headers: request.headers, body: request.body })).json()) as Record<string, unknown>;
      const missing = ['department', 'groups', 'org', 'mail', 'tenant'].filter((claim) => !(claim in probe));
      if (missing.length > 0) return `S10: introspection lacks the policy's claims ${missing.join(', ')}`;
      return { requests: [request] };
    },
  },
];

/**
 * S6t: each pass logs in a user of the pool (bench/lib/totp-logins.ts) who has not logged in during
 * the current 30-second step. The pool is grown before each run to 1.5 × a step's logins at the
 * best rate known (the warm-up's for the rounds; S6's or R3's for the warm-up), never shrunk.
 */
async function prepareSecondFactorLogin(ctx: ScenarioContext): Promise<Prepared | string> {
  const { frontChannel } = ctx;
  if (!frontChannel.available) return `not yet measurable: ${frontChannel.reason}`;
  const rate = ctx.warmedUp.S6t || ctx.measured.S6 || (ctx.ceilings.R3 ?? 100) * ctx.serverCores;
  const logins = ctx.secondFactor?.logins ?? (await TotpLogins.create());
  const started = performance.now();
  const before = logins.size;
  await logins.growTo(ctx.store, TotpLogins.sizeFor(rate, LOGIN_CONNECTIONS));
  const seeded = logins.size > before ? `; ${logins.size - before} added in ${((performance.now() - started) / 1000).toFixed(1)} s before the run` : '';
  ctx.secondFactor ??= { logins, probe: await probeSecondFactorLogin(ctx.base, frontChannel, logins) };
  const { probe } = ctx.secondFactor;
  if (!probe.available) return `not yet measurable: ${probe.reason}`;
  const dryBefore = logins.dry;
  return {
    requests: secondFactorLoginFlow(frontChannel, logins),
    opStatus: probe.status,
    after: () => (logins.dry > dryBefore ? `${logins.dry - dryBefore} passes found no user free in their time step (pool of ${logins.size}): they sent no credentials` : undefined),
    note: `${logins.size} users with a TOTP factor, each logging in at most once per 30-s step${seeded}`,
  };
}

/** S6p: each pass signs in, without a username, the next user of a pool of passkey users (bench/lib/passkey-logins.ts). */
async function preparePasskeyLogin(ctx: ScenarioContext): Promise<Prepared | string> {
  const { frontChannel } = ctx;
  if (!frontChannel.available) return `not yet measurable: ${frontChannel.reason}`;
  // The page's origin, as the browser would put it in clientDataJSON: the issuer's.
  const origin = new URL(ctx.discovery?.issuer ?? ctx.base).origin;
  if (ctx.passkeys === undefined) {
    const logins = new PasskeyLogins();
    await logins.growTo(ctx.store, PASSKEY_USERS);
    ctx.passkeys = { logins, probe: await probePasskeyLogin(ctx.base, frontChannel, logins, origin) };
  }
  const { logins, probe } = ctx.passkeys;
  if (!probe.available) return `not yet measurable: ${probe.reason}`;
  return { requests: passkeyLoginFlow(frontChannel, logins, origin), opStatus: probe.status, note: `${logins.size} users with a passkey, taken in turn` };
}

/** S6p's pool: many more users than connections, so concurrent passes touch different rows. */
const PASSKEY_USERS = 256;

/** An authorization request of the rp for `endpointPath` (the discovery document's authorization_endpoint). */
/**
 * S3 and S3j: the rounds get codes as a relying party does, from the authorization endpoint with
 * an SSO session, as many as the warm-up's rate says a round uses. The warm-up (and any run before
 * the front channel exists) gets codes put straight into the store, as many as the signing ceiling
 * allows, since every exchange signs one ID token.
 */
async function prepareCodeExchange(
  { base, store, fixture, frontChannel, ceilings, serverCores, warmedUp }: ScenarioContext,
  seconds: number,
  id: ScenarioId,
  scope: string,
  client: ClientCredentials = fixture.rp,
): Promise<Prepared> {
  const rate = warmedUp[id];
  const viaAuthorization = frontChannel.available && rate !== undefined;
  const codes = viaAuthorization
    ? await mintCodesViaAuthorization(base, { ...frontChannel, authorizePath: withParam(withScope(frontChannel.authorizePath, scope), 'client_id', client.clientId) }, Math.ceil(rate * seconds * 1.2) + 100)
    : await mintCodes(store, fixture, Math.ceil((ceilings.R2 ?? 2000) * serverCores * seconds * 1.3) + 500, scope, client.clientId);
  const { request, after } = fromPool(codes, (code) => ({
    method: 'POST',
    path: '/uas/oauth2/token',
    headers: { 'content-type': FORM, authorization: client.basic },
    body: form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }),
  }));
  return { requests: [request], after, ...(viaAuthorization ? { amount: codes.length } : {}) };
}

/** An authorization request path (path and query) with its scope replaced. */
function withScope(path: string, scope: string): string {
  const url = new URL(path, 'http://host');
  url.searchParams.set('scope', scope);
  return `${url.pathname}${url.search}`;
}

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
