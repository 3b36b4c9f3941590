/**
 * Evaluating an authorization policy (issue 13, item 1; docs/authorization.md): whether a user may
 * use a client (the access rules), and which extra claims a response carries (the claim mappings).
 *
 * Never stale: the policy's row is read at each use, in the one statement that also reads the
 * user's attributes, groups and organization chain (PolicyStore.subject, or for a token's
 * responses the token's own lookup, TokenStore.findWithUser), so a change made on any instance
 * shows at the next response. Only the parsing of the document is cached, keyed by
 * (name, version): a new version is a new key. A client without a policy costs no statement.
 */
import type { Client } from '../../domain/client.ts';
import { parsePolicyDocument, PolicyDocumentError, type ClaimMapping, type ClaimTarget, type PolicyDocument, type PolicyRequirement } from '../../domain/policy.ts';
import { normalizeUsername, type UserProfile } from '../../domain/user.ts';
import type { PolicyStore, PolicySubject, TokenWithUser, UserStore } from '../../storage/ports.ts';

/** What a policy evaluation reads: the store's policies (the store itself, or a unit of work's). */
export type PolicyReader = { policies: Pick<PolicyStore, 'subject'>; users: Pick<UserStore, 'getProfile'> };

/** The policy of one client, as stored now, with the facts about one user it is evaluated on. */
export interface PolicyFacts {
  /** undefined: the client names a policy that is not stored (only rows written by hand can): it allows no one and maps nothing. */
  document: PolicyDocument | undefined;
  subject: PolicySubject;
  /** Read only for access, and only when the policy requires a verified address (`require_verified_email`). */
  emailVerified?: boolean;
}

/**
 * The client's policy and the user's facts, in one statement; undefined (and no statement) for a
 * client without a policy. `forAccess`: the access rules will be evaluated, so the organization's
 * ancestors are read when the policy has a rule that needs them (include_sub_organizations) —
 * guessed from the document parsed last for this name, and read again in the rare case the policy
 * changed to need them since. Claims alone never need them.
 */
export async function readPolicy(
  reader: PolicyReader,
  policyName: string | undefined,
  userId: string,
  options: { forAccess: boolean; alreadyRead?: PolicySubject | undefined },
): Promise<PolicyFacts | undefined> {
  if (policyName === undefined) return undefined;
  const known = PARSED.get(policyName);
  const ancestors = options.forAccess && (known === undefined || needsAncestors(known.document));
  // `alreadyRead`: the same facts read with the token (TokenWithUser.clientPolicySubject), which has no ancestors.
  let subject = options.alreadyRead !== undefined && !ancestors ? options.alreadyRead : await reader.policies.subject(policyName, userId, { ancestors });
  let document = subject.policy === undefined ? undefined : parsedDocument(policyName, subject.policy);
  if (options.forAccess && !ancestors && needsAncestors(document)) {
    subject = await reader.policies.subject(policyName, userId, { ancestors: true });
    document = subject.policy === undefined ? undefined : parsedDocument(policyName, subject.policy);
  }
  // require_verified_email: the user's state as stored now, read only for the policies that ask.
  const emailVerified = options.forAccess && document?.requireVerifiedEmail === true ? (await reader.users.getProfile(userId))?.emailVerified === true : undefined;
  return { document, subject, ...(emailVerified === undefined ? {} : { emailVerified }) };
}

function needsAncestors(document: PolicyDocument | undefined): boolean {
  return document?.access?.includeSubOrganizations === true && document.access.organizations.length > 0;
}

/**
 * The access rules: a user passes when any rule matches — a group they are in, their organization
 * (or, with include_sub_organizations, an organization above theirs), or an attribute holding one
 * of the listed values. A policy without access rules lets everyone in; a missing one, no one.
 */
export function policyAllows(facts: PolicyFacts | undefined): boolean {
  if (facts === undefined) return true;
  const { document, subject } = facts;
  if (document === undefined) return false;
  if (unverifiedEmail(facts)) return false;
  const access = document.access;
  if (access === undefined) return true;
  if (access.groups.length > 0) {
    const mine = new Set(subject.groups.map(normalizeUsername));
    if (access.groups.some((group) => mine.has(normalizeUsername(group)))) return true;
  }
  if (access.organizations.length > 0 && subject.organizations.length > 0) {
    const chain = access.includeSubOrganizations ? subject.organizations : subject.organizations.slice(0, 1);
    if (chain.some((organization) => access.organizations.includes(organization.id.toLowerCase()))) return true;
  }
  for (const [name, accepted] of Object.entries(access.attributes)) {
    if ((subject.attributes[name] ?? []).some((value) => accepted.includes(value))) return true;
  }
  return false;
}

/**
 * The claims the policy maps for `target`, released by `scope`: a mapping with a `scope` is
 * released only when the granted scope holds that value. A source without a value (an attribute
 * the user does not have, an unset profile field, no organization) leaves the claim out, as OIDC
 * Core §5.3.2 asks of claims with no value. Attributes are arrays of their values unless the
 * mapping says `single` (then the first value), as in the product gatehouse replaces.
 */
export function policyClaims(facts: PolicyFacts | undefined, user: UserProfile, target: ClaimTarget, scope: readonly string[]): Record<string, unknown> {
  const claims: Record<string, unknown> = {};
  if (facts?.document === undefined) return claims;
  for (const mapping of facts.document.claims) {
    if (!mapping.targets.includes(target)) continue;
    if (mapping.scope !== undefined && !scope.includes(mapping.scope)) continue;
    const value = claimValue(mapping, user, facts.subject);
    if (value !== undefined) claims[mapping.claim] = value;
  }
  return claims;
}

