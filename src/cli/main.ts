/**
 * The `gatehouse` command (bin/gatehouse.js). It reads the same environment as the server and
 * works on the same store, so it can run before the server ever started, or beside it: SQLite
 * runs in WAL mode with a busy timeout, and PostgreSQL is shared anyway.
 */
import { CommanderError } from 'commander';
import { buildProgram, describeError } from './program.ts';

const EXIT_ERROR = 2;

export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return 0;
  } catch (error) {
    // Commander has printed its own message (or the help) already.
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : EXIT_ERROR;
    process.stderr.write(`gatehouse: ${describeError(error)}\n`);
    return EXIT_ERROR;
  }
}

// Set the code rather than exit: stdout is flushed and the store closed before the process ends.
process.exitCode = await main(process.argv);
