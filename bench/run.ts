/**
 * `npm run bench`: gatehouse under load, next to the ceilings of the same machine (issue 6).
 *
 * This process is the load generator (autocannon) and the conductor. With two or more cores it
 * pins itself to core 1 and every server and ceiling to core 0, so one-core figures are true
 * one-core figures. It measures R2 (RS256 signatures/s), R3 (argon2id hashes/s) and R1 (a bare
 * node:http server), then starts gatehouse (`node src/main.ts`, its own process) on a fresh SQLite
 * store — and on PostgreSQL when GATEHOUSE_BENCH_POSTGRES_URL is set — and runs the scenarios in
 * bench/lib/scenarios.ts: warm-up, then rounds whose medians are reported with their ratio to the
 * ceiling. The scenarios that have a peer half (S1–S9, S3-ES) run again on each peer,
 * node-oidc-provider and better-auth (bench/peers/*.ts), started and pinned the same way, right
 * after gatehouse, so that gatehouse is compared with them in the same run; R5 (node:http + SHA-256
 * + one SQLite point read) is measured beside R1. Then the same server with 1 and 2 workers,
 * unpinned, for cluster scaling.
 *
 *   npm run bench                  full run (about 16 minutes with PostgreSQL)
 *   npm run bench -- --quick       1 short round each (minutes with both peers; --no-peer: about a minute)
 *   npm run bench -- --profile     also a CPU profile of each scenario (node --cpu-prof), summarised
 *   npm run bench -- --scale=URL   introspection p99 on an empty store vs the store at URL (bench:seed)
 *   npm run bench -- --scale-out=3 1, 2, 3 instances on one PostgreSQL (S1, S3, S7)
 *   npm run bench -- --help
 *
 * Every process started here is ended on any exit (bench/lib/processes.ts).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { openStore } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { ARGON2_PARAMETERS } from '../src/identity/passwords.ts';
import type { Store } from '../src/storage/ports.ts';
import { generateClientKey, type ClientKey } from './lib/assertions.ts';
import { basic, REDIRECT_URI, SCOPE, seedFixture, seedMachineClients, type Fixture, type MachineClients } from './lib/fixtures.ts';
import { probeFrontChannel, type FrontChannel } from './lib/front-channel.ts';
import { runLoad, summarize, median, withMismatches, type RoundResult, type Summary } from './lib/load.ts';
import { cpuSeconds, freePort, hasTaskset, killAll, machineJiffies, onCleanup, pidsNamed, pinSelf, runNode, startNode, waitUntilReady, type Started } from './lib/processes.ts';
import { makePeerFixture, type PeerFixture } from './lib/peer.ts';
import { formatProfile, summarizeProfile, type ProfileSummary } from './lib/profile.ts';
import { discover } from './lib/protocol.ts';
import { authorizationEndpointPath, authorizePath, SCENARIOS, type CeilingId, type PeerContext, type PeerName, type Prepared, type Scenario, type ScenarioContext, type ScenarioId } from './lib/scenarios.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MAIN = join(ROOT, 'src/main.ts');
/** Node's flags in `npm start` (package.json), so the server runs exactly as a user starts it. */
const START_NODE_FLAGS = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start
  .split(/\s+/)
  .filter((word) => word.startsWith('--'));
const CEILINGS_DIR = join(ROOT, 'bench/ceilings');
/** A package's version as installed, or undefined when it is not (a peer whose package is missing is skipped). */
function installedVersion(name: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return undefined;
  }
}

/** A peer of the same run: a script of bench/peers/ started as gatehouse is, and how it is described. */
interface PeerSpec {
  name: PeerName;
  script: string;
  /** The package whose installed version is reported. */
  package: string;
  /** What keeps its state, for the report. */
  store: string;
  /** Its discovery document, relative to its base URL. */
  discoveryPath: string;
}

const PEERS: PeerSpec[] = [
  { name: 'oidc-provider', script: join(ROOT, 'bench/peers/oidc-provider.ts'), package: 'oidc-provider', store: 'in-memory adapter', discoveryPath: '/.well-known/openid-configuration' },
  { name: 'better-auth', script: join(ROOT, 'bench/peers/better-auth.ts'), package: 'better-auth', store: 'SQLite file (node:sqlite)', discoveryPath: '/.well-known/openid-configuration' },
];
/**
 * The published anchor of issue 12: Keycloak 26's sizing guide, 120 client-credentials grants/s per
 * vCPU. Another machine, another setup (TLS with a new connection per request, a 3-pod cluster,
 * Aurora PostgreSQL): printed beside S7 and S8 as a published reference, never as a same-run figure.
 */
const KEYCLOAK_ANCHOR = {
  perVcpu: 120,
  what: 'Keycloak 26: 120 client-credentials grants/s per vCPU',
  source: 'https://www.keycloak.org/high-availability/concepts-memory-and-cpu-sizing (AWS c7g, 3 pods, Aurora PostgreSQL, TLS with one request per connection)',
};
const RESULTS = join(ROOT, 'bench/results');

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    only: { type: 'string' },
    postgres: { type: 'string' },
    'no-postgres': { type: 'boolean', default: false },
    'no-pin': { type: 'boolean', default: false },
    'no-cluster': { type: 'boolean', default: false },
    'no-peer': { type: 'boolean', default: false },
    peers: { type: 'string' },
    profile: { type: 'boolean', default: false },
    scale: { type: 'string' },
    'scale-out': { type: 'string' },
    'server-node-options': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});

if (flags.help) {
  process.stdout.write(`npm run bench -- [options]
  --quick            1 round of 3 s per scenario, short ceilings (6.5 minutes with both peers on a busy
                     2-core machine; about a minute with --no-peer)
  --rounds N         rounds per scenario (default 3; quick 1)
  --duration S       seconds per round (default 10; quick 3)
  --warmup S         seconds of warm-up per scenario (default 2; quick 1)
  --connections N    concurrent connections (default 16; S6 and S6t use 8)
  --only S1,S3       run only these scenarios (S1–S6, S3j = S3 with a JWT access token; S3a and S7a = S3 and S7 on a
                     second server with GATEHOUSE_AUDIT_STORE=off, S3 and S7 reported ÷ them; S6t = S6's login for users
                     with a TOTP factor (password, then the code page, then a code made with otpauth), against
                     R3 like S6; S6p = a passkey login without a username (the login page, the passkey options,
                     an ES256 assertion of a software authenticator), against R3 and ÷ S6;
                     S7 client_credentials + client_secret_basic,
                     S8 client_credentials + private_key_jwt, S9 device-flow polling, S10 introspection
                     for a client with a five-claim authorization policy; S3j, S6t and S10 are also reported
                     ÷ S3, ÷ S6 and ÷ S1 of the same run; S3-ES = S3 with ES256 ID tokens; S1–S9 and
                     S3-ES also run on the peers, oidc-provider and better-auth, in the same run)
  --postgres URL     also on PostgreSQL (default: GATEHOUSE_BENCH_POSTGRES_URL); a fresh schema is made and dropped
  --no-postgres      ignore GATEHOUSE_BENCH_POSTGRES_URL
  --no-pin           do not pin server and load generator to separate cores
  --no-cluster       skip the 1-vs-2-worker scaling runs
  --no-peer          skip the peers (oidc-provider, better-auth)
  --profile          also profile each scenario with node --cpu-prof and summarise it
  --server-node-options "…"  NODE_OPTIONS for the gatehouse server (e.g. "--max-semi-space-size=4")
  --scale URL        only: introspection p99 on an empty store vs the seeded store at URL (npm run bench:seed)
  --scale-out N      only: 1, 2 … N gatehouse instances (one worker each, unpinned) on one PostgreSQL
                     (--postgres or GATEHOUSE_BENCH_POSTGRES_URL), S1, S3 and S7 on all at once; throughput
                     per added instance, and the CPU of the instances and of PostgreSQL
  --peers a,b        only these peers (oidc-provider, better-auth; default: every one installed)
Results: a table on stdout (then gatehouse against each peer, one table of ratios to the peers
and of S1/S2 to R5, Keycloak's published figure beside S7/S8 as a reference, and peak RSS per
scenario), JSON in bench/results/.
`);
  process.exit(0);
}

