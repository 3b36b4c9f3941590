/**
 * Summarises a V8 .cpuprofile (node --cpu-prof) into what the performance notes need: where the
 * busy samples went by component (Fastify, Kysely, node:sqlite, jose, gatehouse's own code, …),
 * the functions with the most self time, and gatehouse's functions by inclusive time.
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface Share {
  name: string;
  /** Percent of busy (non-idle) samples. */
  percent: number;
  /**
   * CPU microseconds per operation spent here: the share times the server's measured CPU per
   * operation (from /proc). Wall-clock samples also count time the thread was runnable but not
   * running, so the profile's own durations overstate CPU on a busy machine; its shares do not.
   */
  usPerOp?: number;
}

export interface ProfileSummary {
  file: string;
  busyMs: number;
  idleMs: number;
  /** Measured server CPU per operation (µs), when known. */
  cpuUsPerOp: number | undefined;
  byComponent: Share[];
  /** The same samples by what the work is for (issue 27): HTTP, parsing, store statements, transactions, audit, JSON, crypto… */
  byConcern: Share[];
  topSelf: Share[];
  topGatehouseInclusive: Share[];
}

const FAMILIES: [RegExp, string][] = [
  [/\/node_modules\/(fastify|find-my-way|avvio|@fastify\/[^/]+|fast-json-stringify|light-my-request|fast-querystring|fastq|toad-cache|process-warning|abstract-logging|fast-uri|ajv|rfdc|secure-json-parse|content-type|cookie)\//, 'fastify'],
  [/\/node_modules\/(pino|pino-std-serializers|sonic-boom|thread-stream|fast-redact|on-exit-leak-free|quick-format-unescaped)\//, 'pino'],
  [/\/node_modules\/kysely\//, 'kysely'],
  [/\/node_modules\/(pg|pg-protocol|pg-pool|pg-types|pg-connection-string|postgres-[^/]+|pgpass|split2)\//, 'pg driver'],
  [/\/node_modules\/jose\//, 'jose'],
  [/\/node_modules\/(@node-rs\/[^/]+)\//, 'argon2'],
  [/\/node_modules\/eta\//, 'eta (templates)'],
];

function component(frame: CallFrame): string | undefined {
  const { url, functionName } = frame;
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(program)') return 'V8 (program)';
  if (functionName === '(idle)') return 'idle';
  if (functionName === '(root)') return 'root';
  if (url === '') return undefined; // a native function: charged to its caller's component
  for (const [pattern, name] of FAMILIES) if (pattern.test(url)) return name;
  if (url.includes('/node_modules/')) return `npm:${/\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1] ?? '?'}`;
  if (url.includes('/src/storage/sql/node-sqlite-dialect')) return 'node:sqlite adapter';
  if (url.includes('/src/storage/')) return 'gatehouse storage (src/storage)';
  if (url.includes('/src/http/')) return 'gatehouse http (src/http)';
  if (url.includes('/src/')) return 'gatehouse core (src/oauth, crypto, lib…)';
  if (url.startsWith('node:')) {
    if (/crypto/.test(url)) return 'node:crypto';
    if (/_http_|node:net|internal\/http|internal\/streams|internal\/stream_base|node:stream|internal\/net|internal\/dns|internal\/timers|node:events|internal\/url/.test(url)) return 'node:http/net/streams';
    if (/task_queues|async_hooks|promise/.test(url)) return 'node: ticks/microtasks';
    return 'node: other';
  }
  return 'other';
}

/**
 * What a frame's work is for (issue 27's shares). A sample belongs to the first concern found
 * walking its stack from the leaf up, so a JSON.parse inside the store counts as JSON, a hash
 * inside client authentication as crypto; a stack under Kysely's BEGIN or COMMIT is a
 * transaction's, whatever runs at its leaf. Native frames (url '') take their caller's, except
 * V8's JSON builtins.
 */
const CONCERNS: [RegExp, string][] = [
  [/node:internal\/crypto|node:crypto|\/node_modules\/(jose|@node-rs\/[^/]+)\/|\/src\/crypto\/|\/src\/lib\/hash\.ts/, 'crypto'],
  [/\/src\/observability\/|\/node_modules\/(pino|pino-std-serializers|sonic-boom|fast-redact|quick-format-unescaped)\//, 'audit and log'],
  [/\/node_modules\/fast-json-stringify\//, 'JSON'],
  [/\/src\/storage\/|\/node_modules\/(kysely|pg|pg-pool|pg-protocol|pg-types)\//, 'store statements'],
  [/fast-querystring|content-type-parser|\/src\/http\/plugins\/form-only|secure-json-parse|internal\/url|node:querystring/, 'parsing (form, URL, cookies)'],
  [/task_queues|async_hooks|internal\/promise/, 'ticks and microtasks'],
  [/^node:|\/node_modules\/(fastify|find-my-way|avvio|@fastify\/[^/]+|light-my-request|fastq|toad-cache|cookie|eta)\/|\/src\/http\//, 'HTTP (node:http, Fastify, routes, pages)'],
  [/\/src\//, 'gatehouse logic (src/oauth, identity, …)'],
];
const JSON_BUILTINS = new Set(['stringify', 'parse', 'JSONParse', 'JSONStringify', 'serialize']);
const TRANSACTION_FRAMES = new Set(['beginTransaction', 'commitTransaction', 'rollbackTransaction']);

function concernOf(frame: CallFrame): string | undefined {
  const { url, functionName } = frame;
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(program)') return 'V8 (program)';
  if (url === '') return JSON_BUILTINS.has(functionName) ? 'JSON' : undefined;
  if (functionName === 'serialize' && url.includes('/fastify/lib/reply.js')) return 'JSON';
  for (const [pattern, name] of CONCERNS) if (pattern.test(url)) return name;
  return 'other';
}

function short(url: string): string {
  const at = url.search(/\/(src|node_modules)\//);
  return at >= 0 ? url.slice(at + 1) : url.replace(/^file:\/\//, '');
}

/**
 * `skipMs`: the first milliseconds of the profile (start-up: module loading and type stripping,
 * fixture seeding) are left out, so the figures describe the server under load.
 */
export function summarizeProfile(file: string, cpuUsPerOp?: number, skipMs = 0): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  // A node's component: its own, or (native frames) the nearest caller's; sqlite's native calls are named.
  const componentOf = new Map<number, string>();
  const resolve = (id: number): string => {
    const cached = componentOf.get(id);
    if (cached) return cached;
    const node = byId.get(id)!;
    let name = component(node.callFrame);
    if (name === undefined) {
      const up = parent.get(id);
      const callerName = up === undefined ? 'native' : resolve(up);
      name = callerName === 'node:sqlite adapter' ? 'node:sqlite (native)' : callerName === 'node:crypto' ? 'node:crypto' : `${callerName}`;
    }
    // Socket I/O that the database driver starts is the driver's round trip, not HTTP.
    if (name === 'node:http/net/streams' && underPg(id)) name = 'pg driver → node:net (socket I/O)';
    componentOf.set(id, name);
    return name;
  };
  const pgAncestor = new Map<number, boolean>();
  function underPg(id: number): boolean {
    const known = pgAncestor.get(id);
    if (known !== undefined) return known;
    const up = parent.get(id);
    const url = byId.get(id)!.callFrame.url;
    const result = /\/node_modules\/(pg|pg-pool|pg-protocol)\//.test(url) || (up !== undefined && underPg(up));
    pgAncestor.set(id, result);
    return result;
  }

  const selfUs = new Map<number, number>();
  let idleUs = 0;
  let busyUs = 0;
  let at = profile.startTime;
  const from = profile.startTime + skipMs * 1000;
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    at += profile.timeDeltas[i] ?? 0;
    if (at < from) continue;
    // timeDeltas[i] is the time before sample i; attribute the next delta to this sample.
    const dt = profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0;
    if (byId.get(id)?.callFrame.functionName === '(idle)') {
      idleUs += dt;
      continue;
    }
    busyUs += dt;
    selfUs.set(id, (selfUs.get(id) ?? 0) + dt);
  }

  const share = (name: string, us: number): Share => ({
    name,
    percent: busyUs === 0 ? 0 : (100 * us) / busyUs,
    ...(cpuUsPerOp && busyUs ? { usPerOp: (cpuUsPerOp * us) / busyUs } : {}),
  });

  const concerns = new Map<string, number>();
  for (const [id, us] of selfUs) {
    let concern: string | undefined;
    let inTransaction = false;
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      if (TRANSACTION_FRAMES.has(frame.functionName)) inTransaction = true;
      concern ??= concernOf(frame);
    }
    const key = inTransaction ? 'transactions (BEGIN, COMMIT)' : (concern ?? 'other');
    concerns.set(key, (concerns.get(key) ?? 0) + us);
  }
  const components = new Map<string, number>();
  const functions = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    components.set(resolve(id), (components.get(resolve(id)) ?? 0) + us);
    const frame = node.callFrame;
    const key = `${frame.functionName || '(anonymous)'} ${frame.url ? `${short(frame.url)}:${frame.lineNumber + 1}` : '(native)'}`;
    functions.set(key, (functions.get(key) ?? 0) + us);
    // Inclusive time of gatehouse functions: each function counted once per stack.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)!.callFrame;
      if (!f.url.includes('/src/')) continue;
      const name = `${f.functionName || '(anonymous)'} ${short(f.url)}:${f.lineNumber + 1}`;
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + us);
    }
  }
  const top = (map: Map<string, number>, n: number) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, us]) => share(name, us));
  return {
    file,
    busyMs: busyUs / 1000,
    idleMs: idleUs / 1000,
    cpuUsPerOp,
    byComponent: top(components, 30),
    byConcern: top(concerns, 20),
    topSelf: top(functions, 20),
    topGatehouseInclusive: top(inclusive, 15),
  };
}

export function formatProfile(title: string, summary: ProfileSummary): string {
  const row = (s: Share) => `| ${s.name.replace(/\|/g, '\\|')} | ${s.percent.toFixed(1)} % |${s.usPerOp === undefined ? '' : ` ${s.usPerOp.toFixed(1)} µs |`}`;
  const head = summary.cpuUsPerOp ? '| | share of busy samples | ≈ CPU µs per operation |\n|---|---:|---:|' : '| | share of busy samples |\n|---|---:|';
  const busyPerOp = summary.cpuUsPerOp ? `; the server used ${summary.cpuUsPerOp.toFixed(1)} µs of CPU per operation (/proc), shared out below by the samples` : '';
  return [
    `### ${title}`,
    '',
    `Busy ${summary.busyMs.toFixed(0)} ms, idle ${summary.idleMs.toFixed(0)} ms${busyPerOp}.`,
    '',
    'By concern (each sample to the first concern on its stack from the leaf up; under BEGIN/COMMIT: transactions):',
    '',
    head,
    ...summary.byConcern.map(row),
    '',
    'By component (self time; native calls are charged to their caller):',
    '',
    head,
    ...summary.byComponent.filter((s) => s.percent >= 0.5).map(row),
    '',
    'Top functions by self time:',
    '',
    head,
    ...summary.topSelf.slice(0, 12).map(row),
    '',
    "gatehouse's functions by inclusive time (synchronous stacks only: time after an await is not under its caller):",
    '',
    head,
    ...summary.topGatehouseInclusive.slice(0, 10).map(row),
    '',
  ].join('\n');
}
