/**
 * `gatehouse webhooks …` (docs/webhooks.md, docs/cli.md): register webhook endpoints, list, show,
 * change and remove them, rotate an endpoint's secret, and read its delivery log and redeliver.
 * The secret is printed once, by `add` and `rotate-secret`. A running server picks up a change
 * within a few seconds (it reads the endpoints again every 5 s) and sends the deliveries. Exit 2
 * for a URL the outbound rules refuse, an unknown event type, or an unknown endpoint.
 */
import type { Command } from 'commander';
import { OUTBOX_STATUSES, type OutboxStatus } from '../domain/outbox.ts';
import { ALL_EVENTS, type WebhookEndpoint } from '../domain/webhook.ts';
import type { OutboxEnvelope } from '../manage/outbox.ts';
import { collect, UsageError, withStore, wholeNumber } from './context.ts';
import { isoTime, printFields, printJson, printTable } from './output.ts';

const eventsText = (e: WebhookEndpoint) => (e.events === ALL_EVENTS ? ALL_EVENTS : e.events.join(' '));

function fields(e: WebhookEndpoint, secret?: string): [string, unknown][] {
  return [
    ['id', e.id],
    ['url', e.url],
    ['description', e.description],
    ['events', eventsText(e)],
    ['enabled', e.enabled ? 'yes' : 'no'],
    ['created', isoTime(e.createdAt)],
    ['updated', isoTime(e.updatedAt)],
    ['previous secret valid until', isoTime(e.previousSecretUntil)],
    ['secret', secret],
  ];
}

const deliveryRow = (m: OutboxEnvelope) => [m.id, m.kind.replace(/^webhook\./, ''), m.status, String(m.attempts), m.responseStatus === undefined ? '' : String(m.responseStatus), isoTime(m.createdAt), m.lastError ?? ''];

/** A `--events` list: names of the audit catalogue, comma- or space-separated, or `*`. */
const eventNames = (given: string[]): string[] => given.flatMap((g) => g.split(/[\s,]+/)).filter((g) => g !== '');

function enabledFlag(flags: { enable?: boolean; disable?: boolean }): boolean | undefined {
  if (flags.enable && flags.disable) throw new UsageError('give --enable or --disable, not both');
  return flags.enable ? true : flags.disable ? false : undefined;
}