const quick = flags.quick;
const settings = {
  rounds: Number(flags.rounds ?? (quick ? 1 : 3)),
  duration: Number(flags.duration ?? (quick ? 3 : 10)),
  warmup: Number(flags.warmup ?? (quick ? 1 : 2)),
  connections: Number(flags.connections ?? 16),
  ceilingSeconds: quick ? 1 : 3,
  clusterScenarios: ['S1', 'S3'] as ScenarioId[],
  /** Seconds of each cluster-scaling round (one round per scenario and worker count). */
  clusterSeconds: quick ? 3 : 6,
};
const only = flags.only ? new Set(flags.only.split(',').map((s) => s.trim())) : undefined;
const postgresUrl = flags['no-postgres'] ? undefined : (flags.postgres ?? process.env.GATEHOUSE_BENCH_POSTGRES_URL);
// The server's default level unless asked otherwise: audit events are written, as users run it.
const logLevel = process.env.GATEHOUSE_BENCH_LOG_LEVEL ?? 'info';

const cores = availableParallelism();
const pinning = !flags['no-pin'] && cores >= 2 && hasTaskset();
const SERVER_CPU = '0';
const LOAD_CPU = '1';
const runId = new Date().toISOString().replace(/[:.]/g, '-');
const runDir = join(RESULTS, runId);
mkdirSync(runDir, { recursive: true });

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

function machine() {
  const cpuinfo = (() => {
    try {
      return readFileSync('/proc/cpuinfo', 'utf8');
    } catch {
      return '';
    }
  })();
  let nproc = cores;
  try {
    nproc = Number(execFileSync('nproc', { encoding: 'utf8' }).trim());
  } catch {
    // nproc missing: keep Node's count.
  }
  return {
    nproc,
    cpuModel: /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? cpus()[0]?.model ?? 'unknown',
    node: process.version,
    kernel: release(),
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    /** Other work on the machine skews every figure: the 1-minute load average when the run started. */
    loadAverage: Number(loadavg()[0]!.toFixed(2)),
    pinned: pinning ? `server and ceilings on core ${SERVER_CPU}, load generator on core ${LOAD_CPU}` : 'no pinning',
  };
}

// ---------------------------------------------------------------------------------------------
// Ceilings

interface CpuCeiling {
  perSecond: number;
  perCpuSecond: number;
  rounds: { perSecond: number; perCpuSecond: number }[];
}

async function cpuCeiling(script: string, args: string[] = []): Promise<CpuCeiling> {
  const rounds: CpuCeiling['rounds'] = [];
  for (let i = 0; i < settings.rounds; i++) rounds.push(await cpuCeilingRound(script, args));
  return { perSecond: median(rounds.map((r) => r.perSecond)), perCpuSecond: median(rounds.map((r) => r.perCpuSecond)), rounds };
}

async function cpuCeilingRound(script: string, args: string[] = []): Promise<CpuCeiling['rounds'][number]> {
  const out = await runNode([join(CEILINGS_DIR, script), '--seconds', String(settings.ceilingSeconds), ...args], { cpus: pinning ? SERVER_CPU : undefined });
  return JSON.parse(out.trim().split('\n').pop()!) as CpuCeiling['rounds'][number];
}

/**
 * R3 drifts with the host more than the other ceilings (argon2id is memory-bound: the day's runs
 * gave 86–129 hashes/s), so a login round is compared with R3 measured again just before it on the
 * same core, not only with the R3 of the run's start.
 */
const ADJACENT_CEILINGS: Partial<Record<CeilingId, string>> = { R3: 'argon2.ts' };

/** A reference server of bench/ceilings/ under load: R1 (bare node:http) or R5 (R1 + SHA-256 + one SQLite point read). */
interface HttpReference {
  script: string;
  env?: Record<string, string>;
  requests: { method: string; path: string; headers?: Record<string, string>; body?: string }[];
}

const R1_REFERENCE: HttpReference = { script: 'bare-http.ts', requests: [{ method: 'GET', path: '/' }] };

/** R5 (issue 27): the token is sent as S1 sends its own, in a form body; the server keeps its SQLite file in the run's directory. */
function r5Reference(): HttpReference {
  const token = randomBytes(32).toString('base64url');
  const database = join(runDir, 'r5.db');
  onCleanup(() => {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${database}${suffix}`, { force: true });
  });
  return {
    script: 'stateful-http.ts',
    env: { BENCH_R5_DATABASE: database, BENCH_R5_TOKEN: token },
    requests: [{ method: 'POST', path: '/introspect', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token }).toString() }],
  };
}

async function bareHttpCeiling(options: { rounds: number; profileDir?: string; onRoundStart?: (spawnedAt: number) => void; reference?: HttpReference } = { rounds: settings.rounds }): Promise<Summary> {
  const reference = options.reference ?? R1_REFERENCE;
  const port = await freePort();
  const spawnedAt = performance.now();
  const nodeArgs = options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`] : [];
  const started = startNode([...nodeArgs, join(CEILINGS_DIR, reference.script)], { cpus: pinning ? SERVER_CPU : undefined, env: { PORT: String(port), ...reference.env }, onStdout: () => {} });
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitUntilReady(`${base}/`, started);
    const load = { base, requests: reference.requests, connections: settings.connections, ok: [200], opStatus: 200, serverPid: started.pid };
    await runLoad({ ...load, seconds: settings.warmup });
    options.onRoundStart?.(spawnedAt);
    const rounds: RoundResult[] = [];
    for (let i = 0; i < options.rounds; i++) rounds.push(await runLoad({ ...load, seconds: settings.duration }));
    return summarize(rounds);
  } finally {
    await started.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// Stores and servers

interface BenchStore {
  kind: 'sqlite' | 'postgres';
  url: string;
  dispose(): Promise<void>;
}

function sqliteStore(name: string): BenchStore {
  const path = join(runDir, `${name}.db`);
  const remove = () => {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
  };
  const forget = onCleanup(remove);
  return {
    kind: 'sqlite',
    url: `sqlite:${path}`,
    async dispose() {
      forget();
      remove();
    },
  };
}

/** A fresh schema in the given PostgreSQL database, dropped afterwards; never anything else. */
async function postgresStore(url: string, name: string): Promise<BenchStore> {
  const schema = `gatehouse_bench_${name}_${process.pid}_${Date.now()}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA "${schema}"`);
  } finally {
    await admin.end();
  }
  const scoped = new URL(url);
  scoped.searchParams.set('options', `-c search_path=${schema}`);
  return {
    kind: 'postgres',
    url: scoped.toString(),
    async dispose() {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

function openBenchStore(url: string): Promise<Store> {
  return openStore(loadConfig({ GATEHOUSE_DATABASE_URL: url, GATEHOUSE_DATABASE_POOL_SIZE: '8', GATEHOUSE_WORKERS: '1' }));
}

/** The safety limits the bench turns off (0: no limit), the same on every gatehouse it starts. */
const BENCH_LIMITS_OFF = {
  GATEHOUSE_SILENT_AUTHORIZATIONS_PER_SESSION: '0',
  GATEHOUSE_SILENT_AUTHORIZATIONS_PER_ADDRESS: '0',
  GATEHOUSE_DEVICE_AUTHORIZATIONS_PER_ADDRESS: '0',
  GATEHOUSE_PASSKEY_SIGN_INS_PER_ADDRESS: '0',
} as const;

interface Server {
  base: string;
  /** performance.now() when the process was spawned. */
  spawnedAt: number;
  started: Started;
  stop(): Promise<number | string>;
}

async function startGatehouse(url: string, options: { workers: number; pinned: boolean; profileDir?: string; env?: Record<string, string> }): Promise<Server> {
  const port = await freePort();
  const spawnedAt = performance.now();
  const nodeArgs = options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`] : [];
  const started = startNode([...nodeArgs, ...START_NODE_FLAGS, MAIN], {
    cpus: options.pinned ? SERVER_CPU : undefined,
    env: {
      GATEHOUSE_HOST: '127.0.0.1',
      GATEHOUSE_PORT: String(port),
      GATEHOUSE_DATABASE_URL: url,
      GATEHOUSE_WORKERS: String(options.workers),
      GATEHOUSE_LOG_LEVEL: logLevel,
      GATEHOUSE_ISSUER: `http://127.0.0.1:${port}/uas`,
      // The safety limits are off in the bench (issue 27 §4; docs/performance.md, "Round 2: peers in
      // the same run"): one load generator on one address with one SSO session makes every silent
      // authorization (S3's codes, S5), every device authorization (S9's pool) and every passkey
      // sign-in (S6p), which the limits exist to refuse. 0 is "no limit" for each (docs/config.md);
      // no limiter row is read or written, and neither peer has such limits.
      ...BENCH_LIMITS_OFF,
      // S9 polls pending device codes round-robin, each at most once per interval: the shortest
      // interval gatehouse allows (1 s) keeps that pool small. The interval's rule (slow_down)
      // is still checked on every poll.
      GATEHOUSE_DEVICE_CODE_INTERVAL: '1',
      ...(flags['server-node-options'] ? { NODE_OPTIONS: flags['server-node-options'] } : {}),
      ...options.env,
    },
  });
  const base = `http://127.0.0.1:${port}`;
  await waitUntilReady(`${base}/health/ready`, started);
  return { base, spawnedAt, started, stop: () => started.stop() };
}

