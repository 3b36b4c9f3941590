/**
 * Authorization policies (issue 13, item 1): who may use a client, and which extra claims its
 * tokens and responses carry. A policy is a document; this module is its shape and the one
 * validation of its wire form (the CLI's file), naming the field at fault in every error.
 */
import { REQUIREMENTS, type Requirement } from '../protocol/acr-levels.ts';

/** Where a mapped claim goes: OIDC Core §2 (ID token), §5.3 (UserInfo), RFC 7662 (introspection), RFC 9068 (JWT access token). */
export const CLAIM_TARGETS = ['id_token', 'userinfo', 'introspection', 'access_token'] as const;
export type ClaimTarget = (typeof CLAIM_TARGETS)[number];

/** The profile fields a claim may come from, by their wire name; the value is the User field. */
export const USER_SOURCES = { 'user.id': 'id', 'user.username': 'username', 'user.givenName': 'givenName', 'user.familyName': 'familyName', 'user.email': 'email' } as const;
/** The organization fields a claim may come from: its id, technical name and entity (friendly) name. */
export const ORGANIZATION_SOURCES = { 'organization.id': 'id', 'organization.technicalName': 'technicalName', 'organization.name': 'friendlyName' } as const;

export type ClaimSource =
  | { type: 'attribute'; name: string }
  | { type: 'user'; field: (typeof USER_SOURCES)[keyof typeof USER_SOURCES] }
  | { type: 'groups' }
  | { type: 'organization'; field: (typeof ORGANIZATION_SOURCES)[keyof typeof ORGANIZATION_SOURCES] }
  | { type: 'value'; value: string };

export interface ClaimMapping {
  claim: string;
  source: ClaimSource;
  /** Where it is released; every target unless the document narrowed it. */
  targets: readonly ClaimTarget[];
  /** Released only when the granted scope holds this value. */
  scope: string | undefined;
  /** An attribute's first value as a string instead of the array of its values. */
  single: boolean;
}

export interface PolicyAccess {
  /** Group names (compared case-insensitively, as group names are). */
  groups: readonly string[];
  /** Organization ids. */
  organizations: readonly string[];
  includeSubOrganizations: boolean;
  /** Attribute name → accepted values: the user holds at least one of them. */
  attributes: Readonly<Record<string, readonly string[]>>;
}

export interface PolicyDocument {
  name: string;
  /** undefined: everyone may use the client. */
  access: PolicyAccess | undefined;
  claims: readonly ClaimMapping[];
  /**
   * The least authentication a sign-in to the client needs (issue 24, item 3): one of the
   * requirements of src/oauth/levels.ts, always essential. undefined: whatever the request asks.
   */
  minimumAuthentication: PolicyRequirement | undefined;
  /**
   * `require_verified_email` (issue 25 item 3, docs/email-verification.md): a user whose e-mail
   * address is not verified gets no code or token for the client, whatever the access rules say.
   */
  requireVerifiedEmail: boolean;
}

/** The requirements a policy may set: those of the levels of authentication (src/protocol/acr-levels.ts). */
export const POLICY_REQUIREMENTS = REQUIREMENTS;
export type PolicyRequirement = Requirement;

/** A stored policy: its document and the version every update raises (the cache key with the name). */
export interface Policy {
  document: PolicyDocument;
  version: number;
  createdAt: number;
  updatedAt: number;
}

/**
 * Claims a policy may never set: those the protocol defines and the server computes (OIDC Core §2,
 * §3.1.3.6; RFC 7519 §4.1; RFC 7662 §2.2; RFC 9068 §2.2; Ubisecure's session_index), and the
 * extra members gatehouse's own responses carry (`token_audiences`, shared decision of issue 13).
 */
export const PROTECTED_CLAIMS: ReadonlySet<string> = new Set([
  'sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'amr', 'acr', 'session_index', 'nonce', 'azp', 'jti', 'scope', 'client_id', 'active', 'token_type',
  'at_hash', 'c_hash', 'nbf', 'token_audiences', 'cnf', 'sid',
  // Exact everywhere it appears (docs/email-verification.md): only the verification state says it.
  'email_verified',
]);

export const POLICY_LIMITS = { name: 100, claims: 50, listItems: 100, text: 255, attributes: 20 } as const;

