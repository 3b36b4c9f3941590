import { sql, type Expression, type RawBuilder, type ExpressionBuilder, type Kysely, type Selectable, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Token, TokenKind } from '../../domain/grant.ts';
import { isSigningAlg } from '../../protocol/constants.ts';
import type { UserProfile } from '../../domain/user.ts';
import type { IntrospectionRead, TokenStore, TokenWithUser } from '../ports.ts';
import { CLIENT_COLUMNS, type SqlClientStore } from './client-store.ts';
import type { DialectName } from './database.ts';
import { policyFactsColumns, subjectFromFacts } from './policy-facts.ts';
import { prepared, type Prepared } from './prepared.ts';
import type { ClientsTable, Database, TokensTable, UsersTable } from './schema.ts';
import { PROFILE_COLUMNS, profileFromRow, type ProfileColumn } from './user-store.ts';

/** The user's profile columns of a token row joined with its user, prefixed `user__` (tokens have a user_id of their own; null: no user). */
type UserColumns = { [C in ProfileColumn as `user__${C}`]: UsersTable[C] | null };

/** findWithUser's row: the token, its user's profile, its client's state and policy, the policy's facts. */
type TokenWithUserRow = Selectable<TokensTable> &
        UserColumns & {
          client__active: number | null;
          client__userinfo_alg: string | null;
          client__policy: string | null;
          policy__version: number | string | null;
          policy__document: string | null;
          facts__attributes: string | null;
          facts__groups: string | null;
          facts__organization: string | null;
        };

/** The caller's columns of introspectionRead's row, prefixed `caller__` (the token has a client_id of its own). */
type CallerColumns = { [C in keyof ClientsTable as `caller__${C}`]: ClientsTable[C] };
type Nullable<T> = { [K in keyof T]: T[K] | null };
/** A select over any tables: withUser adds its joins to queries of two shapes (this module's statements type their rows themselves). */
type AnySelect = SelectQueryBuilder<any, any, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The aliases, made once: a row's profile is read by them on every token lookup. */
const USER_ALIASES = PROFILE_COLUMNS.map((column) => [column, `user__${column}`] as const);
const CALLER_ALIASES = Object.fromEntries(CLIENT_COLUMNS.map((column) => [column, `caller__${column}`])) as { [C in keyof ClientsTable]: `caller__${C}` };

export class SqlTokenStore implements TokenStore {
  readonly #db: Kysely<Database>;
  readonly #q: ReturnType<typeof statements>;

  /** Builds the caller of introspectionRead as ClientStore.get does (and shares its cache). */
  readonly #clients: SqlClientStore;

  /** `sharing`: a store whose compiled statements to reuse (the same store inside a unit of work). */
  constructor(db: Kysely<Database>, dialect: DialectName, clients: SqlClientStore, sharing?: SqlTokenStore) {
    this.#db = db;
    this.#clients = clients;
    this.#q = sharing ? sharing.#q : statements(db, dialect);
  }

  async insert(t: Token): Promise<void> {
    await this.insertMany([t]);
  }