// ---------------------------------------------------------------------------------------------
// Scenarios

interface ScenarioResult {
  id: ScenarioId;
  name: string;
  /** Whose figures these are: gatehouse, or a peer of the same run. */
  server: 'gatehouse' | PeerName;
  store: string;
  workers: number;
  pinned: boolean;
  ceiling: CeilingId;
  target: number;
  status: 'measured' | 'unavailable';
  reason?: string;
  summary?: Summary;
  /** The ceiling measured again just before each round (ADJACENT_CEILINGS), which the ratios then use. */
  adjacentCeiling?: CpuCeiling;
  /** opsPerSec / the ceiling's rate: both measured on one core, in the same run. */
  ratio?: number;
  /**
   * opsPerCpuSecond / the ceiling's per-CPU-second rate: the same comparison freed from what the
   * raw rates also measure (a load generator that cannot saturate R1; other processes).
   */
  cpuRatio?: number;
  /** What the scenario said about its measured rounds (S8: the size of its pool against the rate). */
  notes?: string[];
}

/** Ceilings per second and per CPU-second of the server's core, measured in this run. */
const ceilings: Partial<Record<CeilingId, number>> = {};
const capacities: Partial<Record<CeilingId, number>> = {};

function selected(scenarios: Scenario[]): Scenario[] {
  return scenarios.filter((s) => !only || only.has(s.id));
}

async function runScenario(
  scenario: Scenario,
  ctx: ScenarioContext | PeerContext,
  server: Pick<Server, 'base' | 'started'>,
  label: { store: string; workers: number; pinned: boolean },
  rounds: number,
  onRoundStart?: () => void,
  seconds = settings.duration,
): Promise<ScenarioResult> {
  const base: ScenarioResult = { id: scenario.id, name: scenario.name, server: ctx.kind === 'peer' ? ctx.name : 'gatehouse', ...label, ceiling: scenario.ceiling, target: scenario.target, status: 'unavailable' };
  const notOffered = ctx.kind === 'peer' ? ctx.notOffered?.[scenario.id] : undefined;
  if (notOffered !== undefined) return { ...base, reason: `not offered: ${notOffered}` };
  const connections = scenario.connections ?? settings.connections;
  const notes: string[] = [];
  const once = async (seconds: number, measured: boolean): Promise<RoundResult | string> => {
    const prepared = ctx.kind === 'peer' ? await scenario.peer!.prepare(ctx, seconds) : await scenario.prepare(ctx, seconds);
    if (typeof prepared === 'string') return prepared;
    if (measured) onRoundStart?.();
    if (measured && prepared.note) notes.push(prepared.note);
    const loaded = await runLoad({
      base: server.base,
      requests: prepared.requests,
      seconds,
      amount: prepared.amount,
      connections,
      ok: prepared.ok ?? scenario.ok,
      opStatus: prepared.opStatus ?? scenario.opStatus,
      serverPid: server.started.pid,
      ...(prepared.operations ? { operations: prepared.operations } : {}),
    });
    const result = prepared.mismatches ? withMismatches(loaded, prepared.mismatches()) : loaded;
    const warning = prepared.after?.();
    return warning ? { ...result, warning } : result;
  };
  const warm = await once(settings.warmup, false);
  if (typeof warm === 'string') return { ...base, reason: warm };
  ctx.warmedUp[scenario.id] = warm.opsPerSec;
  const results: RoundResult[] = [];
  const adjacentScript = label.pinned ? ADJACENT_CEILINGS[scenario.ceiling] : undefined;
  const adjacent: CpuCeiling['rounds'] = [];
  for (let i = 0; i < rounds; i++) {
    if (adjacentScript) adjacent.push(await cpuCeilingRound(adjacentScript));
    const r = await once(seconds, true);
    if (typeof r === 'string') return { ...base, reason: r };
    results.push(r);
  }
  const summary = summarize(results);
  ctx.measured[scenario.id] = summary.opsPerSec;
  const ceiling = adjacent.length ? median(adjacent.map((r) => r.perSecond)) : ceilings[scenario.ceiling];
  const capacity = adjacent.length ? median(adjacent.map((r) => r.perCpuSecond)) : capacities[scenario.ceiling];
  return {
    ...base,
    status: 'measured',
    summary,
    // Each round notes its pool; rounds of one scenario usually note the same one.
    ...(notes.length ? { notes: [...new Set(notes)] } : {}),
    ...(adjacent.length ? { adjacentCeiling: { perSecond: ceiling!, perCpuSecond: capacity!, rounds: adjacent } } : {}),
    ratio: ceiling ? summary.opsPerSec / ceiling : undefined,
    cpuRatio: capacity && summary.opsPerCpuSecond ? summary.opsPerCpuSecond / capacity : undefined,
  };
}

/** What the scenarios need of one running gatehouse: its front channel as probed, its discovery document, the fixture. */
async function gatehouseContext(server: Server, storeHandle: Store, fixture: Fixture, machine: MachineClients, serverCores: number): Promise<ScenarioContext> {
  const endpoint = await authorizationEndpointPath(server.base);
  const frontChannel: FrontChannel = endpoint
    ? await probeFrontChannel(server.base, authorizePath(fixture, 'bench', endpoint), fixture.login)
    : { available: false, reason: 'the discovery document names no authorization_endpoint' };
  return {
    kind: 'gatehouse',
    base: server.base,
    store: storeHandle,
    fixture,
    frontChannel,
    ceilings,
    measured: {},
    warmedUp: {},
    serverCores,
    machine,
    discovery: await discover(server.base, '/uas/.well-known/openid-configuration'),
    clientKey: await clientKey(),
  };
}

async function withServer<T>(
  store: BenchStore,
  options: { workers: number; pinned: boolean; profileDir?: string; env?: Record<string, string> },
  work: (server: Server, ctx: ScenarioContext, variant: (env: Record<string, string>) => Promise<{ server: Server; ctx: ScenarioContext }>) => Promise<T>,
): Promise<{ value: T; exit: number | string }> {
  const storeHandle = await openBenchStore(store.url);
  const variants = new Map<string, Promise<{ server: Server; ctx: ScenarioContext }>>();
  try {
    const fixture = await seedFixture(storeHandle);
    const machine = await seedMachineClients(storeHandle, (await clientKey()).publicJwk);
    const contextOf = (server: Server) => gatehouseContext(server, storeHandle, fixture, machine, options.pinned ? 1 : Math.min(options.workers, cores));
    // A second server with other settings (Scenario.serverEnv), on the same store and core, started
    // once when a scenario first asks for it; the idle one of the two costs nothing.
    const variant = (env: Record<string, string>) => {
      const key = JSON.stringify(env);
      let started = variants.get(key);
      if (!started) {
        started = (async () => {
          const server = await startGatehouse(store.url, { ...options, profileDir: undefined, env: { ...options.env, ...env } });
          return { server, ctx: await contextOf(server) };
        })();
        variants.set(key, started);
      }
      return started;
    };
    const server = await startGatehouse(store.url, options);
    let value: T;
    try {
      value = await work(server, await contextOf(server), variant);
    } catch (error) {
      await server.stop();
      throw error;
    }
    const exit = await server.stop();
    return { value, exit };
  } finally {
    for (const started of variants.values()) await (await started.catch(() => undefined))?.server.stop();
    await storeHandle.close();
  }
}

let sharedClientKey: Promise<ClientKey> | undefined;

/** S8's client key: one per run, registered with gatehouse's client and the peer's alike. */
function clientKey(): Promise<ClientKey> {
  sharedClientKey ??= generateClientKey();
  return sharedClientKey;
}

/** A peer up beside gatehouse: its process and its context for the scenarios' peer halves. */
interface PeerSide {
  spec: PeerSpec;
  version: string;
  server: Pick<Server, 'base' | 'started'>;
  ctx: PeerContext;
}

/**
 * A peer started as gatehouse is: its own process with the node flags of `npm start`, pinned to
 * the server's core, NODE_ENV=production as it would be deployed. Its front channel is probed as
 * gatehouse's: its authorization endpoint without a session leads to its login, and the login's
 * session then gets codes silently. What it does not offer it says on its stdout's last line
 * (`{"notOffered": {"S6": "why"}}`), read once it is ready.
 */
