import { Writable } from 'node:stream';
import type { FastifyServerOptions } from 'fastify';
import type { LogLevel } from '../../src/config.ts';
import { loggerOptions } from '../../src/observability/logger.ts';

/** gatehouse's own logger options at `level`, writing into memory instead of stdout. */
export function capturedLogger(level: LogLevel): { logger: FastifyServerOptions['logger']; text(): string } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { logger: { ...(loggerOptions(level) as Record<string, unknown>), stream }, text: () => lines.join('') };
}
