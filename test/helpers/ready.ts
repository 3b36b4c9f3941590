import type { ChildProcess } from 'node:child_process';

/**
 * Resolves once a gatehouse started as a child process has logged its ready line (at
 * GATEHOUSE_LOG_LEVEL info); rejects, with what it wrote, when it exits first or takes longer.
 */
export function untilReady(child: ChildProcess, output: () => string, withinMs = 30_000): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gatehouse did not become ready:\n${output()}`)), withinMs);
    child.once('exit', (code) => reject(new Error(`gatehouse exited with ${code}:\n${output()}`)));
    child.stdout!.on('data', () => {
      if (output().includes('gatehouse is ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
}
