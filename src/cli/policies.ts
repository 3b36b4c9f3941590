/** `gatehouse policy …`: authorization policies (who may use a client, which extra claims it gets; docs/authorization.md). */
import type { Command } from 'commander';
import { policyDocumentJson, type Policy } from '../domain/policy.ts';
import { createPolicy, deletePolicy, getPolicy, listPolicies, updatePolicy } from '../oauth/policy/manage.ts';
import { systemClock } from '../lib/clock.ts';
import { cliActor, readJsonFile, withStore } from './context.ts';
import { isoTime, printJson, printLine, printTable } from './output.ts';

interface JsonFlag {
  json?: boolean;
}

/** The policy as printed: its document, with the version and times the store keeps. */
function policyView(policy: Policy, clients?: string[]): Record<string, unknown> {
  return {
    ...policyDocumentJson(policy.document),
    version: policy.version,
    ...(clients === undefined ? {} : { clients }),
    created_at: isoTime(policy.createdAt),
    updated_at: isoTime(policy.updatedAt),
  };
}

export function registerPolicyCommands(program: Command): void {
  const policy = program.command('policy').description('manage authorization policies: who may use a client, and the extra claims its tokens carry');

  policy
    .command('create')
    .description('create a policy from a JSON document (docs/authorization.md, "Authorization policies")')
    .requiredOption('--file <file>', 'the policy document (JSON)')
    .option('--json', 'print JSON only')
    .action((flags: JsonFlag & { file: string }) =>
      withStore(async ({ store, audit }) => {
        const created = await createPolicy({ policies: store.policies, clock: systemClock }, await readJsonFile(flags.file));
        audit.emit({ event: 'policy.created', policy: created.document.name, version: created.version, actor: cliActor() });
        if (flags.json) return printJson(policyView(created));
        printLine(`Created policy ${created.document.name} (version ${created.version}).`);
      }),
    );

  policy
    .command('list')
    .description('list policies')
    .option('--json', 'print JSON only')
    .action((flags: JsonFlag) =>
      withStore(async ({ store }) => {
        const policies = await listPolicies({ policies: store.policies });
        if (flags.json) return printJson(policies.map((p) => policyView(p)));
        printTable(
          ['NAME', 'VERSION', 'ACCESS', 'CLAIMS'],
          policies.map((p) => [p.document.name, p.version, p.document.access === undefined ? 'everyone' : 'restricted', p.document.claims.map((c) => c.claim)]),
          'No policies.',
        );
      }),
    );

  policy
    .command('show')
    .description('print a policy document, with its version and the clients that use it')
    .argument('<name>')
    .action((name: string) =>
      withStore(async ({ store }) => {
        const found = await getPolicy({ policies: store.policies }, name);
        printJson(policyView(found, await store.policies.clientsUsing(name)));
      }),
    );

  policy
    .command('update')
    .description('replace a policy document (its name stays); takes effect at the next response of every client using it')
    .argument('<name>')
    .requiredOption('--file <file>', 'the new policy document (JSON)')
    .option('--json', 'print JSON only')
    .action((name: string, flags: JsonFlag & { file: string }) =>
      withStore(async ({ store, audit }) => {
        const updated = await updatePolicy({ policies: store.policies, clock: systemClock }, name, await readJsonFile(flags.file));
        audit.emit({ event: 'policy.updated', policy: updated.document.name, version: updated.version, actor: cliActor() });
        if (flags.json) return printJson(policyView(updated));
        printLine(`Updated policy ${updated.document.name} (version ${updated.version}).`);
      }),
    );

  policy
    .command('delete')
    .description('delete a policy no client uses')
    .argument('<name>')
    .option('--json', 'print JSON only')
    .action((name: string, flags: JsonFlag) =>
      withStore(async ({ store, audit }) => {
        await deletePolicy({ policies: store.policies }, name);
        audit.emit({ event: 'policy.deleted', policy: name, actor: cliActor() });
        if (flags.json) return printJson({ name, deleted: true });
        printLine(`Deleted policy ${name}.`);
      }),
    );
}
