/** `gatehouse policy …`: authorization policies (who may use a client, which extra claims it gets; docs/authorization.md). */
import type { Command } from 'commander';
import { policyDocumentJson, type Policy } from '../domain/policy.ts';
import { readJsonFile, withStore } from './context.ts';
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
      withStore(async ({ admin, acting }) => {
        const created = await admin.policies.create(acting, await readJsonFile(flags.file));
        if (flags.json) return printJson(policyView(created));
        printLine(`Created policy ${created.document.name} (version ${created.version}).`);
      }),
    );

  policy
    .command('list')
    .description('list policies')
    .option('--json', 'print JSON only')
    .action((flags: JsonFlag) =>
      withStore(async ({ admin }) => {
        const policies = await admin.policies.list();
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
      withStore(async ({ admin }) => {
        const { policy: found, clients } = await admin.policies.get(name);
        printJson(policyView(found, clients));
      }),
    );

  policy
    .command('update')
    .description('replace a policy document (its name stays); takes effect at the next response of every client using it')
    .argument('<name>')
    .requiredOption('--file <file>', 'the new policy document (JSON)')
    .option('--json', 'print JSON only')
    .action((name: string, flags: JsonFlag & { file: string }) =>
      withStore(async ({ admin, acting }) => {
        const updated = await admin.policies.update(acting, name, await readJsonFile(flags.file));
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
      withStore(async ({ admin, acting }) => {
        await admin.policies.delete(acting, name);
        if (flags.json) return printJson({ name, deleted: true });
        printLine(`Deleted policy ${name}.`);
      }),
    );
}
