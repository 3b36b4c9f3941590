/**
 * A user's remembered consent to a third-party client (issue 13, item 4): the scope values the user
 * agreed the client may receive, audiences included (they are scope values, src/oauth/scope.ts).
 * One per user and client; a later consent to more values widens it (ConsentStore.grant).
 */
export interface Consent {
  userId: string;
  clientId: string;
  /** The consented scope values, sorted and without duplicates. */
  scope: readonly string[];
  /** When the user first consented (ms). */
  grantedAt: number;
  /** When the consent last changed (ms). */
  updatedAt: number;
}

/** A set of scope values in the one form stored and compared: sorted, without duplicates or empty values. */
export function scopeSet(values: Iterable<string>): string[] {
  return [...new Set([...values].filter((value) => value !== ''))].sort();
}

/** Whether every value of `requested` is among `consented`. */
export function covers(consented: readonly string[], requested: Iterable<string>): boolean {
  const have = new Set(consented);
  for (const value of requested) if (!have.has(value)) return false;
  return true;
}
