/**
 * What a child process printed and how it ended: the one collector the CLI and shell helpers share.
 */
import type { ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

export interface ChildOutput {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Resolves when `child` closes, with everything it wrote to stdout and stderr. */
export function outputOf(child: ChildProcessByStdio<Writable | null, Readable, Readable>): Promise<ChildOutput> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
