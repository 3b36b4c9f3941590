/**
 * gatehouse as a real process (`node src/main.ts`, one worker), for the tests that kill, stop
 * and multiply servers. Every process started here is SIGKILLed when the test process exits,
 * whatever happened, so no server outlives its test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { outputOf, type ChildOutput } from '../helpers/child-output.ts';
import { freePort } from '../helpers/server.ts';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
export const CLI = fileURLToPath(new URL('../../bin/gatehouse.js', import.meta.url));

/**
 * Node's on-disk compile cache, where bin/gatehouse.js keeps it too (enableCompileCache's default):
 * a server starts in about half the time once the cache is warm, and the tests start many.
 */
const COMPILE_CACHE = join(tmpdir(), 'node-compile-cache');

const running = new Set<ChildProcess>();
let hooked = false;

function killEverything(): void {
  for (const child of running) {
    try {
      child.kill('SIGKILL');
    } catch {
      // Already gone.
    }
  }
  running.clear();
}

export interface GatehouseProcess {
  url: string;
  port: number;
  pid: number;
  child: ChildProcess;
  /** Resolves with the exit code, or the signal's name, once the process has exited. */
  exited: Promise<number | string>;
  /** The last lines it wrote (logs at GATEHOUSE_LOG_LEVEL, default warn), for failure messages. */
  output(): string;
  /** SIGKILL, and wait for the exit. */
  kill(): Promise<number | string>;
  /** SIGTERM, then SIGKILL after `graceMs`; the exit code or signal. */
  stop(graceMs?: number): Promise<number | string>;
}

export interface StartOptions {
  databaseUrl: string;
  env?: Record<string, string>;
  port?: number;
  /** How long to wait for /health/ready (ms). */
  readyWithin?: number;
}

/** Starts `node src/main.ts` and resolves once /health/ready answers 200. */
export async function startGatehouse(options: StartOptions): Promise<GatehouseProcess> {
  if (!hooked) {
    hooked = true;
    process.on('exit', killEverything);
  }
  const port = options.port ?? (await freePort());
  const child = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env.PATH ?? '',
      GATEHOUSE_WORKERS: '1',
      GATEHOUSE_HOST: '127.0.0.1',
      GATEHOUSE_PORT: String(port),
      GATEHOUSE_DATABASE_URL: options.databaseUrl,
      GATEHOUSE_LOG_LEVEL: 'warn',
      GATEHOUSE_CLEANUP_INTERVAL: '0',
      NODE_COMPILE_CACHE: COMPILE_CACHE,
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve(code ?? signal ?? 'unknown');
    });
  });
  let exitedEarly: number | string | undefined;
  void exited.then((how) => (exitedEarly = how));

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.readyWithin ?? 20_000);
  for (;;) {
    if (exitedEarly !== undefined) throw new Error(`gatehouse exited (${exitedEarly}) before it was ready:\n${output}`);
    try {
      if ((await fetch(`${url}/health/ready`)).status === 200) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`gatehouse was not ready within ${options.readyWithin ?? 20_000} ms:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  return {
    url,
    port,
    pid: child.pid!,
    child,
    exited,
    output: () => output,
    async kill() {
      child.kill('SIGKILL');
      return exited;
    },
    async stop(graceMs = 10_000) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const how = await exited;
      clearTimeout(timer);
      return how;
    },
  };
}

/** Runs the `gatehouse` CLI to completion. */
export function runCli(args: string[], env: Record<string, string>): Promise<ChildOutput> {
  return outputOf(spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', GATEHOUSE_LOG_LEVEL: 'silent', ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
}

export interface Started {
  /** The JSON log lines on stdout. */
  lines: Record<string, unknown>[];
  stderr: string;
  code: number | null;
}

/**
 * Runs `node ...args` (a server), waits for its ready line, stops it with SIGTERM, and resolves
 * with everything it wrote and its exit code.
 */
export function startAndStop(args: string[], env: Record<string, string>, cwd?: string): Promise<Started> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('"msg":"gatehouse is ready"')) child.kill('SIGTERM');
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ lines: stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>), stderr, code }));
  });
}
