/** `gatehouse migrate` and `gatehouse serve`: the database schema and the server itself. */
import type { Command } from 'commander';
import { configNamingStore } from './context.ts';
import { printJson, printLine } from './output.ts';

export function registerServerCommands(program: Command): void {
  program
    .command('migrate')
    .description('create the store, or bring its schema up to date (serve also does; other commands refuse a missing store)')
    .option('--json', 'print JSON only')
    .action(async (flags: { json?: boolean }) => {
      const config = configNamingStore();
      const { migrateStore } = await import('../app.ts');
      const ran = await migrateStore(config);
      if (flags.json) return printJson({ migrations_run: ran });
      printLine(ran.length === 0 ? 'Database schema is up to date.' : `Ran ${ran.length} migration${ran.length === 1 ? '' : 's'}: ${ran.join(', ')}.`);
    });

  program
    .command('serve')
    .description('run the server (the same as `npm start`); stops gracefully on SIGTERM or SIGINT')
    .action(async () => {
      const { serve } = await import('../main.ts');
      try {
        await serve();
      } catch (error) {
        // The store or the port may still be held open: leave at once rather than hang.
        process.stderr.write(`gatehouse: ${(error as Error).message}\n`);
        process.exit(2);
      }
    });
}
