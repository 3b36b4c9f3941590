/** `gatehouse org …`: the organization tree users belong to. */
import { Option, type Command } from 'commander';
import type { Organization } from '../domain/organization.ts';
import type { OrganizationChanges } from '../manage/organizations.ts';
import { attributeChanges, collect, UsageError, withStore } from './context.ts';
import { isoTime, printFields, printJson, printLine, printTable } from './output.ts';

interface JsonFlag {
  json?: boolean;
}

interface CreateFlags extends JsonFlag {
  technicalName?: string;
  friendlyName?: string;
  name?: string;
  parent?: string;
  type?: string;
  virtual?: boolean;
}

interface UpdateFlags extends JsonFlag {
  technicalName?: string;
  friendlyName?: string;
  name?: string;
  parent?: string;
  root?: boolean;
  type?: string;
  virtual?: boolean;
  attribute?: string[];
  removeAttribute?: string[];
}

function organizationView(o: Organization): Record<string, unknown> {
  return {
    id: o.id,
    technical_name: o.technicalName,
    friendly_name: o.friendlyName,
    parent_id: o.parentId,
    type: o.type,
    virtual: o.virtual,
    attributes: o.attributes,
    created_at: isoTime(o.createdAt),
    updated_at: isoTime(o.updatedAt),
  };
}

function show(o: Organization, json: boolean | undefined): void {
  if (json) return printJson(organizationView(o));
  printFields(Object.entries(organizationView(o)).filter(([key, value]) => key !== 'attributes' || Object.keys(value as object).length > 0));
}

/**
 * `--name`: the friendly name under the word the management API (`name`), the console ("Name") and
 * `client create --name` use. People type it first; Commander's "did you mean" only suggests
 * flags a few letters away, never `--friendly-name` for `--name`, so it stayed unknown with no hint.
 */
function nameOption(): Option {
  return new Option('--name <name>', 'the same as --friendly-name (the management API calls it name)').conflicts('friendlyName');
}

export function registerOrganizationCommands(program: Command): void {
  const org = program.command('org').description('manage organizations');

  org
    .command('create')
    .description('create an organization')
    .option('--technical-name <name>', 'unique among its siblings (default: a generated UUID)')
    .option('--friendly-name <name>', 'display name (default: the technical name)')
    .addOption(nameOption())
    .option('--parent <id>', 'id of the parent organization (default: at the root)')
    .option('--type <type>', 'organization type')
    .option('--virtual', 'a virtual organization groups others and holds no users')
    .option('--json', 'print JSON only')
    .action((flags: CreateFlags) =>
      withStore(async ({ admin, acting }) => {
        const created = await admin.organizations.create(acting, {
          technicalName: flags.technicalName,
          friendlyName: flags.name ?? flags.friendlyName,
          parentId: flags.parent,
          type: flags.type,
          virtual: flags.virtual ?? false,
        });
        show(created, flags.json);
      }),
    );

  org
    .command('list')
    .description('list organizations')
    .option('--json', 'print JSON only')
    .action((flags: JsonFlag) =>
      withStore(async ({ admin }) => {
        const organizations = await admin.organizations.list();
        if (flags.json) return printJson(organizations.map(organizationView));
        printTable(
          ['ID', 'TECHNICAL_NAME', 'FRIENDLY_NAME', 'PARENT', 'VIRTUAL'],
          organizations.map((o) => [o.id, o.technicalName, o.friendlyName, o.parentId, o.virtual]),
          'No organizations.',
        );
      }),
    );

  org
    .command('show')
    .description('show an organization')
    .argument('<id>')
    .option('--json', 'print JSON only')
    .action((id: string, flags: JsonFlag) => withStore(async ({ admin }) => show(await admin.organizations.get(id), flags.json)));

  org
    .command('update')
    .description('change an organization: names, type, place in the tree, virtual or not, custom attributes; the rest stay')
    .argument('<id>')
    .option('--technical-name <name>', 'unique among its siblings')
    .option('--friendly-name <name>', "display name ('' resets it to the technical name)")
    .addOption(nameOption())
    .option('--type <type>', "organization type ('' removes it)")
    .addOption(new Option('--parent <id>', 'move it under this organization').conflicts('root'))
    .option('--root', 'move it to the root of the tree')
    .option('--virtual', 'make it virtual (it must hold no users)')
    .option('--no-virtual', 'make it an ordinary organization that may hold users')
    .option('--attribute <name=value>', 'set a custom attribute; repeat the name for several values, which replace the stored ones', collect)
    .option('--remove-attribute <name>', 'remove a custom attribute (repeatable)', collect)
    .option('--json', 'print JSON only')
    .action((id: string, flags: UpdateFlags) =>
      withStore(async ({ admin, acting }) => {
        const changes: OrganizationChanges = {
          technicalName: flags.technicalName,
          friendlyName: flags.name ?? flags.friendlyName,
          type: flags.type,
          parentId: flags.root ? null : flags.parent,
          virtual: flags.virtual,
          attributes: attributeChanges(flags.attribute, flags.removeAttribute),
        };
        if (Object.values(changes).every((value) => value === undefined)) {
          throw new UsageError('nothing to change: give --technical-name, --friendly-name (--name), --type, --parent, --root, --virtual, --no-virtual, --attribute or --remove-attribute');
        }
        show(await admin.organizations.update(acting, id, changes), flags.json);
      }),
    );

  org
    .command('delete')
    .description('delete an organization for good; refused while it has sub-organizations or users')
    .argument('<id>')
    .option('--json', 'print JSON only')
    .action((id: string, flags: JsonFlag) =>
      withStore(async ({ admin, acting }) => {
        const deleted = await admin.organizations.delete(acting, id);
        if (flags.json) return printJson({ id: deleted.id, technical_name: deleted.technicalName, deleted: true });
        printLine(`Deleted organization ${deleted.technicalName} (${deleted.id}).`);
      }),
    );
}
