/**
 * The scope values gatehouse itself defines or knows by name. A leaf module: the scope rules
 * (scope.ts), registration (client-metadata.ts, client-registration.ts) and discovery
 * (`scopes_supported`) all read it, so none of them has to import another for a list.
 */

/** The scope values gatehouse grants on its own (OIDC Core §3.1.2.1 `openid`, §5.4 `profile` and `email`); discovery lists them as `scopes_supported`. */
export const SUPPORTED_SCOPES = ['openid', 'profile', 'email'] as const;

/**
 * The scope values OpenID Connect defines (Core §3.1.2.1 `openid`, §5.4 the claim scopes, §11
 * `offline_access`): a resource server cannot declare one, or a request for it would be two things.
 */
export const OIDC_STANDARD_SCOPES: ReadonlySet<string> = new Set(['openid', 'profile', 'email', 'address', 'phone', 'offline_access']);