  async insertMany(tokens: Token[]): Promise<void> {
    if (tokens.length === 0) return;
    const rows = tokens.map(toRow);
    const statement = rows.length === 1 ? this.#q.insertOne : rows.length === 2 ? this.#q.insertTwo : undefined;
    if (!statement) {
      await this.#db.insertInto('tokens').values(rows).execute();
      return;
    }
    const params: Record<string, unknown> = {};
    rows.forEach((row, i) => {
      for (const column of TOKEN_COLUMNS) params[`${i}.${column}`] = row[column];
    });
    await statement.execute(params, this.#db);
  }

  async find(tokenHash: string): Promise<Token | undefined> {
    const row = await this.#q.find.first({ tokenHash }, this.#db);
    return row && fromRow(row);
  }

  async findWithUser(tokenHash: string): Promise<TokenWithUser | undefined> {
    const row = await this.#q.findWithUser.first({ tokenHash }, this.#db);
    return row && withUser(row);
  }

  async introspectionRead(callerId: string, tokenHash: string): Promise<IntrospectionRead> {
    const row = await this.#q.introspectionRead.first({ callerId, tokenHash }, this.#db);
    if (!row) return { caller: undefined, found: undefined, scopeOwners: undefined };
    const callerRow: Record<string, unknown> = {};
    for (const column of CLIENT_COLUMNS) callerRow[column] = row[CALLER_ALIASES[column]];
    const caller = this.#clients.fromStoredRow(callerRow as Selectable<ClientsTable>);
    // No token row leaves every column of `t` null.
    if (row.token_hash === null) return { caller, found: undefined, scopeOwners: undefined };
    const scopeOwners = row.scope_owners === null ? undefined : new Map(JSON.parse(row.scope_owners) as [string, string][]);
    return { caller, found: withUser(row as TokenWithUserRow), scopeOwners };
  }

  async markRotated(tokenHash: string, now: number): Promise<boolean> {
    return (await this.#q.markRotated.affected({ tokenHash, now }, this.#db)) > 0;
  }

  async revoke(tokenHash: string, now: number): Promise<boolean> {
    return (await this.#q.revoke.affected({ tokenHash, now }, this.#db)) > 0;
  }

  async rekey(fromHash: string, toHash: string): Promise<boolean> {
    return (await this.#q.rekey.affected({ fromHash, toHash }, this.#db)) > 0;
  }

  async revokeFamily(familyId: string, now: number): Promise<number> {
    const result = await this.#db.updateTable('tokens').set({ revoked_at: now }).where('family_id', '=', familyId).where('revoked_at', 'is', null).executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async revokeByUser(userId: string, now: number): Promise<number> {
    const result = await this.#db.updateTable('tokens').set({ revoked_at: now }).where('user_id', '=', userId).where('revoked_at', 'is', null).executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async revokeByUserAndClient(userId: string, clientId: string, now: number): Promise<number> {
    const result = await this.#db
      .updateTable('tokens')
      .set({ revoked_at: now })
      .where('user_id', '=', userId)
      .where('client_id', '=', clientId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async revokeByUserExceptSession(userId: string, sessionIndex: string, now: number): Promise<number> {
    const result = await this.#db
      .updateTable('tokens')
      .set({ revoked_at: now })
      .where('user_id', '=', userId)
      // A user's token always has a session_index (the tokens_subject check, migration 008).
      .where('session_index', '<>', sessionIndex)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async revokeBySession(session: { userId: string; sessionIndex: string }, now: number): Promise<number> {
    const result = await this.#db
      .updateTable('tokens')
      .set({ revoked_at: now })
      .where('user_id', '=', session.userId)
      .where('session_index', '=', session.sessionIndex)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async clientsOfSessions(userId: string, sessionIndexes: readonly string[], now: number): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (sessionIndexes.length === 0) return out;
    const rows = await this.#db
      .selectFrom('tokens')
      .select(['session_index', 'client_id'])
      .distinct()
      .where('user_id', '=', userId)
      .where('session_index', 'in', [...sessionIndexes])
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .orderBy('session_index')
      .orderBy('client_id')
      .execute();
    for (const row of rows) out.set(row.session_index!, [...(out.get(row.session_index!) ?? []), row.client_id]);
    return out;
  }

  async deleteExpired(expiredBefore: number, revokedBefore: number, limit: number): Promise<number> {
    // Two bounded statements, each served by the expires_at index: tokens past their expiry, then
    // revoked tokens that have none.
    const expired = (eb: ExpressionBuilder<Database, 'tokens'>) => eb('expires_at', '<', expiredBefore);
    const first = await this.#deleteWhere(expired, limit);
    if (first >= limit) return first;
    const revokedForever = (eb: ExpressionBuilder<Database, 'tokens'>) => eb.and([eb('expires_at', 'is', null), eb('revoked_at', '<', revokedBefore)]);
    return first + (await this.#deleteWhere(revokedForever, limit - first));
  }

  async #deleteWhere(condition: (eb: ExpressionBuilder<Database, 'tokens'>) => Expression<SqlBool>, limit: number): Promise<number> {
    const result = await this.#db
      .deleteFrom('tokens')
      .where('token_hash', 'in', this.#db.selectFrom('tokens').select('token_hash').where(condition).limit(limit))
      .where(condition)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

/**
 * The hot paths' statements, compiled once per store (src/storage/sql/prepared.ts). A grant
 * inserts one or two rows (access token, refresh token); larger batches are built as they come.
 */
function statements(db: Kysely<Database>, dialect: DialectName) {
  const insertRows = (count: number) =>
    prepared<Record<string, unknown>, unknown>(db, (p) =>
      db.insertInto('tokens').values(Array.from({ length: count }, (_, i) => Object.fromEntries(TOKEN_COLUMNS.map((column) => [column, p(`${i}.${column}`)])) as unknown as TokensTable)),
    );

  /**
   * The joins and columns of findWithUser's row (the token with its user, its client's state and
   * policy, the user's facts the policy reads) onto a query that has `tokens` in scope: the token
   * alone, or the token left-joined to introspection's caller, flat, so both databases plan the
   * same primary-key lookups.
   */
  const withUser = (query: AnySelect): AnySelect =>
    query
      .leftJoin('users', 'users.id', 'tokens.user_id')
      // The client's current state, by primary key in the same statement: a token of a
      // deactivated or deleted client stops working at once, on every instance.
      .leftJoin('clients', 'clients.client_id', 'tokens.client_id')
      // The client's authorization policy and the user's facts it reads, in the same statement
      // (bench S10: a second statement cost about a quarter of an introspection). The facts
      // are computed only for a client with a policy; for any other they are null, unread.
      .leftJoin('policies', 'policies.name', 'clients.authorization_policy')
      .selectAll('tokens')
      .select(PROFILE_COLUMNS.map((column) => `users.${column} as user__${column}`))
      .select(['clients.active as client__active', 'clients.userinfo_signed_response_alg as client__userinfo_alg', 'clients.authorization_policy as client__policy'])
      .select(['policies.version as policy__version', 'policies.document as policy__document'])
      .select(() => {
        const facts = policyFactsColumns(dialect, sql.ref('tokens.user_id'), sql.ref('users.organization_id'));
        const onlyWithPolicy = <T>(column: RawBuilder<T>) => sql<T | null>`case when clients.authorization_policy is null then null else ${column} end`;
        return [onlyWithPolicy(facts.attributes).as('facts__attributes'), onlyWithPolicy(facts.groups).as('facts__groups'), onlyWithPolicy(facts.organization).as('facts__organization')];
      });
  return {
    insertOne: insertRows(1),
    insertTwo: insertRows(2),
    find: prepared<{ tokenHash: string }, Selectable<TokensTable>>(db, (p) => db.selectFrom('tokens').selectAll().where('token_hash', '=', p('tokenHash'))),
    findWithUser: prepared<{ tokenHash: string }, unknown>(db, (p) => withUser(db.selectFrom('tokens')).where('tokens.token_hash', '=', p('tokenHash'))) as Prepared<{ tokenHash: string }, TokenWithUserRow>,
    /**
     * Introspection's one statement (issue 27): the caller's row, and beside it, when there is
     * one, the token's row as findWithUser reads it with the owners of its scope values. The
     * caller's row is the anchor, so a caller is read whether or not the token exists.
     */
    introspectionRead: prepared<{ callerId: string; tokenHash: string }, unknown>(db, (p) =>
      withUser(db.selectFrom('clients as caller').leftJoin('tokens', (join) => join.on('tokens.token_hash', '=', p('tokenHash'))))
        .select(CLIENT_COLUMNS.map((column) => `caller.${column} as ${CALLER_ALIASES[column]}`))
        .select(scopeOwnersColumn(dialect).as('scope_owners'))
        .where('caller.client_id', '=', p('callerId')),
    ) as unknown as Prepared<{ callerId: string; tokenHash: string }, CallerColumns & Nullable<TokenWithUserRow> & { scope_owners: string | null }>,
    markRotated: prepared<{ tokenHash: string; now: number }, unknown>(db, (p) =>
      db.updateTable('tokens').set({ rotated_at: p('now') }).where('token_hash', '=', p('tokenHash')).where('rotated_at', 'is', null).where('revoked_at', 'is', null),
    ),
    revoke: prepared<{ tokenHash: string; now: number }, unknown>(db, (p) => db.updateTable('tokens').set({ revoked_at: p('now') }).where('token_hash', '=', p('tokenHash')).where('revoked_at', 'is', null)),
    // Every code exchange for a JWT access token (issue-tokens.ts, finishTokens): a hot path too.
    rekey: prepared<{ fromHash: string; toHash: string }, unknown>(db, (p) => db.updateTable('tokens').set({ token_hash: p('toHash') }).where('token_hash', '=', p('fromHash'))),
  };
}

/** A findWithUser row as the port's TokenWithUser. A left join: no user row leaves every user__ column null; no client row, client__active. */
function withUser(row: TokenWithUserRow): TokenWithUser {
  const { client__active: clientActive, client__userinfo_alg: userinfoAlg, client__policy: clientPolicy, policy__version: policyVersion, policy__document: policyDocument, facts__attributes: attributes, facts__groups: groups, facts__organization: organization } = row;
  let user: UserProfile | undefined;
  if (row.user__id !== null) {
    const profile: Record<string, unknown> = {};
    for (const [column, alias] of USER_ALIASES) profile[column] = row[alias];
    user = profileFromRow(profile as Pick<UsersTable, ProfileColumn>);
  }
  const policy = policyVersion === null || policyDocument === null ? undefined : { version: Number(policyVersion), document: policyDocument };
  return {
    token: fromRow(row),
    user,
    clientActive: Number(clientActive) === 1,
    clientUserinfoAlg: isSigningAlg(userinfoAlg) ? userinfoAlg : undefined,
    clientPolicy: clientPolicy ?? undefined,
    clientPolicySubject: clientPolicy === null || attributes === null || groups === null ? undefined : subjectFromFacts(policy, { attributes, groups, organization }),
  };
}

/**
 * The resource servers that declared the token's scope values, as JSON `[[value, client_id], …]`
 * (what ClientStore.resourceScopeOwners reads), by the primary key of client_resource_scopes for
 * each value. SQLite has no split function: the space-separated scope becomes a JSON array by
 * text, which is exact because a scope value never holds `"` or `\` (RFC 6749 §3.3: %x21 /
 * %x23-5B / %x5D-7E); a stored scope that did anyway gets null, and the caller asks the clients.
 */
function scopeOwnersColumn(dialect: DialectName): RawBuilder<string | null> {
  if (dialect === 'postgres') {
    return sql<string>`(select coalesce(json_agg(json_build_array(r.scope, r.client_id)), '[]')::text from client_resource_scopes r where r.scope = any(string_to_array(tokens.scope, ' ')))`;
  }
  return sql<string | null>`case when instr(tokens.scope, '"') > 0 or instr(tokens.scope, char(92)) > 0 then null else (select json_group_array(json_array(r.scope, r.client_id)) from client_resource_scopes r where r.scope in (select value from json_each('["' || replace(tokens.scope, ' ', '","') || '"]'))) end`;
}

function fromRow(r: Selectable<TokensTable>): Token {
  const common = {
    tokenHash: r.token_hash,
    kind: r.kind as TokenKind,
    clientId: r.client_id,
    scope: r.scope,
    codeHash: r.code_hash ?? undefined,
    familyId: r.family_id,
    createdAt: r.created_at,
    expiresAt: r.expires_at ?? undefined,
    revokedAt: r.revoked_at ?? undefined,
    rotatedAt: r.rotated_at ?? undefined,
  };
  // The CHECK of migration 008 keeps the four user columns all set or all null.
  if (r.user_id === null) return { ...common, userId: undefined, sessionIndex: undefined, authTime: undefined, amr: undefined, acr: undefined };
  return { ...common, userId: r.user_id, sessionIndex: r.session_index!, authTime: r.auth_time!, amr: JSON.parse(r.amr!) as string[], acr: r.acr ?? undefined };
}

const TOKEN_COLUMNS = [
  'token_hash',
  'kind',
  'client_id',
  'user_id',
  'scope',
  'session_index',
  'auth_time',
  'amr',
  'acr',
  'code_hash',
  'family_id',
  'created_at',
  'expires_at',
  'revoked_at',
  'rotated_at',
] as const satisfies ReadonlyArray<keyof TokensTable>;

function toRow(t: Token): TokensTable {
  return {
    token_hash: t.tokenHash,
    kind: t.kind,
    client_id: t.clientId,
    user_id: t.userId ?? null,
    scope: t.scope,
    session_index: t.sessionIndex ?? null,
    auth_time: t.authTime ?? null,
    amr: t.amr === undefined ? null : JSON.stringify(t.amr),
    acr: t.acr ?? null,
    code_hash: t.codeHash ?? null,
    family_id: t.familyId,
    created_at: t.createdAt,
    expires_at: t.expiresAt ?? null,
    revoked_at: t.revokedAt ?? null,
    rotated_at: t.rotatedAt ?? null,
  };
}