async function startPeer(spec: PeerSpec, version: string): Promise<PeerSide> {
  const key = await clientKey();
  const fixture = makePeerFixture(key.publicJwk);
  const port = await freePort();
  let stdout = '';
  const started = startNode([...START_NODE_FLAGS, spec.script], {
    cpus: pinning ? SERVER_CPU : undefined,
    env: { PORT: String(port), BENCH_PEER_FIXTURE: JSON.stringify(fixture.config), BENCH_PEER_DIR: runDir, NODE_ENV: 'production' },
    onStdout: (chunk) => (stdout += chunk),
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitUntilReady(`${base}${spec.discoveryPath}`, started);
    const said = stdout.trim().split('\n').pop();
    const told = said ? (JSON.parse(said) as PeerSays) : {};
    const notOffered = told.notOffered ?? {};
    // A peer that makes up its clients' ids and secrets itself (better-auth) says them.
    if (told.clients) Object.assign(fixture, peerClients(told.clients));
    const discovery = await discover(base, spec.discoveryPath);
    const authorize = discovery?.authorization_endpoint
      ? `${new URL(discovery.authorization_endpoint).pathname}?${new URLSearchParams({ response_type: 'code', client_id: fixture.rp.clientId, redirect_uri: REDIRECT_URI, scope: told.authorizeScope ?? SCOPE, state: 'bench', nonce: 'n-0S6_WzA2Mj' })}`
      : undefined;
    const frontChannel: FrontChannel = authorize ? await probeFrontChannel(base, authorize, fixture.login) : { available: false, reason: `${spec.name} names no authorization_endpoint` };
    if (!frontChannel.available) log(`   ${spec.name}'s S2–S6: ${frontChannel.reason}`);
    const ctx: PeerContext = {
      kind: 'peer',
      name: spec.name,
      base,
      fixture,
      ceilings,
      measured: {},
      warmedUp: {},
      serverCores: pinning ? 1 : cores,
      discovery,
      clientKey: key,
      frontChannel,
      notOffered,
    };
    return { spec, version, server: { base, started }, ctx };
  } catch (error) {
    await started.stop();
    throw error;
  }
}

/** What a peer may say on its stdout's last line once ready. */
interface PeerSays {
  notOffered?: PeerContext['notOffered'];
  clients?: { ccBasic?: { clientId: string; secret: string }; rs?: { clientId: string; secret: string }; ccJwt?: { clientId: string }; rp?: { clientId: string; secret: string }; device?: { clientId: string } };
  /** The scope its front channel's authorization requests ask for (better-auth: offline_access too, for refresh tokens). */
  authorizeScope?: string;
}

function peerClients(clients: NonNullable<PeerSays['clients']>): Partial<PeerFixture> {
  return {
    ...(clients.ccBasic ? { ccBasic: { clientId: clients.ccBasic.clientId, basic: basic(clients.ccBasic.clientId, clients.ccBasic.secret) } } : {}),
    ...(clients.rs ? { rs: { clientId: clients.rs.clientId, basic: basic(clients.rs.clientId, clients.rs.secret) } } : {}),
    ...(clients.ccJwt ? { ccJwt: clients.ccJwt } : {}),
    ...(clients.device ? { device: clients.device } : {}),
    ...(clients.rp ? { rp: { clientId: clients.rp.clientId, basic: basic(clients.rp.clientId, clients.rp.secret) } } : {}),
  };
}

/** The peers asked for (--peers, default every installed one), each up for `work`, each stopped after. */
async function withPeers<T>(work: (peers: PeerSide[]) => Promise<T>): Promise<T> {
  const wanted = flags.peers ? new Set(flags.peers.split(',').map((s) => s.trim())) : undefined;
  const sides: PeerSide[] = [];
  try {
    for (const spec of PEERS) {
      if (wanted && !wanted.has(spec.name)) continue;
      const version = installedVersion(spec.package);
      if (!version) {
        log(`   ${spec.name} is not installed (npm ci installs the bench's dev dependencies): skipped`);
        continue;
      }
      sides.push(await startPeer(spec, version));
    }
    return await work(sides);
  } finally {
    for (const side of sides) {
      const exit = await side.server.started.stop();
      if (exit !== 0) log(`   warning: ${side.spec.name} exited with ${exit} on SIGTERM (expected 0)`);
    }
  }
}

function logResult(result: ScenarioResult): void {
  if (!result.summary) return log(`    ${result.reason}`);
  const s = result.summary;
  log(
    `    ${fmt(s.opsPerSec)} ops/s (${fmt(s.opsPerCpuSecond)}/CPU-s), p99 ${s.p99} ms, ratio ${fmt(result.ratio, 3)} (per CPU-s ${fmt(result.cpuRatio, 3)})` +
      `${result.adjacentCeiling ? ` to ${result.ceiling} measured before each round, ${fmt(result.adjacentCeiling.perSecond, 1)}/s` : ''}` +
      `${s.unexpected ? `; ${s.unexpected} unexpected (${JSON.stringify(s.all.map((r) => r.statusCounts))})` : ''}` +
      `${s.warnings.length ? `; ${s.warnings.join('; ')}` : ''}${result.notes?.length ? `; ${result.notes.join('; ')}` : ''}`,
  );
}

// ---------------------------------------------------------------------------------------------
// Report

const fmt = (n: number | undefined, digits = 0) => (n === undefined || Number.isNaN(n) ? '–' : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));

interface VersusPeer {
  id: ScenarioId;
  /** Which peer. */
  peerName: PeerName;
  gatehouse: Summary | undefined;
  peer: Summary | undefined;
  /** gatehouse's ops/s ÷ the peer's, both on one core in this run. */
  ratio?: number;
  /** The same per CPU-second of each server. */
  cpuRatio?: number;
  target?: number;
  reason?: string;
}

function versusPeer(gatehouse: ScenarioResult[], peer: ScenarioResult[]): VersusPeer[] {
  return peer.map((p) => {
    const g = gatehouse.find((r) => r.id === p.id);
    const target = SCENARIOS.find((s) => s.id === p.id)?.peer?.target;
    const gs = g?.summary;
    const ps = p.summary;
    const reason = !gs ? (g?.reason ?? 'gatehouse not measured') : !ps ? p.reason : undefined;
    return {
      id: p.id,
      peerName: p.server as PeerName,
      gatehouse: gs,
      peer: ps,
      ...(gs && ps ? { ratio: gs.opsPerSec / ps.opsPerSec } : {}),
      ...(gs?.opsPerCpuSecond && ps?.opsPerCpuSecond ? { cpuRatio: gs.opsPerCpuSecond / ps.opsPerCpuSecond } : {}),
      ...(target !== undefined ? { target } : {}),
      ...(reason ? { reason } : {}),
    };
  });
}

/**
 * gatehouse ÷ the peer. Both are pinned to the same core and driven by the same load generator, so
 * the raw ratio is fair as long as neither saturates the load generator; the CPU ratio compares the
 * work per operation. ok when both meet the target, BELOW when both miss it, unclear otherwise.
 */
