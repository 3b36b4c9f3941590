/**
 * Running the docs' shell commands as a reader would, from this checkout: `bash` runs a script and
 * keeps its output; NPX_GATEHOUSE makes `npx gatehouse …` this checkout's bin/gatehouse.js (and any
 * other `npx` the real one), so a block runs exactly as written.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { outputOf, type ChildOutput } from './child-output.ts';

const BIN = fileURLToPath(new URL('../../bin/gatehouse.js', import.meta.url));

/** A bash function, to put before a script: `npx gatehouse …` runs this checkout's CLI. */
export const NPX_GATEHOUSE = `npx() { if [ "$1" = gatehouse ]; then shift; node ${JSON.stringify(BIN)} "$@"; else command npx "$@"; fi; }\n`;

/** Runs `script` in bash with `flags` (`-euo pipefail` by default), PATH and `env` only, in `cwd`. */
export function bash(script: string, cwd: string, env: Record<string, string>, flags = ['-euo', 'pipefail']): Promise<ChildOutput> {
  return outputOf(spawn('bash', [...flags, '-c', script], { cwd, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
}
