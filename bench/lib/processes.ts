/**
 * Every process the benchmark starts goes through here, so that every one of them is ended
 * however the run ends: normally, on an exception, or on SIGINT/SIGTERM. Each child is started in
 * its own process group and the whole group is signalled, which also reaches cluster workers.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const children = new Set<ChildProcess>();
let hooksInstalled = false;

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // Already gone.
    }
  }
}

const cleanups = new Set<() => void>();

/** Registers synchronous clean-up (temporary files) to run however the run ends; returns its removal. */
export function onCleanup(cleanup: () => void): () => void {
  installHooks();
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}

/** Ends every child still running (SIGKILL), then runs the clean-ups: the last word on any exit path. */
export function killAll(): void {
  for (const child of children) killGroup(child, 'SIGKILL');
  children.clear();
  for (const cleanup of cleanups) {
    try {
      cleanup();
    } catch {
      // Best effort: the process is ending.
    }
  }
  cleanups.clear();
}

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      process.stderr.write(`\nbench: ${signal}, stopping every process it started\n`);
      killAll();
      process.exit(130);
    });
  }
  process.on('uncaughtException', (error) => {
    process.stderr.write(`bench: ${error.stack ?? error.message}\n`);
    killAll();
    process.exit(1);
  });
  process.on('unhandledRejection', (error) => {
    process.stderr.write(`bench: ${(error as Error)?.stack ?? String(error)}\n`);
    killAll();
    process.exit(1);
  });
}

export interface Started {
  child: ChildProcess;
  pid: number;
  /** What the child wrote to stderr so far (bounded), for error messages. */
  stderr(): string;
  /** Resolves with the exit code (or the signal's name) when the child has exited. */
  exited: Promise<number | string>;
  /** SIGTERM to the group, then SIGKILL after `graceMs`; resolves when the child has exited. */
  stop(graceMs?: number): Promise<number | string>;
}

export interface StartOptions {
  env?: NodeJS.ProcessEnv;
  /** Cores to pin the child to with taskset (e.g. "0"); undefined: no pinning. */
  cpus?: string;
  /** Collect stdout instead of ignoring it. */
  onStdout?: (chunk: string) => void;
}

/** Starts `node ARGS…` (pinned with taskset when asked) in its own process group, tracked. */
export function startNode(args: string[], options: StartOptions = {}): Started {
  installHooks();
  const command = options.cpus === undefined ? process.execPath : 'taskset';
  const argv = options.cpus === undefined ? args : ['-c', options.cpus, process.execPath, ...args];
  const child = spawn(command, argv, {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', options.onStdout ? 'pipe' : 'ignore', 'pipe'],
    detached: true,
  });
  children.add(child);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-20_000);
  });
  if (options.onStdout) child.stdout?.setEncoding('utf8').on('data', options.onStdout);
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve(code ?? signal ?? 'unknown');
    });
    child.once('error', (error) => {
      children.delete(child);
      stderr += `\n${error.message}`;
      resolve('spawn error');
    });
  });
  return {
    child,
    pid: child.pid ?? -1,
    stderr: () => stderr,
    exited,
    async stop(graceMs = 15_000) {
      killGroup(child, 'SIGTERM');
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
      const result = await exited;
      clearTimeout(timer);
      // Whatever is left in the group (a worker that outlived its primary) goes too.
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // The group is empty.
        }
      }
      return result;
    },
  };
}

/** Runs a node script to completion (pinned when asked) and returns its stdout. */
export async function runNode(args: string[], options: Omit<StartOptions, 'onStdout'> = {}): Promise<string> {
  let out = '';
  const started = startNode(args, { ...options, onStdout: (chunk) => (out += chunk) });
  const code = await started.exited;
  if (code !== 0) throw new Error(`node ${args.join(' ')} exited with ${code}:\n${started.stderr()}`);
  return out;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no free port'))));
    });
  });
}

/** Polls `url` until it answers 200, failing early if the process exits. */
export async function waitUntilReady(url: string, started: Started, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited: number | string | undefined;
  void started.exited.then((code) => (exited = code));
  while (Date.now() < deadline) {
    if (exited !== undefined) throw new Error(`the server exited (${exited}) before it was ready:\n${started.stderr()}`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} was not ready within ${timeoutMs} ms:\n${started.stderr()}`);
}

/** The process and its descendants (cluster workers), from /proc. */
export function processTree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    try {
      const children = readFileSync(`/proc/${out[i]}/task/${out[i]}/children`, 'utf8').trim();
      if (children) out.push(...children.split(/\s+/).map(Number));
    } catch {
      // Gone, or no /proc.
    }
  }
  return out;
}

export interface Rss {
  /** VmRSS: everything resident, including the node binary's pages shared with other processes. */
  rss: number;
  /** RssAnon: the process's own memory (heaps, stacks, buffers). */
  anon: number;
}

/** Resident memory of one process in MiB, or undefined when it is gone. */
export function rssMiB(pid: number): Rss | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = /^VmRSS:\s+(\d+) kB/m.exec(status);
    const anon = /^RssAnon:\s+(\d+) kB/m.exec(status);
    return rss ? { rss: Number(rss[1]) / 1024, anon: Number(anon?.[1] ?? 0) / 1024 } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Samples the RSS of the server processes (the primary's descendants when it is a cluster, else
 * the process itself) every `intervalMs`; `stop()` returns the largest value seen per process.
 */
export function sampleRss(rootPid: number, intervalMs = 250): { stop(): Rss } {
  const max: Rss = { rss: 0, anon: 0 };
  const sample = () => {
    const tree = processTree(rootPid);
    // taskset execs node, so the root is the server; in a cluster the workers are its children.
    const servers = tree.length > 1 ? tree.slice(1) : tree;
    for (const pid of servers) {
      const now = rssMiB(pid);
      if (!now) continue;
      max.rss = Math.max(max.rss, now.rss);
      max.anon = Math.max(max.anon, now.anon);
    }
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return max;
    },
  };
}

let clockTicks: number | undefined;

/**
 * CPU time (user + system, every thread) that the processes have used so far, in seconds, from
 * /proc/PID/stat; 0 for a process that is gone.
 */
export function cpuSeconds(pids: number[]): number {
  if (clockTicks === undefined) {
    const result = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    clockTicks = Number(result.stdout?.trim()) || 100;
  }
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // Gone.
    }
  }
  return ticks / clockTicks;
}

/** Pins this process (every thread of it) to `cpus`; false when taskset is missing or fails. */
export function pinSelf(cpus: string): boolean {
  const result = spawnSync('taskset', ['-a', '-cp', cpus, String(process.pid)], { stdio: 'ignore' });
  return result.status === 0;
}

export function hasTaskset(): boolean {
  return spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status === 0;
}

/**
 * The pids of every process whose command name is `name` (from /proc/PID/comm): the PostgreSQL
 * server's backends, for the scale-out run's share of the database. Read only; nothing is signalled.
 */
export function pidsNamed(name: string): number[] {
  const out: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) out.push(Number(entry));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return out;
}

/** Jiffies of the whole machine so far (/proc/stat's first line): all of them, and the idle ones (idle + iowait). */
export function machineJiffies(): { total: number; idle: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
    return { total: fields.reduce((sum, value) => sum + value, 0), idle: fields[3]! + (fields[4] ?? 0) };
  } catch {
    return undefined;
  }
}