function peerTable(rows: VersusPeer[]): string {
  const header = ['scenario', 'gatehouse ops/s', 'ops/CPU-s', 'peer ops/s', 'ops/CPU-s', '× peer', '× peer/CPU-s', 'target', ''];
  const body = rows.map((v) => {
    if (v.reason) return [v.id, v.reason, '', '', '', '', '', v.target === undefined ? '' : `≥ ${v.target}`, ''];
    const both = [v.ratio, v.cpuRatio].filter((x): x is number => x !== undefined);
    const verdict = v.target === undefined || both.length === 0 ? '' : both.every((x) => x >= v.target!) ? 'ok' : both.every((x) => x < v.target!) ? 'BELOW' : 'unclear';
    const clean = (s: Summary | undefined) => !s || (s.errors === 0 && s.unexpected === 0);
    return [
      v.id,
      fmt(v.gatehouse?.opsPerSec),
      fmt(v.gatehouse?.opsPerCpuSecond),
      fmt(v.peer?.opsPerSec),
      fmt(v.peer?.opsPerCpuSecond),
      fmt(v.ratio, 2),
      fmt(v.cpuRatio, 2),
      v.target === undefined ? 'reported' : `≥ ${v.target}`,
      clean(v.gatehouse) && clean(v.peer) ? verdict : 'ERRORS',
    ];
  });
  const all = [header, ...body];
  const widths = header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? '').length)));
  const line = (row: string[]) => `| ${row.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
}

/** gatehouse ÷ R5 (issue 27 §2): S1 and S2 against the stateful reference of the same run. */
function versusR5(gatehouse: ScenarioResult[]): { id: ScenarioId; ratio: number | undefined; cpuRatio: number | undefined }[] {
  return gatehouse
    .filter((r) => (r.id === 'S1' || r.id === 'S2') && r.summary)
    .map((r) => ({
      id: r.id,
      ratio: ceilings.R5 ? r.summary!.opsPerSec / ceilings.R5 : undefined,
      cpuRatio: capacities.R5 && r.summary!.opsPerCpuSecond ? r.summary!.opsPerCpuSecond / capacities.R5 : undefined,
    }));
}

/**
 * The one table of ratios (issue 27 §4): per scenario, gatehouse ÷ each peer per request and per
 * CPU-second, and S1 and S2 ÷ R5; a cell says "not offered" or why a side was not measured.
 */
function ratioTable(gatehouse: ScenarioResult[], peerResults: ScenarioResult[], peers: PeerName[], r5: ReturnType<typeof versusR5>): string {
  const header = ['scenario', ...peers.flatMap((name) => [`× ${name}`, `× ${name}/CPU-s`]), '÷ R5', '÷ R5/CPU-s'];
  const ids = [...new Set([...gatehouse.filter((r) => SCENARIOS.find((s) => s.id === r.id)?.peer || r5.some((x) => x.id === r.id)).map((r) => r.id)])];
  const body = ids.map((id) => {
    const g = gatehouse.find((r) => r.id === id);
    const cells = peers.flatMap((name) => {
      const p = peerResults.find((r) => r.id === id && r.server === name);
      if (!p) return ['', ''];
      if (!p.summary) return [p.reason?.startsWith('not offered') ? 'not offered' : 'not measured', ''];
      if (!g?.summary) return ['gatehouse not measured', ''];
      if (p.summary.opsPerSec === 0) return [`${name}: no operation completed (${p.summary.unexpected} unexpected)`, ''];
      const cpu = g.summary.opsPerCpuSecond && p.summary.opsPerCpuSecond ? g.summary.opsPerCpuSecond / p.summary.opsPerCpuSecond : undefined;
      const dirty = [g.summary, p.summary].some((s) => s.errors > 0 || s.unexpected > 0) ? ' (errors)' : '';
      return [`${fmt(g.summary.opsPerSec / p.summary.opsPerSec, 2)}${dirty}`, fmt(cpu, 2)];
    });
    const toR5 = r5.find((x) => x.id === id);
    return [id, ...cells, toR5 ? fmt(toR5.ratio, 2) : '', toR5 ? fmt(toR5.cpuRatio, 2) : ''];
  });
  const all = [header, ...body];
  const widths = header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? '').length)));
  const line = (row: string[]) => `| ${row.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
}

/** Peak RSS of the gatehouse worker per scenario on SQLite (issue 27 §6: ≤ 150 MiB under full load). */
const RSS_TARGET_MIB = 150;

function memoryLines(gatehouse: ScenarioResult[]): string[] {
  const measured = gatehouse.filter((r) => r.store === 'sqlite' && r.summary?.rssMiB);
  if (measured.length === 0) return [];
  const peak = Math.max(...measured.map((r) => r.summary!.rssMiB!.rss));
  return [
    `Memory (SQLite, one worker, peak RSS sampled every 250 ms during the rounds, MiB; anonymous memory in brackets; target ≤ ${RSS_TARGET_MIB} MiB): ` +
      measured.map((r) => `${r.id} ${fmt(r.summary!.rssMiB!.rss)} (${fmt(r.summary!.rssMiB!.anon)})`).join(', ') +
      `; largest ${fmt(peak)} MiB: ${peak <= RSS_TARGET_MIB ? 'ok' : 'ABOVE'}. The process is not restarted between scenarios, so a figure includes what earlier scenarios left on the heap.`,
  ];
}

