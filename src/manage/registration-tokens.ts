/**
 * The use cases of initial access tokens of dynamic client registration (RFC 7591 §3): each takes who acts (acting.ts) and its input, runs the rules and the
 * unit of work of the change, and emits its audit event. Every front end calls these.
 *
 * The token's rules stay in src/oauth/dynamic-registration.ts (mintInitialAccessToken: its
 * limits, only the hash kept); what moved here is who it names as its creator, read from the
 * actor, and the refusal of revoking a token that does not exist.
 */
import type { InitialAccessToken } from '../storage/ports.ts';
import { mintInitialAccessToken } from '../oauth/dynamic-registration.ts';
import type { Actor } from '../observability/audit.ts';
import type { Acting } from './acting.ts';
import type { AdministrationPorts } from './ports.ts';

/** How many rows one read of the whole list asks for. */
const LIST_BATCH = 200;

/** No initial access token has this id (revoked already, or never minted). */
export class InitialAccessTokenNotFound extends Error {
  constructor(id: string) {
    super(`no initial access token has the id ${JSON.stringify(id)}`);
    this.name = 'InitialAccessTokenNotFound';
  }
}

export interface NewInitialAccessToken {
  /** Seconds from now, 1..MAX_INITIAL_ACCESS_TOKEN_TTL. */
  expiresIn: number;
  /** How many clients it may register, 1..MAX_INITIAL_ACCESS_TOKEN_USES. */
  uses: number;
  description?: string | undefined;
}

export interface RegistrationTokenAdministration {
  /** Mints a token (InvalidTokenSettings naming the wire field at fault); its value is returned here once; `initial_access_token.created`. */
  create(acting: Acting, input: NewInitialAccessToken): Promise<{ token: InitialAccessToken; value: string }>;
  /** Revokes a token (else InitialAccessTokenNotFound); clients it registered stay; `initial_access_token.revoked`. */
  revoke(acting: Acting, id: string): Promise<void>;
  /** Every token, by id (the CLI's list). */
  list(): Promise<InitialAccessToken[]>;
  /** One keyset page by id (the management API's listing). */
  page(query: { after?: string | undefined; limit: number }): Promise<InitialAccessToken[]>;
}

/**
 * The token's `created_by`: the CLI's `cli:<account>` (`cli` when the account is unknown), else
 * the administrator's user id, or the client_id of a client's own token (client_credentials).
 */
export function creatorOf(actor: Actor): string {
  if (actor.via === 'cli') return actor.caller === undefined ? 'cli' : `cli:${actor.caller}`;
  return actor.caller ?? actor.clientId ?? actor.via;
}

export function registrationTokenAdministration(ports: Pick<AdministrationPorts, 'store' | 'clock' | 'random' | 'audit'>): RegistrationTokenAdministration {
  const { store, clock, random, audit } = ports;
  const page: RegistrationTokenAdministration['page'] = (query) => store.registrations.listInitialAccessTokens(query);
  return {
    async create(acting, input) {
      const minted = await mintInitialAccessToken({ registrations: store.registrations, clock, random }, { ...input, createdBy: creatorOf(acting.actor) });
      const { token } = minted;
      audit.emit({ event: 'initial_access_token.created', id: token.id, expiresAt: token.expiresAt, uses: token.usesLeft, actor: acting.actor });
      return minted;
    },
    async revoke(acting, id) {
      if (!(await store.registrations.deleteInitialAccessToken(id))) throw new InitialAccessTokenNotFound(id);
      audit.emit({ event: 'initial_access_token.revoked', id, actor: acting.actor });
    },
    async list() {
      const all: InitialAccessToken[] = [];
      for (let after: string | undefined; ; ) {
        const batch = await page({ after, limit: LIST_BATCH });
        all.push(...batch);
        if (batch.length < LIST_BATCH) return all;
        after = batch[batch.length - 1]!.id;
      }
    },
    page,
  };
}
