import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Invitation, InvitationStatus } from '../../domain/invitation.ts';
import type { InvitationPageKey, InvitationStore } from '../ports.ts';
import { translated } from './errors.ts';
import type { Database, InvitationsTable } from './schema.ts';

/** Invitations (migration 032, `invitations`). */
export class SqlInvitationStore implements InvitationStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async insert(i: Invitation): Promise<void> {
    // The partial unique index on pending addresses decides (ConflictError); an unknown organization is a MissingReferenceError.
    await translated('a pending invitation to this address', () => this.#db.insertInto('invitations').values(toRow(i)).execute());
  }

  async retireExpired(email: string, now: number): Promise<number> {
    const result = await this.#db
      .updateTable('invitations')
      .set((eb) => ({ status: 'expired', ended_at: eb.ref('expires_at') }))
      .where('email_key', '=', emailKey(email))
      .where('status', '=', 'pending')
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async get(id: string): Promise<Invitation | undefined> {
    const row = await this.#db.selectFrom('invitations').selectAll().where('id', '=', id).executeTakeFirst();
    return row && fromRow(row);
  }

  async findLive(tokenHash: string, now: number): Promise<Invitation | undefined> {
    const row = await this.#db.selectFrom('invitations').selectAll().where('token_hash', '=', tokenHash).where('status', '=', 'pending').where('expires_at', '>', now).executeTakeFirst();
    return row && fromRow(row);
  }

  async accept(tokenHash: string, now: number): Promise<Invitation | undefined> {
    // One statement decides and spends: of racing accepts only one updates the row; on PostgreSQL
    // the others wait for its row lock, re-read `status` and find it accepted.
    const row = await this.#db
      .updateTable('invitations')
      .set({ status: 'accepted', ended_at: now })
      .where('token_hash', '=', tokenHash)
      .where('status', '=', 'pending')
      .where('expires_at', '>', now)
      .returningAll()
      .executeTakeFirst();
    return row && fromRow(row);
  }

  async recordUser(id: string, userId: string): Promise<void> {
    await this.#db.updateTable('invitations').set({ user_id: userId }).where('id', '=', id).execute();
  }

  async renew(id: string, change: { tokenHash: string; expiresAt: number; invitedBy: string }): Promise<Invitation | undefined> {
    const row = await this.#db
      .updateTable('invitations')
      .set({ token_hash: change.tokenHash, expires_at: change.expiresAt, invited_by: change.invitedBy })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .returningAll()
      .executeTakeFirst();
    return row && fromRow(row);
  }

  async revoke(id: string, now: number): Promise<Invitation | undefined> {
    const row = await this.#db.updateTable('invitations').set({ status: 'revoked', ended_at: now }).where('id', '=', id).where('status', '=', 'pending').returningAll().executeTakeFirst();
    return row && fromRow(row);
  }

  async page(query: { status?: InvitationStatus | undefined; now: number; after?: InvitationPageKey | undefined; limit: number }): Promise<Invitation[]> {
    let q = this.#db.selectFrom('invitations').selectAll();
    if (query.status !== undefined) q = q.where(statusAt(query.status, query.now));
    const after = query.after;
    if (after !== undefined) q = q.where((eb) => eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]));
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).execute();
    return rows.map(fromRow);
  }

  async deleteEnded(before: number, limit: number): Promise<number> {
    const batch = this.#db.selectFrom('invitations').select('id').where(endedBefore(before)).limit(limit);
    const result = await this.#db.deleteFrom('invitations').where('id', 'in', batch).where(endedBefore(before)).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

/** Rows that ended before `before`: accepted or revoked then, or expired by then (a pending row past its expiry counts by its expiry). */
function endedBefore(before: number) {
  return (eb: ExpressionBuilder<Database, 'invitations'>) =>
    eb.or([eb.and([eb('status', '!=', 'pending'), eb('ended_at', 'is not', null), eb('ended_at', '<', before)]), eb.and([eb('status', 'in', ['pending', 'expired']), eb('expires_at', '<', before)])]);
}

/** Rows whose status at `now` is `status` (invitationStatus in SQL: a pending row past its expiry is expired). */
function statusAt(status: InvitationStatus, now: number) {
  return (eb: ExpressionBuilder<Database, 'invitations'>) => {
    if (status === 'pending') return eb.and([eb('status', '=', 'pending'), eb('expires_at', '>', now)]);
    if (status === 'expired') return eb.or([eb('status', '=', 'expired'), eb.and([eb('status', '=', 'pending'), eb('expires_at', '<=', now)])]);
    return eb('status', '=', status);
  };
}

/** Addresses compare case-insensitively for the one-pending rule (the domain part is; most local parts are treated so). */
export function emailKey(email: string): string {
  return email.trim().toLowerCase();
}

function toRow(i: Invitation): InvitationsTable {
  return {
    id: i.id,
    token_hash: i.tokenHash,
    email: i.email,
    email_key: emailKey(i.email),
    given_name: i.givenName ?? null,
    family_name: i.familyName ?? null,
    organization_id: i.organizationId ?? null,
    invited_by: i.invitedBy,
    locale: i.locale,
    status: i.status,
    created_at: i.createdAt,
    expires_at: i.expiresAt,
    ended_at: i.endedAt ?? null,
    user_id: i.userId ?? null,
  };
}

function fromRow(r: InvitationsTable): Invitation {
  return {
    id: r.id,
    tokenHash: r.token_hash,
    email: r.email,
    givenName: r.given_name ?? undefined,
    familyName: r.family_name ?? undefined,
    organizationId: r.organization_id ?? undefined,
    invitedBy: r.invited_by,
    locale: r.locale,
    status: r.status as InvitationStatus,
    createdAt: Number(r.created_at),
    expiresAt: Number(r.expires_at),
    endedAt: r.ended_at === null ? undefined : Number(r.ended_at),
    userId: r.user_id ?? undefined,
  };
}
