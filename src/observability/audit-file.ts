/**
 * Audit events appended to a file of their own (GATEHOUSE_AUDIT_LOG), as JSON lines. Several
 * processes (server instances, CLI commands) may append to one file: each line is one write.
 */
import { pino } from 'pino';
import { loggerAuditSink, type AuditSink } from './audit.ts';

export interface AuditFile {
  sink: AuditSink;
  /** Writes out what is buffered and closes the file. */
  close(): Promise<void>;
}

/** `sync`: each event is on disk when `emit` returns (the CLI, which exits right after). */
export function openAuditFile(path: string, options: { sync: boolean }): AuditFile {
  const destination = pino.destination({ dest: path, append: true, mkdir: true, sync: options.sync });
  const logger = pino({ level: 'info' }, destination).child({ audit: true });
  return {
    sink: loggerAuditSink(logger),
    close: () =>
      new Promise<void>((resolve) => {
        destination.once('close', () => resolve());
        destination.once('error', () => resolve());
        destination.end();
      }),
  };
}
