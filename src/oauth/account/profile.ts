/**
 * The profile page's own changes (issue 25 item 3; docs/email-verification.md, "Users"): a
 * signed-in user's given and family name. The address is not changed here: a new one is only
 * asked for (email-verification.ts) and replaces the old one when its link is followed.
 */
import type { UserProfile } from '../../domain/user.ts';
import { optionalText } from '../../identity/text.ts';
import type { OAuthDeps } from '../deps.ts';

/**
 * Sets the user's names (blank: none), read and written in one unit of work so a concurrent
 * change of another field (an administrator's, a verified address) is not undone. The same
 * checks as every other way of setting them (optionalText: IdentityError `invalid_argument`).
 * Returns the names changed, or undefined when the user is gone.
 */
export async function changeOwnNames(deps: Pick<OAuthDeps, 'store' | 'clock' | 'audit'>, user: UserProfile, input: { givenName: unknown; familyName: unknown; ip: string | undefined }): Promise<string[] | undefined> {
  const givenName = optionalText(input.givenName, 'givenName');
  const familyName = optionalText(input.familyName, 'familyName');
  const changed = await deps.store.transaction(async (tx) => {
    const current = await tx.users.get(user.id);
    if (current === undefined) return undefined;
    const fields = [...(givenName === current.givenName ? [] : ['givenName']), ...(familyName === current.familyName ? [] : ['familyName'])];
    if (fields.length > 0 && !(await tx.users.update({ ...current, givenName, familyName, updatedAt: deps.clock.now() }))) return undefined;
    return fields;
  });
  if (changed !== undefined && changed.length > 0) deps.audit.emit({ event: 'profile.changed', userId: user.id, username: user.username, fields: changed, ...(input.ip !== undefined ? { ip: input.ip } : {}) });
  return changed;
}
