/**
 * `gatehouse mail …` (docs/mail.md, docs/cli.md): a test message through the outbox, and the
 * outbox itself. `mail test ADDRESS` writes the message (with its audit event), sends it from
 * this process, and waits for the outcome: exit 0 when the SMTP server accepted it; exit 2 when
 * mail is off, or the message is dead, or still pending (then it stays queued and a server
 * retries it). `--no-wait` only queues it for the servers.
 */
import type { Command } from 'commander';
import { OUTBOX_STATUSES, type OutboxStatus } from '../domain/outbox.ts';
import type { OutboxEnvelope } from '../manage/outbox.ts';
import { UsageError, withStore, wholeNumber } from './context.ts';
import { isoTime, printFields, printJson, printTable } from './output.ts';

/** What `mail test` waits for the outcome at most, by default (seconds). */
const DEFAULT_WAIT_S = 60;

function fields(m: OutboxEnvelope): [string, unknown][] {
  return [
    ['id', m.id],
    ['channel', m.channel],
    ['kind', m.kind],
    ['to', m.destination],
    ['status', m.status],
    ['attempts', m.attempts],
    ['next attempt', m.status === 'pending' ? isoTime(m.nextAttemptAt) : undefined],
    ['last error', m.lastError],
    ['created', isoTime(m.createdAt)],
    ['delivered', isoTime(m.deliveredAt)],
  ];
}

export function registerMailCommands(program: Command): void {
  const mail = program.command('mail').description('mail through the outbox: a test message, and the outbox of mail waiting, delivered and dead');
  mail
    .command('test')
    .description('send a test message to ADDRESS through the outbox and wait for the SMTP server to accept it (exit 2 if mail is off, or the message is not delivered)')
    .argument('<address>', 'where to send it')
    .option('--locale <locale>', 'the language of the message: en, fi or sv', 'en')
    .option('--no-wait', 'only queue it: a server sends it')
    .option('--timeout <seconds>', `wait at most this many seconds for the outcome (default ${DEFAULT_WAIT_S})`)
    .option('--json', 'print JSON only')
    .action((address: string, flags: { locale: string; wait: boolean; timeout?: string; json?: boolean }) =>
      withStore(async ({ admin, acting }) => {
        const timeoutMs = (flags.timeout === undefined ? DEFAULT_WAIT_S : wholeNumber(flags.timeout, '--timeout')) * 1000;
        const queued = await admin.mail.sendTest(acting, address, { locale: flags.locale });
        const message = flags.wait ? ((await admin.mail.awaitOutcome(queued.id, { timeoutMs })) ?? queued) : queued;
        const { payload: _payload, ...envelope } = message;
        if (flags.json) printJson(envelope);
        else printFields(fields(envelope));
        if (!flags.wait || message.status === 'delivered') return;
        if (message.status === 'dead') throw new Error(`the test message to ${address} is dead: ${message.lastError ?? 'no error recorded'}`);
        throw new Error(`the test message to ${address} is not delivered yet${message.lastError ? ` (${message.lastError})` : ''}: it stays in the outbox, and a running server retries it`);
      }),
    );
  mail
    .command('outbox')
    .description('list the outbox, newest first')
    .option('--status <status>', `only messages in this status: ${OUTBOX_STATUSES.join(', ')}`)
    .option('--limit <n>', 'at most this many messages (default 50)')
    .option('--json', 'print JSON only')
    .action((flags: { status?: string; limit?: string; json?: boolean }) =>
      withStore(async ({ admin }) => {
        if (flags.status !== undefined && !(OUTBOX_STATUSES as readonly string[]).includes(flags.status)) throw new UsageError(`--status must be one of ${OUTBOX_STATUSES.join(', ')}`);
        const limit = flags.limit === undefined ? 50 : wholeNumber(flags.limit, '--limit');
        const messages = await admin.outbox.page({ status: flags.status as OutboxStatus | undefined, limit });
        if (flags.json) return printJson(messages);
        printTable(
          ['id', 'kind', 'to', 'status', 'attempts', 'created', 'last error'],
          messages.map((m) => [m.id, m.kind, m.destination, m.status, m.attempts, isoTime(m.createdAt), m.lastError ?? '']),
          'no messages',
        );
      }),
    );
  mail
    .command('redeliver')
    .description('make a dead message pending again: a server sends it at its next look')
    .argument('<id>', 'the message id')
    .option('--json', 'print JSON only')
    .action((id: string, flags: { json?: boolean }) =>
      withStore(async ({ admin, acting }) => {
        const message = await admin.outbox.redeliver(acting, id);
        if (message === undefined) throw new UsageError(`no outbox message ${id}`);
        if (flags.json) return printJson(message);
        printFields(fields(message));
      }),
    );
}
