import { sql, type Kysely, type Selectable, type SqlBool } from 'kysely';
import { escapeLike } from './attributes.ts';
import { MAX_ORGANIZATION_DEPTH } from '../../domain/organization.ts';
import { parsePolicyDocument, policyDocumentJson, type Policy, type PolicyDocument } from '../../domain/policy.ts';
import { MissingReferenceError, PolicyInUseError, type PageQuery, type PolicyStore, type PolicySubject } from '../ports.ts';
import { translated } from './errors.ts';
import { addAttributeValue } from './policy-facts.ts';
import { prepared } from './prepared.ts';
import type { Database, PoliciesTable } from './schema.ts';

/** One row of the subject statement: what it is (`kind`), an integer and up to three texts. */
interface SubjectRow {
  kind: 'policy' | 'attribute' | 'group' | 'organization';
  n: number;
  a: string;
  b: string | null;
  c: string | null;
}

export class SqlPolicyStore implements PolicyStore {
  readonly #db: Kysely<Database>;
  readonly #q: ReturnType<typeof statements>;

  /** `sharing`: a store whose compiled statements to reuse (the same store inside a unit of work). */
  constructor(db: Kysely<Database>, sharing?: SqlPolicyStore) {
    this.#db = db;
    this.#q = sharing ? sharing.#q : statements(db);
  }

  async insert(policy: Policy): Promise<void> {
    await translated('policy', () =>
      this.#db
        .insertInto('policies')
        .values({ name: policy.document.name, document: JSON.stringify(policyDocumentJson(policy.document)), version: policy.version, created_at: policy.createdAt, updated_at: policy.updatedAt })
        .execute(),
    );
  }

  async get(name: string): Promise<Policy | undefined> {
    const row = await this.#db.selectFrom('policies').selectAll().where('name', '=', name).executeTakeFirst();
    return row && fromRow(row);
  }

  async list(): Promise<Policy[]> {
    const rows = await this.#db.selectFrom('policies').selectAll().orderBy('name').execute();
    return rows.map(fromRow);
  }

  async update(document: PolicyDocument, now: number): Promise<Policy | undefined> {
    // One statement: the version rises with the document it describes (the cache key, src/oauth/policy).
    const row = await this.#db
      .updateTable('policies')
      .set((eb) => ({ document: JSON.stringify(policyDocumentJson(document)), version: eb('version', '+', 1), updated_at: now }))
      .where('name', '=', document.name)
      .returningAll()
      .executeTakeFirst();
    return row && fromRow(row);
  }

  async delete(name: string): Promise<boolean> {
    try {
      // ON DELETE RESTRICT (migration 012) refuses it while a client refers to the policy.
      const result = await translated('policy', () => this.#db.deleteFrom('policies').where('name', '=', name).executeTakeFirst());
      return result.numDeletedRows > 0n;
    } catch (error) {
      if (error instanceof MissingReferenceError) throw new PolicyInUseError(`policy ${name} is used by a client; detach it first (gatehouse client update … --authorization-policy "")`);
      throw error;
    }
  }

  async page(query: PageQuery<string>): Promise<Policy[]> {
    let select = this.#db.selectFrom('policies').selectAll().orderBy('name').limit(query.limit);
    if (query.after !== undefined) select = select.where('name', '>', query.after);
    if (query.q !== undefined && query.q !== '') select = select.where(sql<SqlBool>`lower(name) like ${`%${escapeLike(query.q.toLowerCase())}%`} escape '\\'`);
    return (await select.execute()).map(fromRow);
  }

  async clientsUsing(name: string): Promise<string[]> {
    const rows = await this.#db.selectFrom('clients').select('client_id').where('authorization_policy', '=', name).orderBy('client_id').execute();
    return rows.map((r) => r.client_id);
  }

  async subject(policyName: string, userId: string, options: { ancestors?: boolean } = {}): Promise<PolicySubject> {
    const statement = options.ancestors ? this.#q.subjectWithAncestors : this.#q.subject;
    const { rows } = await statement.execute({ policyName, userId }, this.#db);
    const subject: PolicySubject = { policy: undefined, attributes: {}, groups: [], organizations: [] };
    const valued: [name: string, position: number, value: string][] = [];
    for (const row of rows) {
      if (row.kind === 'policy') subject.policy = { version: Number(row.n), document: row.a };
      else if (row.kind === 'group') subject.groups.push(row.a);
      else if (row.kind === 'organization') subject.organizations[Number(row.n)] = { id: row.a, technicalName: row.b ?? '', friendlyName: row.c ?? '' };
      else valued.push([row.a, Number(row.n), row.b ?? '']);
    }
    // Values keep their stored order (the statement's union has none of its own).
    valued.sort((x, y) => x[1] - y[1]);
    for (const [name, , value] of valued) addAttributeValue(subject.attributes, name, value);
    subject.groups.sort();
    subject.organizations = subject.organizations.filter((o) => o !== undefined);
    return subject;
  }
}

/** The policy row, the user's attributes and groups: the parts every subject read has. */
function policyAttributesGroups(p: <K extends 'policyName' | 'userId'>(name: K) => string) {
  return sql`select 'policy' as kind, version as n, document as a, cast(null as text) as b, cast(null as text) as c from policies where name = ${p('policyName')}
union all select 'attribute', position, name, value, null from user_attributes where owner_id = ${p('userId')}
union all select 'group', 0, g.name, null, null from groups g join group_members m on m.group_id = g.id where m.user_id = ${p('userId')}`;
}

function statements(db: Kysely<Database>) {
  return {
    /** The policy row, the user's attributes, groups and own organization, as one union: one round trip. */
    subject: prepared<{ policyName: string; userId: string }, SubjectRow>(db, (p) => ({
      compile: () =>
        sql<SubjectRow>`${policyAttributesGroups(p)}
union all select 'organization', 0, o.id, o.technical_name, o.friendly_name from organizations o join users u on u.organization_id = o.id where u.id = ${p('userId')}`.compile(db),
    })),
    /**
     * The same with the organization's ancestors: a recursive walk bounded by
     * MAX_ORGANIZATION_DEPTH, so rows that form a cycle cannot make it run on. About 20 µs more on
     * SQLite than `subject` (bench S10), so only access checks of policies that need it use it.
     */
    subjectWithAncestors: prepared<{ policyName: string; userId: string }, SubjectRow>(db, (p) => ({
      compile: () =>
        sql<SubjectRow>`with recursive chain (id, parent_id, technical_name, friendly_name, depth) as (
  select o.id, o.parent_id, o.technical_name, o.friendly_name, 0 from organizations o join users u on u.organization_id = o.id where u.id = ${p('userId')}
  union all
  select o.id, o.parent_id, o.technical_name, o.friendly_name, chain.depth + 1 from organizations o join chain on o.id = chain.parent_id where chain.depth < ${sql.lit(MAX_ORGANIZATION_DEPTH)}
)
${policyAttributesGroups(p)}
union all select 'organization', depth, id, technical_name, friendly_name from chain`.compile(db),
    })),
  };
}

function fromRow(row: Selectable<PoliciesTable>): Policy {
  return { document: parsePolicyDocument(JSON.parse(row.document)), version: Number(row.version), createdAt: Number(row.created_at), updatedAt: Number(row.updated_at) };
}