/** A policy document that breaks a rule; `field` names it as in the document (`claims[2].from`). */
export class PolicyDocumentError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = 'PolicyDocumentError';
    this.field = field;
  }
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A claim name: printable, no spaces (it becomes a JSON member name and a CLI column). */
const CLAIM = /^[A-Za-z0-9_.:\-/]+$/;
/** A scope value (RFC 6749 §3.3: NQCHAR without space). */
const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/** The policy in its wire form, checked; throws PolicyDocumentError naming the first field at fault. */
export function parsePolicyDocument(input: unknown): PolicyDocument {
  const doc = object(input, '(document)', ['name', 'access', 'claims', 'minimum_authentication', 'require_verified_email']);
  const name = text(doc.name, 'name', POLICY_LIMITS.name);
  if (!NAME.test(name)) throw new PolicyDocumentError('name', 'must start with a letter or digit and hold only letters, digits, ".", "_" and "-"');
  const access = doc.access === undefined ? undefined : parseAccess(doc.access);
  const claims = doc.claims === undefined ? [] : list(doc.claims, 'claims', POLICY_LIMITS.claims).map((c, i) => parseClaim(c, `claims[${i}]`));
  const seen = new Set<string>();
  claims.forEach((c, i) => {
    if (seen.has(c.claim)) throw new PolicyDocumentError(`claims[${i}].claim`, `${JSON.stringify(c.claim)} is mapped twice`);
    seen.add(c.claim);
  });
  const minimumAuthentication = doc.minimum_authentication === undefined ? undefined : requirement(doc.minimum_authentication);
  if (doc.require_verified_email !== undefined && typeof doc.require_verified_email !== 'boolean') throw new PolicyDocumentError('require_verified_email', 'must be true or false');
  return { name, access, claims, minimumAuthentication, requireVerifiedEmail: doc.require_verified_email === true };
}

function requirement(value: unknown): PolicyRequirement {
  if (typeof value !== 'string' || !(POLICY_REQUIREMENTS as readonly string[]).includes(value)) {
    throw new PolicyDocumentError('minimum_authentication', `must be one of ${POLICY_REQUIREMENTS.join(', ')} (docs/authorization.md, "Levels of authentication")`);
  }
  return value as PolicyRequirement;
}

function parseAccess(input: unknown): PolicyAccess {
  const a = object(input, 'access', ['groups', 'organizations', 'include_sub_organizations', 'attributes']);
  const groups = a.groups === undefined ? [] : list(a.groups, 'access.groups', POLICY_LIMITS.listItems).map((g, i) => text(g, `access.groups[${i}]`, POLICY_LIMITS.text));
  const organizations = a.organizations === undefined ? [] : list(a.organizations, 'access.organizations', POLICY_LIMITS.listItems).map((o, i) => {
    const id = text(o, `access.organizations[${i}]`, 36);
    if (!UUID.test(id)) throw new PolicyDocumentError(`access.organizations[${i}]`, 'must be an organization id (a UUID)');
    return id.toLowerCase();
  });
  if (a.include_sub_organizations !== undefined && typeof a.include_sub_organizations !== 'boolean') throw new PolicyDocumentError('access.include_sub_organizations', 'must be true or false');
  const attributes: Record<string, readonly string[]> = {};
  if (a.attributes !== undefined) {
    const given = object(a.attributes, 'access.attributes');
    const names = Object.keys(given);
    if (names.length > POLICY_LIMITS.attributes) throw new PolicyDocumentError('access.attributes', `must name at most ${POLICY_LIMITS.attributes} attributes`);
    for (const attribute of names) {
      const field = `access.attributes.${attribute}`;
      text(attribute, field, POLICY_LIMITS.text);
      const values = list(given[attribute], field, POLICY_LIMITS.listItems).map((v, i) => text(v, `${field}[${i}]`, POLICY_LIMITS.text));
      if (values.length === 0) throw new PolicyDocumentError(field, 'must list at least one value');
      attributes[attribute] = values;
    }
  }
  if (groups.length + organizations.length + Object.keys(attributes).length === 0) throw new PolicyDocumentError('access', 'must name at least one group, organization or attribute (leave access out to let everyone in)');
  return { groups, organizations, includeSubOrganizations: a.include_sub_organizations === true, attributes };
}

function parseClaim(input: unknown, at: string): ClaimMapping {
  const c = object(input, at, ['claim', 'from', 'value', 'in', 'scope', 'single']);
  const claim = text(c.claim, `${at}.claim`, POLICY_LIMITS.text);
  if (!CLAIM.test(claim)) throw new PolicyDocumentError(`${at}.claim`, 'must hold only letters, digits and _ . : - /');
  if (PROTECTED_CLAIMS.has(claim)) throw new PolicyDocumentError(`${at}.claim`, `${JSON.stringify(claim)} is set by the server and cannot be mapped`);
  if ((c.from === undefined) === (c.value === undefined)) throw new PolicyDocumentError(`${at}.from`, 'give exactly one of "from" and "value"');
  const source: ClaimSource = c.value !== undefined ? { type: 'value', value: text(c.value, `${at}.value`, POLICY_LIMITS.text) } : parseSource(text(c.from, `${at}.from`, POLICY_LIMITS.text), `${at}.from`);
  let targets: readonly ClaimTarget[] = CLAIM_TARGETS;
  if (c.in !== undefined) {
    const given = list(c.in, `${at}.in`, CLAIM_TARGETS.length).map((t, i) => {
      if (!(CLAIM_TARGETS as readonly unknown[]).includes(t)) throw new PolicyDocumentError(`${at}.in[${i}]`, `must be one of ${CLAIM_TARGETS.join(', ')}`);
      return t as ClaimTarget;
    });
    if (given.length === 0) throw new PolicyDocumentError(`${at}.in`, 'must name at least one target (leave it out for all)');
    if (new Set(given).size !== given.length) throw new PolicyDocumentError(`${at}.in`, 'names a target twice');
    targets = CLAIM_TARGETS.filter((t) => given.includes(t));
  }
  let scope: string | undefined;
  if (c.scope !== undefined) {
    scope = text(c.scope, `${at}.scope`, POLICY_LIMITS.text);
    if (!SCOPE.test(scope)) throw new PolicyDocumentError(`${at}.scope`, 'must be one scope value (RFC 6749 §3.3)');
  }
  if (c.single !== undefined && typeof c.single !== 'boolean') throw new PolicyDocumentError(`${at}.single`, 'must be true or false');
  if (c.single === true && source.type !== 'attribute') throw new PolicyDocumentError(`${at}.single`, 'applies only to "from": "attribute:<name>"');
  return { claim, source, targets, scope, single: c.single === true };
}