export function registerWebhookCommands(program: Command): void {
  const webhooks = program.command('webhooks').description('webhook endpoints: signed HTTP POSTs of audit events to your systems (docs/webhooks.md)');
  webhooks
    .command('add')
    .description('register an endpoint; prints its signing secret, once')
    .argument('<url>', 'https URL (http only to a loopback host with GATEHOUSE_OUTBOUND_LOOPBACK)')
    .requiredOption('--events <names>', 'audit event types to send, comma-separated or repeated (docs/webhooks.md, "Event catalogue"), or "*" for all', collect)
    .option('--description <text>', 'what it is for', '')
    .option('--disabled', 'register it disabled')
    .option('--json', 'print JSON only')
    .action((url: string, flags: { events: string[]; description: string; disabled?: boolean; json?: boolean }) =>
      withStore(async ({ admin, acting }) => {
        const made = await admin.webhooks.create(acting, { url, description: flags.description, events: eventNames(flags.events), enabled: !flags.disabled });
        if (flags.json) return printJson({ ...made.endpoint, secret: made.secret });
        printFields(fields(made.endpoint, made.secret));
      }),
    );
  webhooks
    .command('list')
    .description('list the endpoints, oldest first')
    .option('--json', 'print JSON only')
    .action((flags: { json?: boolean }) =>
      withStore(async ({ admin }) => {
        const rows = await admin.webhooks.list();
        if (flags.json) return printJson(rows);
        printTable(['id', 'url', 'events', 'enabled'], rows.map((e) => [e.id, e.url, eventsText(e), e.enabled ? 'yes' : 'no']), 'no webhook endpoints');
      }),
    );
  webhooks
    .command('show')
    .description('one endpoint (never its secret)')
    .argument('<id>', 'the endpoint id')
    .option('--json', 'print JSON only')
    .action((id: string, flags: { json?: boolean }) =>
      withStore(async ({ admin }) => {
        const endpoint = await admin.webhooks.get(id);
        if (endpoint === undefined) throw new UsageError(`no webhook endpoint ${id}`);
        if (flags.json) return printJson(endpoint);
        printFields(fields(endpoint));
      }),
    );
  webhooks
    .command('update')
    .description('change an endpoint: only what is given changes')
    .argument('<id>', 'the endpoint id')
    .option('--url <url>', 'a new URL')
    .option('--events <names>', 'the new list of event types, or "*"', collect)
    .option('--description <text>', 'a new description')
    .option('--enable', 'send to it')
    .option('--disable', 'send nothing to it (its pending deliveries die)')
    .option('--json', 'print JSON only')
    .action((id: string, flags: { url?: string; events?: string[]; description?: string; enable?: boolean; disable?: boolean; json?: boolean }) =>
      withStore(async ({ admin, acting }) => {
        const changes = { url: flags.url, description: flags.description, events: flags.events && eventNames(flags.events), enabled: enabledFlag(flags) };
        if (Object.values(changes).every((v) => v === undefined)) throw new UsageError('nothing to change: give --url, --events, --description, --enable or --disable');
        const endpoint = await admin.webhooks.update(acting, id, changes);
        if (endpoint === undefined) throw new UsageError(`no webhook endpoint ${id}`);
        if (flags.json) return printJson(endpoint);
        printFields(fields(endpoint));
      }),
    );
  webhooks
    .command('remove')
    .description('delete an endpoint; its pending deliveries die')
    .argument('<id>', 'the endpoint id')
    .action((id: string) =>
      withStore(async ({ admin, acting }) => {
        if (!(await admin.webhooks.delete(acting, id))) throw new UsageError(`no webhook endpoint ${id}`);
        process.stdout.write(`removed webhook endpoint ${id}\n`);
      }),
    );
  webhooks
    .command('rotate-secret')
    .description('a new signing secret, printed once; the previous one still signs beside it for GATEHOUSE_WEBHOOK_SECRET_OVERLAP')
    .argument('<id>', 'the endpoint id')
    .option('--json', 'print JSON only')
    .action((id: string, flags: { json?: boolean }) =>
      withStore(async ({ admin, acting }) => {
        const rotated = await admin.webhooks.rotateSecret(acting, id);
        if (rotated === undefined) throw new UsageError(`no webhook endpoint ${id}`);
        if (flags.json) return printJson({ ...rotated.endpoint, secret: rotated.secret });
        printFields(fields(rotated.endpoint, rotated.secret));
      }),
    );
  webhooks
    .command('deliveries')
    .description("an endpoint's deliveries, newest first: status, attempts, the HTTP status it answered, the last error")
    .argument('<id>', 'the endpoint id')
    .option('--status <status>', `only deliveries in this status: ${OUTBOX_STATUSES.join(', ')}`)
    .option('--limit <n>', 'at most this many (default 50)')
    .option('--json', 'print JSON only')
    .action((id: string, flags: { status?: string; limit?: string; json?: boolean }) =>
      withStore(async ({ admin }) => {
        if (flags.status !== undefined && !(OUTBOX_STATUSES as readonly string[]).includes(flags.status)) throw new UsageError(`--status must be one of ${OUTBOX_STATUSES.join(', ')}`);
        const limit = flags.limit === undefined ? 50 : wholeNumber(flags.limit, '--limit');
        const rows = await admin.webhooks.deliveries(id, { status: flags.status as OutboxStatus | undefined, limit });
        if (rows === undefined) throw new UsageError(`no webhook endpoint ${id}`);
        if (flags.json) return printJson(rows);
        printTable(['id', 'event', 'status', 'attempts', 'answer', 'created', 'last error'], rows.map(deliveryRow), 'no deliveries');
      }),
    );
  webhooks
    .command('redeliver')
    .description('send a dead or delivered delivery again, with the same webhook-id')
    .argument('<id>', 'the endpoint id')
    .argument('<delivery>', 'the delivery id (its webhook-id)')
    .option('--json', 'print JSON only')
    .action((id: string, delivery: string, flags: { json?: boolean }) =>
      withStore(async ({ admin, acting }) => {
        const message = await admin.webhooks.redeliver(acting, id, delivery);
        if (message === undefined) throw new UsageError(`no delivery ${delivery} of webhook endpoint ${id}`);
        if (flags.json) return printJson(message);
        printTable(['id', 'event', 'status', 'attempts', 'answer', 'created', 'last error'], [deliveryRow(message)], '');
      }),
    );
}
