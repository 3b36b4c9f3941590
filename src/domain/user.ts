export const USER_STATUSES = ['pending', 'enabled', 'disabled', 'locked'] as const;
export type UserStatus = (typeof USER_STATUSES)[number];

/** Custom attributes are multi-valued, as in the identity API's `<Attribute name><Value>` shape. */
export type Attributes = Record<string, string[]>;

export interface User {
  id: string;
  username: string;
  status: UserStatus;
  givenName: string | undefined;
  familyName: string | undefined;
  email: string | undefined;
  /**
   * Whether `email` was proven to reach the user — a verification link followed, or an
   * administrator's explicit act (docs/email-verification.md) — as the `email_verified` claim
   * says (OIDC Core §5.1). Never true without an address; any change of the address clears it.
   */
  emailVerified: boolean;
  organizationId: string | undefined;
  attributes: Attributes;
  createdAt: number;
  updatedAt: number;
}

/** A user without the custom attributes: what claims and status checks on the hot paths read. */
export type UserProfile = Omit<User, 'attributes'>;

/**
 * What a login needs: the user (without custom attributes, which no login reads) and its password
 * hash. Never leaves the identity layer.
 */
export interface UserCredentials {
  user: UserProfile;
  passwordHash: string | undefined;
}

/** Usernames are unique case-insensitively; this is the key they are compared by. */
export function normalizeUsername(username: string): string {
  return username.normalize('NFKC').toLowerCase();
}