function parseSource(from: string, field: string): ClaimSource {
  if (from.startsWith('attribute:')) {
    const name = from.slice('attribute:'.length);
    if (name.trim() === '') throw new PolicyDocumentError(field, 'names no attribute');
    return { type: 'attribute', name };
  }
  if (from === 'groups') return { type: 'groups' };
  if (Object.hasOwn(USER_SOURCES, from)) return { type: 'user', field: USER_SOURCES[from as keyof typeof USER_SOURCES] };
  if (Object.hasOwn(ORGANIZATION_SOURCES, from)) return { type: 'organization', field: ORGANIZATION_SOURCES[from as keyof typeof ORGANIZATION_SOURCES] };
  const known = ['attribute:<name>', 'groups', ...Object.keys(USER_SOURCES), ...Object.keys(ORGANIZATION_SOURCES)];
  throw new PolicyDocumentError(field, `must be one of ${known.join(', ')}`);
}

/** The document back in its wire form (what `policy show` prints and the store keeps). */
export function policyDocumentJson(doc: PolicyDocument): Record<string, unknown> {
  const fromOf = (s: ClaimSource): Record<string, string> => {
    switch (s.type) {
      case 'attribute':
        return { from: `attribute:${s.name}` };
      case 'groups':
        return { from: 'groups' };
      case 'user':
        return { from: Object.entries(USER_SOURCES).find(([, f]) => f === s.field)![0] };
      case 'organization':
        return { from: Object.entries(ORGANIZATION_SOURCES).find(([, f]) => f === s.field)![0] };
      case 'value':
        return { value: s.value };
    }
  };
  return {
    name: doc.name,
    ...(doc.access === undefined
      ? {}
      : {
          access: {
            ...(doc.access.groups.length ? { groups: doc.access.groups } : {}),
            ...(doc.access.organizations.length ? { organizations: doc.access.organizations } : {}),
            ...(doc.access.includeSubOrganizations ? { include_sub_organizations: true } : {}),
            ...(Object.keys(doc.access.attributes).length ? { attributes: doc.access.attributes } : {}),
          },
        }),
    claims: doc.claims.map((c) => ({
      claim: c.claim,
      ...fromOf(c.source),
      ...(c.targets.length === CLAIM_TARGETS.length ? {} : { in: c.targets }),
      ...(c.scope === undefined ? {} : { scope: c.scope }),
      ...(c.single ? { single: true } : {}),
    })),
    ...(doc.minimumAuthentication === undefined ? {} : { minimum_authentication: doc.minimumAuthentication }),
    ...(doc.requireVerifiedEmail ? { require_verified_email: true } : {}),
  };
}

function object(value: unknown, field: string, keys?: readonly string[]): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new PolicyDocumentError(field, 'must be a JSON object');
  const record = value as Record<string, unknown>;
  if (keys) {
    const unknownKey = Object.keys(record).find((k) => !keys.includes(k));
    if (unknownKey !== undefined) throw new PolicyDocumentError(field === '(document)' ? unknownKey : `${field}.${unknownKey}`, `is not a member of a policy document (known: ${keys.join(', ')})`);
  }
  return record;
}

function list(value: unknown, field: string, max: number): unknown[] {
  if (!Array.isArray(value)) throw new PolicyDocumentError(field, 'must be a JSON array');
  if (value.length > max) throw new PolicyDocumentError(field, `must hold at most ${max} items`);
  return value;
}

function text(value: unknown, field: string, max: number): string {
  if (typeof value !== 'string') throw new PolicyDocumentError(field, 'must be a string');
  if (value.trim() === '' || value !== value.trim()) throw new PolicyDocumentError(field, 'must be non-empty, without leading or trailing spaces');
  if ([...value].length > max) throw new PolicyDocumentError(field, `must be at most ${max} characters`);
  if (/\p{Cc}/u.test(value)) throw new PolicyDocumentError(field, 'must not contain control characters');
  return value;
}
