/** `gatehouse cleanup`: one pass of the janitor the server runs every GATEHOUSE_CLEANUP_INTERVAL. */
import type { Command } from 'commander';
import { withStore, wholeNumber } from './context.ts';
import { printFields, printJson } from './output.ts';

export function registerCleanupCommands(program: Command): void {
  program
    .command('cleanup')
    .description('delete expired codes, tokens, sessions, throttling counters and used client-assertion jtis, expired initial access tokens, audit events past GATEHOUSE_AUDIT_RETENTION, and outbox messages delivered a week ago or dead for a month now (the server also does it every GATEHOUSE_CLEANUP_INTERVAL)')
    .option('--max-batches <n>', 'stop a table after n batches of 1000 rows (default: until it is clean)')
    .option('--json', 'print JSON only')
    .action((flags: { json?: boolean; maxBatches?: string }) =>
      withStore(async ({ admin }) => {
        const maxBatches = flags.maxBatches === undefined ? Number.MAX_SAFE_INTEGER : wholeNumber(flags.maxBatches, '--max-batches');
        const report = await admin.cleanup({ maxBatches });
        if (flags.json) return printJson(report);
        printFields([
          ['sessions', report.sessions],
          ['codes', report.codes],
          ['tokens', report.tokens],
          ['throttling', report.throttling],
          ['assertions', report.assertions],
          ['device authorizations', report.deviceAuthorizations],
          ['audit events', report.auditEvents],
          ['initial access tokens', report.initialAccessTokens],
          ['pending sign-ins', report.pendingSignIns],
          ['passkey challenges', report.passkeyChallenges],
          ['outbox messages', report.outbox],
          ['more left', report.more],
          ['took ms', report.ms],
        ]);
      }),
    );
}