function table(results: ScenarioResult[], referenceSqlite?: ScenarioResult[]): string {
  const header = ['scenario', 'store', 'workers', 'ops/s', 'req/s', 'server CPU', 'ops/CPU-s', 'p50 ms', 'p99 ms', 'errors', 'non-2xx', 'unexpected', 'RSS MiB/worker (anon)', 'ceiling', 'ratio', 'ratio/CPU-s', 'target', ''];
  const rows = results.map((r) => {
    if (r.status !== 'measured' || !r.summary) return [r.id, r.store, String(r.workers), r.reason ?? 'not measured', '', '', '', '', '', '', '', '', '', r.ceiling, '', '', `≥ ${r.target}`, ''];
    const s = r.summary;
    const sqlite = referenceSqlite?.find((x) => x.id === r.id && x.summary);
    const vsSqlite = sqlite?.summary && r.store === 'postgres' ? ` (${fmt(s.opsPerSec / sqlite.summary.opsPerSec, 2)}× SQLite)` : '';
    // The raw ratio is biased upwards (R1 is capped by the load generator), the CPU-normalised one
    // downwards (the kernel's loopback work is charged to the sender): above the target by the
    // lower one is a pass, below it by the upper one a miss, and in between unclear.
    const clean = s.errors === 0 && s.unexpected === 0;
    const verdict = !clean ? 'ERRORS' : r.ratio === undefined ? '' : (r.cpuRatio ?? r.ratio) >= r.target ? 'ok' : r.ratio < r.target ? 'BELOW' : 'unclear';
    return [
      r.id,
      r.store,
      `${r.workers}${r.pinned ? ' (1 core)' : ''}`,
      fmt(s.opsPerSec) + vsSqlite,
      fmt(s.reqPerSec),
      s.serverCpuShare === undefined ? '–' : `${fmt(100 * s.serverCpuShare)} %`,
      fmt(s.opsPerCpuSecond),
      fmt(s.p50, 1),
      fmt(s.p99, 1),
      String(s.errors),
      String(s.non2xx),
      String(s.unexpected),
      s.rssMiB ? `${fmt(s.rssMiB.rss)} (${fmt(s.rssMiB.anon)})` : '–',
      r.ceiling,
      fmt(r.ratio, 3),
      fmt(r.cpuRatio, 3),
      `≥ ${r.target}`,
      r.pinned ? verdict : '',
    ];
  });
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? '').length)));
  const line = (row: string[]) => `| ${row.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Main

async function measureCeilings(): Promise<Record<string, unknown>> {
  log('R2: RS256 signatures/s (jose, one core)…');
  const r2 = await cpuCeiling('rs256.ts');
  ceilings.R2 = r2.perSecond;
  capacities.R2 = r2.perCpuSecond;
  log(`    ${fmt(r2.perSecond)}/s, ${fmt(r2.perCpuSecond)}/CPU-s`);
  log(`R3: argon2id hashes/s (m=${ARGON2_PARAMETERS.memoryCost} KiB, t=${ARGON2_PARAMETERS.timeCost}, p=${ARGON2_PARAMETERS.parallelism}, one core)…`);
  const r3 = await cpuCeiling('argon2.ts');
  ceilings.R3 = r3.perSecond;
  capacities.R3 = r3.perCpuSecond;
  log(`    ${fmt(r3.perSecond, 1)}/s, ${fmt(r3.perCpuSecond, 1)}/CPU-s`);
  log('R4: ES256 client-assertion verifications/s (jose, one core)…');
  const r4 = await cpuCeiling('es256-verify.ts');
  ceilings.R4 = r4.perSecond;
  capacities.R4 = r4.perCpuSecond;
  log(`    ${fmt(r4.perSecond)}/s, ${fmt(r4.perCpuSecond)}/CPU-s`);
  log('R1: bare node:http server, small JSON…');
  const r1 = await bareHttpCeiling();
  ceilings.R1 = r1.opsPerSec;
  capacities.R1 = r1.opsPerCpuSecond;
  log(`    ${fmt(r1.opsPerSec)} req/s at ${fmt(100 * (r1.serverCpuShare ?? 0))} % of the core (${fmt(r1.opsPerCpuSecond)}/CPU-s), p99 ${r1.p99} ms`);
  log('R5: bare node:http + one SHA-256 + one prepared SQLite point read (node:sqlite)…');
  const r5 = await bareHttpCeiling({ rounds: settings.rounds, reference: r5Reference() });
  ceilings.R5 = r5.opsPerSec;
  capacities.R5 = r5.opsPerCpuSecond;
  log(`    ${fmt(r5.opsPerSec)} req/s at ${fmt(100 * (r5.serverCpuShare ?? 0))} % of the core (${fmt(r5.opsPerCpuSecond)}/CPU-s), p99 ${r5.p99} ms`);
  return { R1: r1, R2: r2, R3: { ...r3, parameters: ARGON2_PARAMETERS }, R4: r4, R5: r5 };
}

/**
 * One worker, pinned, every selected scenario. With `peer`, the peers are up beside gatehouse (all
 * on the server's core; the idle ones cost nothing) and each scenario that has a peer half runs on
 * each peer right after gatehouse, so that all are measured seconds apart in the same conditions.
 */
async function runSuite(store: BenchStore, peer: boolean): Promise<{ results: ScenarioResult[]; peerResults: ScenarioResult[]; peers: { name: PeerName; version: string; store: string }[]; gracefulExit: number | string }> {
  const suite = async (peers: PeerSide[]) => {
    log(`\n== ${store.kind}: one worker${pinning ? ' pinned to one core' : ''}${peers.length ? `; beside it ${peers.map((p) => `${p.spec.name} ${p.version}`).join(', ')}` : ''} ==`);
    const peerResults: ScenarioResult[] = [];
    const { value, exit } = await withServer(store, { workers: 1, pinned: pinning }, async (server, ctx, variant) => {
      if (!ctx.frontChannel.available) log(`   S5/S6/S6t: ${ctx.frontChannel.reason}`);
      const results: ScenarioResult[] = [];
      for (const scenario of selected(SCENARIOS)) {
        if (store.kind === 'postgres' && !scenario.hotPath) continue;
        log(`${scenario.id} ${scenario.name}…`);
        const on = scenario.serverEnv ? await variant(scenario.serverEnv) : { server, ctx };
        const result = await runScenario(scenario, on.ctx, on.server, { store: store.kind, workers: 1, pinned: pinning }, settings.rounds);
        logResult(result);
        results.push(result);
        if (!scenario.peer) continue;
        for (const side of peers) {
          log(`${scenario.id} on ${side.spec.name}…`);
          const peerResult = await runScenario(scenario, side.ctx, side.server, { store: side.spec.store, workers: 1, pinned: pinning }, settings.rounds);
          logResult(peerResult);
          peerResults.push(peerResult);
        }
      }
      return results;
    });
    if (exit !== 0) log(`   warning: the server exited with ${exit} on SIGTERM (expected 0)`);
    return { results: value, peerResults, peers: peers.map((p) => ({ name: p.spec.name, version: p.version, store: p.spec.store })), gracefulExit: exit };
  };
  if (!peer || flags['no-peer'] || !selected(SCENARIOS).some((s) => s.peer)) return suite([]);
  return withPeers(suite);
}

async function runClusterScaling(store: BenchStore): Promise<ScenarioResult[]> {
  const scenarios = selected(SCENARIOS).filter((s) => settings.clusterScenarios.includes(s.id));
  if (scenarios.length === 0) return [];
  if (pinning) pinSelf(`0-${cores - 1}`);
  const results: ScenarioResult[] = [];
  try {
    for (const workers of [1, 2]) {
      log(`\n== ${store.kind}: ${workers} worker(s), no pinning ==`);
      const { value, exit } = await withServer(store, { workers, pinned: false }, async (server, ctx) => {
        const out: ScenarioResult[] = [];
        for (const scenario of scenarios) {
          log(`${scenario.id} ${scenario.name}…`);
          const result = await runScenario(scenario, ctx, server, { store: store.kind, workers, pinned: false }, 1, undefined, settings.clusterSeconds);
          log(result.summary ? `    ${fmt(result.summary.opsPerSec)} ops/s, p99 ${result.summary.p99} ms` : `    ${result.reason}`);
          out.push(result);
        }
        return out;
      });
      if (exit !== 0) log(`   warning: the server (${workers} workers) exited with ${exit} on SIGTERM (expected 0)`);
      results.push(...value);
    }
  } finally {
    if (pinning) pinSelf(LOAD_CPU);
  }
  return results;
}

async function runProfiles(store: BenchStore, withCeiling: boolean): Promise<Record<string, ProfileSummary>> {
  const out: Record<string, ProfileSummary> = {};
  const markdown: string[] = [];
  if (withCeiling) {
    const dir = join(runDir, 'profiles', 'R1');
    mkdirSync(dir, { recursive: true });
    log('profile R1…');
    let skipMs = 0;
    const r1 = await bareHttpCeiling({ rounds: 1, profileDir: dir, onRoundStart: (spawnedAt) => (skipMs = performance.now() - spawnedAt) });
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    if (file) {
      const summary = summarizeProfile(join(dir, file), r1.opsPerCpuSecond ? 1e6 / r1.opsPerCpuSecond : undefined, skipMs);
      out.R1 = summary;
      markdown.push(formatProfile(`R1 bare node:http — ${fmt(r1.opsPerSec)} req/s`, summary));
    }
  }
  for (const scenario of selected(SCENARIOS)) {
    if (store.kind === 'postgres' && !scenario.hotPath) continue;
    const key = store.kind === 'sqlite' ? scenario.id : `${scenario.id} ${store.kind}`;
    const dir = join(runDir, 'profiles', key.replace(' ', '-'));
    mkdirSync(dir, { recursive: true });
    log(`profile ${key}…`);
    let skipMs = 0;
    // A scenario of another server's settings (Scenario.serverEnv) is profiled with those settings.
    const options = { workers: 1, pinned: pinning, profileDir: dir, env: scenario.serverEnv };
    const { value } = await withServer(store, options, async (server, ctx) => {
      // Only the measured round counts: start-up, seeding and warm-up are left out of the summary.
      return runScenario(scenario, ctx, server, { store: store.kind, workers: 1, pinned: pinning }, 1, () => (skipMs = performance.now() - server.spawnedAt));
    });
    if (value.status !== 'measured') {
      log(`    ${value.reason}`);
      continue;
    }
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) {
      log('    no .cpuprofile was written');
      continue;
    }
    const perCpuSecond = value.summary?.opsPerCpuSecond;
    const summary = summarizeProfile(join(dir, file), perCpuSecond ? 1e6 / perCpuSecond : undefined, skipMs);
    out[key] = summary;
    markdown.push(formatProfile(`${scenario.id} ${scenario.name}, ${store.kind} — ${fmt(value.summary?.opsPerSec)} ops/s`, summary));
  }
  if (markdown.length) {
    const path = join(runDir, `profiles-${store.kind}.md`);
    writeFileSync(path, markdown.join('\n'));
    log(`profile summaries: ${relative(ROOT, path)}`);
  }
  return out;
}

/**
 * Introspection on an empty store vs the seeded store at `url` (issue 6 §4). Both servers run at
 * once (pinned to the same core; the idle one costs nothing) and their rounds alternate, so drift
 * in what else the machine does falls on both alike.
 */
async function runScale(url: string): Promise<void> {
  const s1 = SCENARIOS.find((s) => s.id === 'S1')!;
  const empty = url.startsWith('sqlite:') ? sqliteStore('empty') : await postgresStore(postgresUrl ?? url, 'empty');
  const seededStore: BenchStore = { kind: url.startsWith('sqlite:') ? 'sqlite' : 'postgres', url, dispose: async () => {} };
  const rounds: Record<'empty' | 'seeded', RoundResult[]> = { empty: [], seeded: [] };
  const label = (which: string) => ({ store: `${seededStore.kind} (${which})`, workers: 1, pinned: pinning });
  try {
    await withServer(empty, { workers: 1, pinned: pinning }, (emptyServer, emptyCtx) =>
      withServer(seededStore, { workers: 1, pinned: pinning }, async (seededServer, seededCtx) => {
        for (let i = 0; i < settings.rounds; i++) {
          for (const [which, server, ctx] of [
            ['empty', emptyServer, emptyCtx],
            ['seeded', seededServer, seededCtx],
          ] as const) {
            log(`S1 on the ${which} store, round ${i + 1}…`);
            const result = await runScenario(s1, ctx, server, label(which), 1);
            if (!result.summary) throw new Error(`S1 failed on the ${which} store: ${result.reason}`);
            rounds[which].push(...result.summary.all);
          }
        }
      }),
    );
  } finally {
    await empty.dispose();
  }
  const rows: ScenarioResult[] = (['empty', 'seeded'] as const).map((which) => ({
    id: 'S1',
    name: s1.name,
    server: 'gatehouse',
    ...label(which),
    ceiling: s1.ceiling,
    target: s1.target,
    status: 'measured',
    summary: summarize(rounds[which]),
  }));
  const [a, b] = rows.map((r) => r.summary!);
  const ratio = b!.p99 / Math.max(a!.p99, 1);
  const cpuCost = a!.opsPerCpuSecond && b!.opsPerCpuSecond ? a!.opsPerCpuSecond / b!.opsPerCpuSecond : undefined;
  const report = { kind: 'scale', runId, machine: machine(), settings, seededStore: url.replace(/\/\/[^@]*@/, '//'), results: rows, p99Ratio: ratio, cpuPerOpRatio: cpuCost, target: 1.5 };
  writeFileSync(join(runDir, 'scale.json'), JSON.stringify(report, null, 2));
  process.stdout.write(
    `${table(rows)}\n\np99 seeded / empty: ${fmt(ratio, 2)} (target ≤ 1.5; autocannon's p99 is in whole milliseconds, a 1 ms floor is used)\n` +
      `CPU per introspection seeded / empty: ${fmt(cpuCost, 2)}\n`,
  );
}