function claimValue(mapping: ClaimMapping, user: UserProfile, subject: PolicySubject): unknown {
  const { source } = mapping;
  switch (source.type) {
    case 'value':
      return source.value;
    case 'user':
      return user[source.field];
    case 'groups':
      return subject.groups;
    case 'organization':
      return subject.organizations[0]?.[source.field];
    case 'attribute': {
      const values = subject.attributes[source.name];
      if (values === undefined || values.length === 0) return undefined;
      return mapping.single ? values[0] : values;
    }
  }
}

/** Whether the policy refuses the user for an unverified e-mail address (require_verified_email): the refusal that names its reason. */
export function unverifiedEmail(facts: PolicyFacts | undefined): boolean {
  return facts?.document?.requireVerifiedEmail === true && facts.emailVerified !== true;
}

/** The error_description of a refusal for an unverified address (docs/email-verification.md, AM58). */
export const UNVERIFIED_EMAIL_REFUSAL = 'The authorization policy of this client requires a verified e-mail address; the user has not verified theirs.';

/** The error_description of a policy refusal (access_denied), for the client's developer. */
export const POLICY_REFUSAL = 'The authorization policy of this client does not allow this user.';

/**
 * Whether the client's policy lets the user use it (docs/authorization.md): the one check of the
 * authorization endpoint (silent and after the login form), the refresh, password and device grants.
 */
export async function checkPolicyAccess(reader: PolicyReader, client: Pick<Client, 'authorizationPolicy'>, userId: string, alreadyRead?: PolicySubject): Promise<boolean> {
  if (client.authorizationPolicy === undefined) return true;
  return policyAllows(await readPolicy(reader, client.authorizationPolicy, userId, { forAccess: true, alreadyRead }));
}

/**
 * The claims the token's client's policy maps for `target` (UserInfo, introspection) for the
 * token's user and scope, from the policy and facts read with the token itself
 * (TokenStore.findWithUser): no statement of its own, and nothing at all for a client without a policy.
 */
export function tokenPolicyClaims(
  found: Pick<TokenWithUser, 'clientPolicy' | 'clientPolicySubject'>,
  target: ClaimTarget,
  grant: { user: UserProfile; scope: readonly string[] },
): Record<string, unknown> {
  const { clientPolicy: name, clientPolicySubject: subject } = found;
  if (name === undefined || subject === undefined) return {};
  const document = subject.policy === undefined ? undefined : parsedDocument(name, subject.policy);
  return policyClaims({ document, subject }, grant.user, target, grant.scope);
}

/**
 * The names of the claims the client's policy releases for `scope` to any target (id_token,
 * userinfo, introspection, access_token), in the document's order: what the consent page lists
 * after the standard claims of the scope. Every mapping the scope releases is named, whether or
 * not the user has a value for it today: the policy is evaluated at each response and a consent
 * is remembered, so a value set later must already have been agreed to.
 */
export async function policyClaimNames(reader: PolicyReader, client: Pick<Client, 'authorizationPolicy'>, userId: string, scope: readonly string[]): Promise<string[]> {
  if (client.authorizationPolicy === undefined) return [];
  const facts = await readPolicy(reader, client.authorizationPolicy, userId, { forAccess: false });
  const released = (facts?.document?.claims ?? []).filter((mapping) => mapping.scope === undefined || scope.includes(mapping.scope));
  return [...new Set(released.map((mapping) => mapping.claim))];
}

/** Parsed documents by name, each with the version it was parsed from: a new version replaces the entry. */
const PARSED = new Map<string, { version: number; document: PolicyDocument | undefined }>();
const MAX_PARSED = 1000;

function parsedDocument(name: string, stored: { version: number; document: string }): PolicyDocument | undefined {
  const cached = PARSED.get(name);
  if (cached && cached.version === stored.version) return cached.document;
  let document: PolicyDocument | undefined;
  try {
    document = Object.freeze(parsePolicyDocument(JSON.parse(stored.document)));
  } catch {
    // A stored document that no longer parses (written by hand, or by a newer version) fails closed.
    document = undefined;
  }
  if (PARSED.size >= MAX_PARSED && !PARSED.has(name)) PARSED.delete(PARSED.keys().next().value!);
  PARSED.set(name, { version: stored.version, document });
  return document;
}

/**
 * The least authentication the client's policy asks of every sign-in to it (issue 24, item 3;
 * PolicyDocument.minimumAuthentication), read as stored now. A client whose policy is missing or
 * no longer parses gets none here: its access check refuses everyone anyway.
 */
export async function policyRequirement(
  reader: { policies: Pick<PolicyStore, 'get'> },
  client: Pick<Client, 'authorizationPolicy'>,
  alreadyRead?: PolicySubject,
): Promise<PolicyRequirement | undefined> {
  if (client.authorizationPolicy === undefined) return undefined;
  // The document read with the token (the refresh grant's TokenStore.findWithUser): no statement of its own.
  if (alreadyRead?.policy !== undefined) return parsedDocument(client.authorizationPolicy, alreadyRead.policy)?.minimumAuthentication;
  const policy = await reader.policies.get(client.authorizationPolicy).catch((error: unknown) => {
    // A stored document that no longer parses: as readPolicy, it fails closed at the access check.
    if (error instanceof PolicyDocumentError || error instanceof SyntaxError) return undefined;
    throw error;
  });
  return policy?.document.minimumAuthentication;
}
