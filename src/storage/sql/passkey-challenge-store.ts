import type { Kysely, Selectable } from 'kysely';
import type { PasskeyChallenge, PasskeyChallengeStore } from '../ports.ts';
import type { Database, PasskeyChallengesTable } from './schema.ts';

/** Challenges of WebAuthn ceremonies under way (migration 024, `passkey_challenges`). Race rule: PasskeyChallengeStore. */
export class SqlPasskeyChallengeStore implements PasskeyChallengeStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async insert(c: PasskeyChallenge): Promise<void> {
    await this.#db
      .insertInto('passkey_challenges')
      .values({ challenge_hash: c.challengeHash, purpose: c.purpose, binding: c.binding, user_id: c.userId ?? null, created_at: c.createdAt, expires_at: c.expiresAt })
      .execute();
  }

  async take(challengeHash: string, purpose: string, binding: string, now: number): Promise<PasskeyChallenge | undefined> {
    // One statement decides and consumes (as PendingSignInStore.take): of racing takes, on any
    // instance, only one deletes the row and gets it back.
    const row = await this.#db
      .deleteFrom('passkey_challenges')
      .where('challenge_hash', '=', challengeHash)
      .where('purpose', '=', purpose)
      .where('binding', '=', binding)
      .where('expires_at', '>', now)
      .returningAll()
      .executeTakeFirst();
    return row && challengeOf(row);
  }

  async deleteExpired(now: number, limit: number): Promise<number> {
    const expired = this.#db.selectFrom('passkey_challenges').select('challenge_hash').where('expires_at', '<=', now).limit(limit);
    const result = await this.#db.deleteFrom('passkey_challenges').where('challenge_hash', 'in', expired).where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function challengeOf(r: Selectable<PasskeyChallengesTable>): PasskeyChallenge {
  return { challengeHash: r.challenge_hash, purpose: r.purpose, binding: r.binding, userId: r.user_id ?? undefined, createdAt: Number(r.created_at), expiresAt: Number(r.expires_at) };
}