/** One round of a scale-out step: every instance loaded at once by this one process. */
interface ScaleOutRow {
  id: ScenarioId;
  instances: number;
  opsPerSec: number;
  /** Gain over the step with one instance fewer (undefined for one instance). */
  gain?: number;
  /** CPU of the gatehouse instances and of PostgreSQL, in cores (CPU-seconds per second). */
  gatehouseCores: number;
  postgresCores: number | undefined;
  /** Every process of the machine (other work, the load generator included), in cores busy. */
  machineCores: number | undefined;
  p99: number;
  errors: number;
  unexpected: number;
}

/**
 * Scale-out (issue 27 §5): 1, 2 … N gatehouse instances, each its own process with one worker,
 * all on one fresh PostgreSQL schema, none pinned (nor the load generator). Each step starts one
 * more instance; S1, S3 and S7 then run on every instance at once from this one process (the
 * scenario's connections per instance), and the report gives the sum of their operations per
 * second, the gain of each added instance, and the CPU the instances and PostgreSQL used (when
 * its processes are on this machine and readable). Rough by design: the load generator shares
 * the machine and becomes a limit of its own.
 */
async function runScaleOut(count: number): Promise<void> {
  if (!Number.isInteger(count) || count < 1) throw new Error('--scale-out takes a number of instances, 1 or more');
  if (!postgresUrl) throw new Error('--scale-out needs PostgreSQL: --postgres URL or GATEHOUSE_BENCH_POSTGRES_URL');
  if (pinning) pinSelf(`0-${cores - 1}`);
  const scenarios = SCENARIOS.filter((s) => ['S1', 'S3', 'S7'].includes(s.id) && (!only || only.has(s.id)));
  const store = await postgresStore(postgresUrl, 'scaleout');
  const handle = await openBenchStore(store.url);
  const servers: Server[] = [];
  const rows: ScaleOutRow[] = [];
  try {
    const fixture = await seedFixture(handle);
    const machine = await seedMachineClients(handle, (await clientKey()).publicJwk);
    const contexts: ScenarioContext[] = [];
    for (let n = 1; n <= count; n++) {
      log(`\n== scale-out: ${n} instance(s) on one PostgreSQL ==`);
      const server = await startGatehouse(store.url, { workers: 1, pinned: false });
      servers.push(server);
      contexts.push(await gatehouseContext(server, handle, fixture, machine, 1));
      for (const scenario of scenarios) {
        const once = async (seconds: number) => {
          const prepared = await Promise.all(contexts.map((ctx) => scenario.prepare(ctx, seconds)));
          const refused = prepared.find((p): p is string => typeof p === 'string');
          if (refused) throw new Error(`${scenario.id}: ${refused}`);
          const postgresPids = pidsNamed('postgres');
          const postgresBefore = postgresPids.length ? cpuSeconds(postgresPids) : undefined;
          const machineBefore = machineJiffies();
          const started = performance.now();
          const results = await Promise.all(
            contexts.map((ctx, i) => {
              const p = prepared[i] as Prepared;
              return runLoad({
                base: ctx.base,
                requests: p.requests,
                seconds,
                amount: p.amount,
                connections: scenario.connections ?? settings.connections,
                ok: p.ok ?? scenario.ok,
                opStatus: p.opStatus ?? scenario.opStatus,
                serverPid: servers[i]!.started.pid,
              });
            }),
          );
          const wall = (performance.now() - started) / 1000;
          const machineAfter = machineJiffies();
          const machineCores = machineBefore && machineAfter && machineAfter.total > machineBefore.total ? cores * (1 - (machineAfter.idle - machineBefore.idle) / (machineAfter.total - machineBefore.total)) : undefined;
          contexts.forEach((ctx, i) => (ctx.warmedUp[scenario.id] = results[i]!.opsPerSec));
          return {
            opsPerSec: results.reduce((sum, r) => sum + r.opsPerSec, 0),
            gatehouseCores: results.reduce((sum, r) => sum + (r.serverCpuSeconds ?? 0), 0) / wall,
            postgresCores: postgresBefore === undefined ? undefined : (cpuSeconds(postgresPids) - postgresBefore) / wall,
            machineCores,
            p99: Math.max(...results.map((r) => r.p99)),
            errors: results.reduce((sum, r) => sum + r.errors, 0),
            unexpected: results.reduce((sum, r) => sum + r.unexpected, 0),
          };
        };
        log(`${scenario.id} ${scenario.name} on ${n} instance(s)…`);
        await once(settings.warmup);
        const measured = await once(settings.duration);
        const previous = rows.find((r) => r.id === scenario.id && r.instances === n - 1);
        const row: ScaleOutRow = { id: scenario.id, instances: n, ...measured, ...(previous ? { gain: measured.opsPerSec / previous.opsPerSec } : {}) };
        rows.push(row);
        log(`    ${fmt(row.opsPerSec)} ops/s${row.gain ? ` (${fmt(row.gain, 2)}× ${n - 1})` : ''}; gatehouse ${fmt(row.gatehouseCores, 2)} cores, PostgreSQL ${fmt(row.postgresCores, 2)} cores, machine ${fmt(row.machineCores, 2)} of ${cores} busy; p99 ${row.p99} ms${row.unexpected || row.errors ? `; ${row.unexpected} unexpected, ${row.errors} errors` : ''}`);
      }
    }
  } finally {
    for (const server of servers) await server.stop();
    await handle.close();
    await store.dispose();
  }
  const header = ['scenario', 'instances', 'ops/s', '× one fewer', 'gatehouse cores', 'PostgreSQL cores', 'machine busy cores', 'p99 ms', 'errors', 'unexpected'];
  const body = rows.map((r) => [r.id, String(r.instances), fmt(r.opsPerSec), r.gain === undefined ? '' : fmt(r.gain, 2), fmt(r.gatehouseCores, 2), fmt(r.postgresCores, 2), fmt(r.machineCores, 2), fmt(r.p99), String(r.errors), String(r.unexpected)]);
  const widths = header.map((_, i) => Math.max(...[header, ...body].map((row) => row[i]!.length)));
  const line = (row: string[]) => `| ${row.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  // Where the database becomes the limit: the first step whose added instance gains under 10 %.
  const limits = scenarios.map((s) => {
    const flat = rows.find((r) => r.id === s.id && r.gain !== undefined && r.gain < 1.1);
    if (!flat) return `${s.id}: every added instance gained 10 % or more up to ${count}`;
    // With the cores full (other work and the load generator included) nothing says the database is the limit.
    const full = flat.machineCores === undefined || flat.machineCores >= 0.9 * cores;
    return (
      `${s.id}: instance ${flat.instances} added ${fmt(100 * (flat.gain! - 1))} %; gatehouse used ${fmt(flat.gatehouseCores, 2)} cores, PostgreSQL ${fmt(flat.postgresCores, 2)}, the machine ${fmt(flat.machineCores, 2)} of ${cores}: ` +
      (full ? 'the machine is full, so the limit is its cores (the load generator and any other work share them), not the database alone' : 'cores to spare, so the database (its locks, WAL syncs or round trips) is the limit')
    );
  });
  const report = { kind: 'scale-out', runId, machine: machine(), settings, instances: count, postgres: postgresUrl.replace(/\/\/[^@]*@/, '//'), rows, limits };
  writeFileSync(join(runDir, 'scale-out.json'), JSON.stringify(report, null, 2));
  process.stdout.write(
    `\nScale-out on one PostgreSQL (${cores} cores; instances, PostgreSQL and the one load generator share them; ${settings.duration} s per step after ${settings.warmup} s warm-up, ${settings.connections} connections per instance):\n\n` +
      `${[line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n')}\n\n${limits.join('\n')}\n\nJSON: ${relative(ROOT, join(runDir, 'scale-out.json'))}\n`,
  );
}

/** Each result whose scenario is held against another of the same suite (Scenario.versus): their ratio. */
function versusScenario(results: ScenarioResult[]): { id: ScenarioId; versus: ScenarioId; store: string; ratio: number; cpuRatio: number | undefined; target: number }[] {
  return results.flatMap((r) => {
    const versus = SCENARIOS.find((s) => s.id === r.id)?.versus;
    const other = versus && results.find((o) => o.id === versus.id && o.store === r.store && o.workers === r.workers);
    if (!versus || !other?.summary || !r.summary) return [];
    const cpu = r.summary.opsPerCpuSecond && other.summary.opsPerCpuSecond ? r.summary.opsPerCpuSecond / other.summary.opsPerCpuSecond : undefined;
    return [{ id: r.id, versus: versus.id, store: r.store, ratio: r.summary.opsPerSec / other.summary.opsPerSec, cpuRatio: cpu, target: versus.target }];
  });
}

async function main(): Promise<void> {
  const started = Date.now();
  const info = machine();
  log(`gatehouse bench ${quick ? '(quick) ' : ''}— ${info.nproc} cores, ${info.cpuModel}, Node ${info.node}; ${info.pinned}`);
  log(`rounds ${settings.rounds} × ${settings.duration} s after ${settings.warmup} s warm-up, ${settings.connections} connections${flags['server-node-options'] ? `; server NODE_OPTIONS ${flags['server-node-options']}` : ''}`);
  if (info.loadAverage > 0.5) log(`warning: load average ${info.loadAverage} before starting: other processes use the CPU, so figures will be low and noisy`);
  if (!pinning && !flags['no-pin']) log('warning: no pinning (needs taskset and two cores): ceilings are not one-core ceilings');
  if (pinning && !pinSelf(LOAD_CPU)) throw new Error('taskset could not pin the load generator');

  if (flags.scale) return runScale(flags.scale);
  if (flags['scale-out']) return runScaleOut(Number(flags['scale-out']));

  const ceilingResults = await measureCeilings();
  const sqlite = sqliteStore('sqlite');
  const suites: ScenarioResult[] = [];
  const exits: Record<string, number | string> = {};
  let cluster: ScenarioResult[] = [];
  const peer: ScenarioResult[] = [];
  const peers: { name: PeerName; version: string; store: string }[] = [];
  let profiles: Record<string, ProfileSummary> = {};
  try {
    const sqliteSuite = await runSuite(sqlite, true);
    suites.push(...sqliteSuite.results);
    peer.push(...sqliteSuite.peerResults);
    peers.push(...sqliteSuite.peers);
    exits.sqlite = sqliteSuite.gracefulExit;
    if (!flags['no-cluster'] && cores >= 2) cluster = await runClusterScaling(sqlite);
    if (flags.profile) profiles = await runProfiles(sqlite, true);
  } finally {
    await sqlite.dispose();
  }
  if (postgresUrl) {
    const postgres = await postgresStore(postgresUrl, 'run');
    try {
      const pgSuite = await runSuite(postgres, false);
      suites.push(...pgSuite.results);
      exits.postgres = pgSuite.gracefulExit;
      if (flags.profile) profiles = { ...profiles, ...(await runProfiles(postgres, false)) };
    } finally {
      await postgres.dispose();
    }
  }

  const sqliteResults = suites.filter((r) => r.store === 'sqlite');
  const scaling = settings.clusterScenarios
    .map((id) => {
      const one = cluster.find((r) => r.id === id && r.workers === 1)?.summary;
      const two = cluster.find((r) => r.id === id && r.workers === 2)?.summary;
      return one && two ? { id, oneWorker: one.opsPerSec, twoWorkers: two.opsPerSec, gain: two.opsPerSec / one.opsPerSec, cpuOne: one.serverCpuShare, cpuTwo: two.serverCpuShare } : undefined;
    })
    .filter((x) => x !== undefined);
  const versusScenarios = versusScenario(suites);
  const report = {
    kind: 'bench',
    runId,
    quick,
    elapsedSeconds: (Date.now() - started) / 1000,
    machine: { ...info, loadAverageAtEnd: Number(loadavg()[0]!.toFixed(2)) },
    settings: { ...settings, serverNodeOptions: flags['server-node-options'] },
    ceilings: ceilingResults,
    scenarios: suites,
    peers: peers.map((p) => ({ ...p, results: peer.filter((r) => r.server === p.name) })),
    versusPeer: versusPeer(sqliteResults, peer),
    versusR5: versusR5(sqliteResults),
    versusScenarios,
    publishedAnchor: KEYCLOAK_ANCHOR,
    cluster,
    scaling,
    serverExitOnSigterm: exits,
    profiles,
  };
  const json = JSON.stringify(report, null, 2);
  writeFileSync(join(runDir, 'results.json'), json);
  writeFileSync(join(RESULTS, 'latest.json'), json);

  const lines = [
    '',
    `Machine: ${info.nproc} cores (${info.cpuModel}), Node ${info.node}, ${info.pinned}; load average ${info.loadAverage} at start, ${report.machine.loadAverageAtEnd} at end.`,
    `Ceilings (one core): R1 ${fmt(ceilings.R1)} req/s (bare node:http; ${fmt(capacities.R1)}/CPU-s), R2 ${fmt(ceilings.R2)} RS256 signatures/s (${fmt(capacities.R2)}/CPU-s), R3 ${fmt(ceilings.R3, 1)} argon2id hashes/s (${fmt(capacities.R3, 1)}/CPU-s), R4 ${fmt(ceilings.R4)} ES256 assertion verifications/s (${fmt(capacities.R4)}/CPU-s), R5 ${fmt(ceilings.R5)} req/s (node:http + SHA-256 + one SQLite point read; ${fmt(capacities.R5)}/CPU-s).`,
    `Rounds: ${settings.rounds} × ${settings.duration} s (medians), warm-up ${settings.warmup} s, ${settings.connections} connections.`,
    '',
    table(suites, sqliteResults),
    ...suites
      .filter((r) => r.adjacentCeiling)
      .map((r) => `${r.id} (${r.store}): ratio to ${r.ceiling} measured just before each of its rounds on the same core, ${fmt(r.adjacentCeiling!.perSecond, 1)}/s (${fmt(r.adjacentCeiling!.perCpuSecond, 1)}/CPU-s).`),
  ];
  for (const v of versusScenarios) {
    // ok when both figures meet the target, BELOW when both miss it, unclear otherwise (as against the peer).
    const met = [v.ratio, v.cpuRatio].filter((x) => x !== undefined).map((x) => x >= v.target);
    const verdict = met.every(Boolean) ? 'ok' : met.some(Boolean) ? 'unclear' : 'BELOW';
    lines.push(`${v.id} / ${v.versus} (${v.store}, same run): ${fmt(v.ratio, 3)} ops/s, ${fmt(v.cpuRatio, 3)} per CPU-s; target ≥ ${v.target}: ${verdict}`);
  }
  for (const p of peers) {
    lines.push('', `Against ${p.name} ${p.version} in the same run (one process, ${p.store}${pinning ? ', pinned to the same core' : ''}):`, '', table(peer.filter((r) => r.server === p.name)), '', peerTable(report.versusPeer.filter((v) => v.peerName === p.name)));
  }
  if (peers.length || report.versusR5.length) {
    lines.push('', `Ratios of the same run — gatehouse ÷ each peer per request and per CPU-second; S1 and S2 ÷ R5 (${fmt(ceilings.R5)} req/s, ${fmt(capacities.R5)}/CPU-s):`, '', ratioTable(sqliteResults, peer, peers.map((p) => p.name), report.versusR5));
  }
  if (peers.some((p) => p.name === 'oidc-provider')) {
    const s7 = report.versusPeer.find((v) => v.id === 'S7' && v.peerName === 'oidc-provider');
    const s8 = report.versusPeer.find((v) => v.id === 'S8' && v.peerName === 'oidc-provider');
    const mine = [s7, s8]
      .filter((v) => v?.gatehouse?.opsPerCpuSecond !== undefined)
      .map((v) => `${v!.id} ${fmt(v!.gatehouse!.opsPerCpuSecond)}/CPU-s`);
    lines.push(`Published reference, not a same-run figure: ${KEYCLOAK_ANCHOR.what} (${KEYCLOAK_ANCHOR.source}).${mine.length ? ` gatehouse here: ${mine.join(', ')} on one core of this machine, plain HTTP over loopback.` : ''}`);
  }
  lines.push('', ...memoryLines(sqliteResults));
  if (cluster.length) {
    lines.push('', `Cluster (SQLite, no pinning, 1 round of ${settings.clusterSeconds} s each):`, '', table(cluster));
    for (const s of scaling) lines.push(`${s.id}: 2 workers / 1 worker = ${fmt(s.gain, 2)}× (server CPU ${fmt(100 * (s.cpuOne ?? 0))} % → ${fmt(100 * (s.cpuTwo ?? 0))} %)`);
  }
  lines.push('', `JSON: ${relative(ROOT, join(runDir, 'results.json'))} (also bench/results/latest.json); ${fmt(report.elapsedSeconds)} s.`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().then(
  () => {
    killAll();
    process.exit(0);
  },
  (error: unknown) => {
    log(`bench failed: ${(error as Error).stack ?? String(error)}`);
    killAll();
    process.exit(1);
  },
);
