/**
 * Running this checkout's `gatehouse` command (bin/gatehouse.js) as a test would a user's shell,
 * and what it writes on stderr before anything else when it opens a store
 * (docs/cli.md, Conventions): `store: SQLite PATH` or `store: PostgreSQL URL`. The test
 * databases' URLs carry no password, so the CLI shows them as they are.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_HOME } from '../../src/config.ts';
import { outputOf, type ChildOutput } from './child-output.ts';

export function storeLineOf(env: Record<string, string | undefined>): string {
  const url = env.GATEHOUSE_DATABASE_URL;
  if (url === undefined) return `store: SQLite ${join(env.GATEHOUSE_HOME ?? DEFAULT_HOME, 'gatehouse.db')}\n`;
  return url.startsWith('sqlite:') ? `store: SQLite ${url.slice('sqlite:'.length)}\n` : `store: PostgreSQL ${url}\n`;
}

const BIN = fileURLToPath(new URL('../../bin/gatehouse.js', import.meta.url));

export type CliResult = ChildOutput;

/** Runs `gatehouse ARGS` with PATH, a silent log and `env` only; `input` is its stdin (default empty). */
export function runGatehouse(args: string[], env: Record<string, string>, input = ''): Promise<CliResult> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', GATEHOUSE_LOG_LEVEL: 'silent', ...env }, stdio: ['pipe', 'pipe', 'pipe'], timeout: 60_000 });
  const output = outputOf(child);
  child.stdin.end(input);
  return output;
}
