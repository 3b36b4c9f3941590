/** One timed autocannon run and what the report needs from it. */
import autocannon from 'autocannon';
import { cpuSeconds, processTree, sampleRss, type Rss } from './processes.ts';

export interface RoundResult {
  seconds: number;
  /** Responses per second, whatever their status. */
  reqPerSec: number;
  /** Completed operations per second (responses with the operation's status). */
  opsPerSec: number;
  /** CPU seconds the server processes used during the run (every thread, every worker). */
  serverCpuSeconds: number | undefined;
  /**
   * Operations per CPU-second of the server: what one fully busy core would do. Unlike opsPerSec it
   * is not capped by the load generator, and other processes on the machine barely move it.
   */
  opsPerCpuSecond: number | undefined;
  p50: number;
  p99: number;
  /** Connection errors and timeouts. */
  errors: number;
  /** Responses outside 2xx (a 302 of S5/S6 is one, yet expected). */
  non2xx: number;
  /** Responses with a status the scenario does not expect. */
  unexpected: number;
  statusCounts: Record<string, number>;
  /** Largest RSS of any server process during the run (MiB). */
  rssMiB: Rss | undefined;
  warning?: string;
}

export interface LoadOptions {
  base: string;
  requests: autocannon.Request[];
  seconds: number;
  /** Stop after this many requests rather than after `seconds`. */
  amount?: number;
  connections: number;
  ok: number[];
  opStatus: number;
  /** The server's root pid, to sample RSS; undefined: no sampling. */
  serverPid?: number;
  /** Completed operations as the scenario counted them (a login of several redirects); default: responses with opStatus. */
  operations?: () => number;
}

export async function runLoad(options: LoadOptions): Promise<RoundResult> {
  const sampler = options.serverPid === undefined ? undefined : sampleRss(options.serverPid);
  const tree = options.serverPid === undefined ? [] : processTree(options.serverPid);
  const cpuBefore = cpuSeconds(tree);
  let result: autocannon.Result;
  let rss: Rss | undefined;
  try {
    result = await autocannon({
      url: options.base,
      connections: options.connections,
      duration: options.seconds,
      ...(options.amount !== undefined ? { amount: Math.max(options.amount, options.connections) } : {}),
      requests: options.requests,
      timeout: 10,
    });
  } finally {
    // Stopped even when autocannon fails, so its timer does not keep the process alive.
    rss = sampler?.stop();
  }
  const serverCpuSeconds = tree.length ? cpuSeconds(tree) - cpuBefore : undefined;
  const statusCounts: Record<string, number> = {};
  let total = 0;
  for (const [status, { count }] of Object.entries(result.statusCodeStats ?? {})) {
    statusCounts[status] = count;
    total += count;
  }
  const okCount = options.ok.reduce((sum, status) => sum + (statusCounts[String(status)] ?? 0), 0);
  const seconds = result.duration || options.seconds;
  const ops = options.operations ? options.operations() : (statusCounts[String(options.opStatus)] ?? 0);
  return {
    seconds,
    reqPerSec: total / seconds,
    opsPerSec: ops / seconds,
    serverCpuSeconds,
    opsPerCpuSecond: serverCpuSeconds ? ops / serverCpuSeconds : undefined,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    unexpected: total - okCount,
    statusCounts,
    rssMiB: rss,
  };
}

/**
 * The run with `count` of its operation-status responses taken off the operations and counted as
 * unexpected: responses whose status was right but whose body was not (S9: a 400 that is not
 * `authorization_pending`).
 */
export function withMismatches(result: RoundResult, count: number): RoundResult {
  if (count === 0) return result;
  const ops = result.opsPerSec * result.seconds - count;
  return {
    ...result,
    opsPerSec: ops / result.seconds,
    opsPerCpuSecond: result.serverCpuSeconds ? ops / result.serverCpuSeconds : undefined,
    unexpected: result.unexpected + count,
  };
}

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export interface Summary {
  rounds: number;
  reqPerSec: number;
  opsPerSec: number;
  opsPerCpuSecond: number | undefined;
  /** Server CPU use as a share of the wall time (1 = one core fully busy). */
  serverCpuShare: number | undefined;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  unexpected: number;
  rssMiB: Rss | undefined;
  warnings: string[];
  all: RoundResult[];
}

/** Medians of the rounds' rates and latencies; sums of their errors; the largest RSS. */
export function summarize(rounds: RoundResult[]): Summary {
  const rss = rounds.map((r) => r.rssMiB).filter((v): v is Rss => v !== undefined);
  return {
    rounds: rounds.length,
    reqPerSec: median(rounds.map((r) => r.reqPerSec)),
    opsPerSec: median(rounds.map((r) => r.opsPerSec)),
    opsPerCpuSecond: optionalMedian(rounds.map((r) => r.opsPerCpuSecond)),
    serverCpuShare: optionalMedian(rounds.map((r) => (r.serverCpuSeconds === undefined ? undefined : r.serverCpuSeconds / r.seconds))),
    p50: median(rounds.map((r) => r.p50)),
    p99: median(rounds.map((r) => r.p99)),
    errors: rounds.reduce((s, r) => s + r.errors, 0),
    non2xx: rounds.reduce((s, r) => s + r.non2xx, 0),
    unexpected: rounds.reduce((s, r) => s + r.unexpected, 0),
    rssMiB: rss.length ? { rss: Math.max(...rss.map((r) => r.rss)), anon: Math.max(...rss.map((r) => r.anon)) } : undefined,
    warnings: rounds.map((r) => r.warning).filter((w): w is string => w !== undefined),
    all: rounds,
  };
}

function optionalMedian(values: (number | undefined)[]): number | undefined {
  const present = values.filter((v): v is number => v !== undefined);
  return present.length ? median(present) : undefined;
}
