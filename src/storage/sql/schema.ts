/**
 * Row types of the SQL store, as Kysely sees them. Times are epoch milliseconds (BIGINT),
 * booleans are 0/1 integers and documents are JSON text, so one schema serves SQLite and PostgreSQL.
 */
export interface OrganizationsTable {
  id: string;
  parent_id: string | null;
  technical_name: string;
  friendly_name: string;
  type: string | null;
  virtual: number;
  created_at: number;
  updated_at: number;
}

export interface AttributesTable {
  owner_id: string;
  name: string;
  position: number;
  value: string;
}

export interface UsersTable {
  id: string;
  username: string;
  username_key: string;
  password_hash: string | null;
  status: string;
  given_name: string | null;
  family_name: string | null;
  email: string | null;
  organization_id: string | null;
  created_at: number;
  updated_at: number;
  /** 1: the address was verified (migration 029); 0 otherwise. */
  email_verified: number;
  /** The language a self-registered user registered in (migration 035); null for accounts made otherwise. Optional: only the registration's statements write it. */
  registration_locale?: string | null;
}

export interface GroupsTable {
  id: string;
  name: string;
  name_key: string;
  description: string | null;
  created_at: number;
  /** 1: is or was an administrator group (migration 021); 0 otherwise. */
  administrator: number;
}

export interface GroupMembersTable {
  group_id: string;
  user_id: string;
}

export interface ClientsTable {
  client_id: string;
  name: string;
  secret_hash: string | null;
  /** client_secret_jwt only: the secret sealed with GATEHOUSE_KEY_ENCRYPTION_KEY (migration 009). */
  secret_sealed: string | null;
  active: number;
  redirect_uris: string;
  token_endpoint_auth_method: string | null;
  grant_types: string;
  code_challenge_method: string | null;
  scope: string | null;
  refresh_tokens: number;
  rotate_refresh_tokens: number;
  access_token_ttl: number | null;
  post_logout_redirect_uris: string;
  id_token_signed_response_alg: string | null;
  userinfo_signed_response_alg: string | null;
  /** The name of the client's authorization policy (migration 012); null: none. */
  authorization_policy: string | null;
  metadata: string;
  created_at: number;
  updated_at: number;
}

/** A resource server's RFC 8707 resource indicator (migration 014): unique across clients by its primary key. */
export interface ClientResourceUrisTable {
  uri: string;
  client_id: string;
}

/** A scope value a resource server declared (migration 019): unique across clients by its primary key. */
export interface ClientResourceScopesTable {
  scope: string;
  client_id: string;
}

export interface SessionsTable {
  id_hash: string;
  session_index: string;
  user_id: string;
  auth_time: number;
  amr: string;
  acr: string | null;
  created_at: number;
  expires_at: number;
  max_expires_at: number;
  /** Migration 033: the browser's User-Agent (truncated) and the client address at sign-in. */
  user_agent: string | null;
  client_ip: string | null;
}

export interface CodesTable {
  code_hash: string;
  client_id: string;
  user_id: string;
  redirect_uri: string;
  scope: string;
  nonce: string | null;
  code_challenge: string | null;
  code_challenge_method: string | null;
  session_index: string;
  auth_time: number;
  amr: string;
  acr: string | null;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
  replayed_at: number | null;
  /** Why the redemption that consumed the code was refused (migration 020); null otherwise. */
  refused_for: string | null;
}

export interface TokensTable {
  token_hash: string;
  kind: string;
  client_id: string;
  /** The four user columns are all set (a user token) or all null (a client token: migration 008). */
  user_id: string | null;
  scope: string;
  session_index: string | null;
  auth_time: number | null;
  amr: string | null;
  acr: string | null;
  code_hash: string | null;
  family_id: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  rotated_at: number | null;
}

export interface DeviceAuthorizationsTable {
  device_code_hash: string;
  user_code: string;
  client_id: string;
  scope: string;
  status: string;
  created_at: number;
  expires_at: number;
  interval_seconds: number;
  last_polled_at: number | null;
  too_fast: number;
  user_id: string | null;
  session_index: string | null;
  auth_time: number | null;
  amr: string | null;
  acr: string | null;
  decided_at: number | null;
  consumed_at: number | null;
}

export interface SigningKeysTable {
  kid: string;
  alg: string;
  public_jwk: string;
  private_jwk: string;
  encrypted: number;
  created_at: number;
  retired_at: number | null;
  publish_until: number | null;
}

export interface ThrottleCountersTable {
  key: string;
  failures: number;
  /** Attempts reserved and still being verified (migration 007). */
  pending: number;
  first_failure_at: number;
  last_failure_at: number;
  /** When the latest attempt was reserved; 0: none yet (migration 007). */
  reserved_at: number;
  expires_at: number;
}

export interface Database {
  organizations: OrganizationsTable;
  organization_attributes: AttributesTable;
  users: UsersTable;
  user_attributes: AttributesTable;
  groups: GroupsTable;
  group_members: GroupMembersTable;
  clients: ClientsTable;
  sessions: SessionsTable;
  authorization_codes: CodesTable;
  tokens: TokensTable;
  signing_keys: SigningKeysTable;
  throttle_counters: ThrottleCountersTable;
  client_assertions: ClientAssertionsTable;
  device_authorizations: DeviceAuthorizationsTable;
  consents: ConsentsTable;
  client_resource_uris: ClientResourceUrisTable;
  client_resource_scopes: ClientResourceScopesTable;
  policies: PoliciesTable;
  audit_events: AuditEventsTable;
  initial_access_tokens: InitialAccessTokensTable;
  registration_access_tokens: RegistrationAccessTokensTable;
  user_factors: UserFactorsTable;
  recovery_codes: RecoveryCodesTable;
  pending_sign_ins: PendingSignInsTable;
  webauthn_user_handles: WebauthnUserHandlesTable;
  passkey_challenges: PasskeyChallengesTable;
  outbox: OutboxTable;
  webhook_endpoints: WebhookEndpointsTable;
  password_resets: PasswordResetsTable;
  session_clients: SessionClientsTable;
  logout_deliveries: LogoutDeliveriesTable;
  email_codes: EmailCodesTable;
  account_registrations: AccountRegistrationsTable;
  invitations: InvitationsTable;
  email_verifications: EmailVerificationsTable;
}

/** Users' second factors (migration 022): the TOTP columns are null for recovery codes. */
export interface UserFactorsTable {
  id: string;
  user_id: string;
  kind: string;
  name: string;
  secret: string | null;
  sealed: number;
  algorithm: string | null;
  digits: number | null;
  period: number | null;
  last_step: number | null;
  created_at: number;
  last_used_at: number | null;
  /** Migration 024, passkeys only (null for the other kinds). */
  credential_id: string | null;
  public_key: string | null;
  sign_count: number | null;
  /** A JSON array of transport names. */
  transports: string | null;
  backup_eligible: number | null;
  backed_up: number | null;
  aaguid: string | null;
  /** Migration 030, e-mail factors only: the address their codes go to. */
  email: string | null;
}

/** Each user's WebAuthn user handle (migration 024): random, base64url, unique. */
export interface WebauthnUserHandlesTable {
  user_id: string;
  handle: string;
}

/** Challenges of WebAuthn ceremonies under way (migration 024), by SHA-256. */
export interface PasskeyChallengesTable {
  challenge_hash: string;
  purpose: string;
  binding: string;
  user_id: string | null;
  created_at: number;
  expires_at: number;
}

/** Recovery codes (migration 022): the SHA-256 of each, and when it was used (null: unused). */
export interface RecoveryCodesTable {
  factor_id: string;
  code_hash: string;
  used_at: number | null;
}

/** Sign-ins waiting for the second factor (migration 023): `amr` is a JSON array. */
export interface PendingSignInsTable {
  id_hash: string;
  user_id: string;
  client_id: string;
  binding: string;
  amr: string;
  created_at: number;
  expires_at: number;
}

/** Authorization policies (migration 012): the document as JSON text; `version` rises with each update. */
export interface PoliciesTable {
  name: string;
  document: string;
  version: number;
  created_at: number;
  updated_at: number;
}

/** Client assertion jtis used once (migration 009): SHA-256 of client_id and jti, kept until the assertion's exp. */
export interface ClientAssertionsTable {
  key: string;
  expires_at: number;
}

/** Consents to third-party clients (migration 013): `scope` is the space-separated, sorted set of consented values. */
export interface ConsentsTable {
  user_id: string;
  client_id: string;
  scope: string;
  granted_at: number;
  updated_at: number;
}

/** Audit events kept in the store (migration 015): the event's other fields as JSON text in `data`. */
export interface AuditEventsTable {
  id: string;
  at: number;
  event: string;
  user_id: string | null;
  client_id: string | null;
  actor_id: string | null;
  data: string;
}

/** Initial access tokens of dynamic client registration (migration 016): the SHA-256 of the token only. */
export interface InitialAccessTokensTable {
  id: string;
  token_hash: string;
  description: string | null;
  created_by: string;
  created_at: number;
  expires_at: number;
  uses_left: number;
}

/** RFC 7592 registration access tokens (migration 016): one per dynamically registered client, its SHA-256 only. */
export interface RegistrationAccessTokensTable {
  client_id: string;
  token_hash: string;
  created_at: number;
}

/** The durable outbox (migration 027; src/domain/outbox.ts). `payload` is JSON text. */
export interface OutboxTable {
  id: string;
  channel: string;
  kind: string;
  destination: string;
  payload: string;
  dedupe_key: string;
  status: string;
  attempts: number;
  next_attempt_at: number;
  lease_owner: string | null;
  lease_until: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  delivered_at: number | null;
  /** Migration 036 (webhooks): null for the other channels. */
  endpoint_id: string | null;
  ordering_key: string | null;
  response_status: number | null;
}

/** Webhook endpoints (migration 036). */
export interface WebhookEndpointsTable {
  id: string;
  url: string;
  description: string;
  events: string;
  enabled: number;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: number | null;
  created_at: number;
  updated_at: number;
}

/** Password reset links (migration 028): the SHA-256 of the token, never the token. */
export interface PasswordResetsTable {
  token_hash: string;
  user_id: string;
  password_fingerprint: string;
  created_at: number;
  expires_at: number;
}

/** The relying parties an SSO session gave tokens to (migration 034; back-channel logout). */
export interface SessionClientsTable {
  session_index: string;
  client_id: string;
  sid: string;
  created_at: number;
}

/** The last back-channel logout delivery per client (migration 037). */
export interface LogoutDeliveriesTable {
  client_id: string;
  status: string;
  attempted_at: number;
  message_id: string;
  error: string | null;
}

/** E-mail one-time codes (migration 030): the keyed hash of the code, never the code. */
export interface EmailCodesTable {
  id: string;
  user_id: string;
  factor_id: string | null;
  purpose: string;
  address: string;
  code_hash: string;
  created_at: number;
  expires_at: number;
}

/** Self-registration links (migration 031): the SHA-256 of the token, never the token. */
export interface AccountRegistrationsTable {
  token_hash: string;
  email: string;
  given_name: string | null;
  family_name: string | null;
  locale: string;
  return_to: string | null;
  created_at: number;
  expires_at: number;
}

/** Invitations (migration 032). */
export interface InvitationsTable {
  id: string;
  token_hash: string;
  email: string;
  email_key: string;
  given_name: string | null;
  family_name: string | null;
  organization_id: string | null;
  invited_by: string;
  locale: string;
  status: string;
  created_at: number;
  expires_at: number;
  ended_at: number | null;
  user_id: string | null;
}
/** E-mail verification links (migration 029): the SHA-256 of the token, never the token. */
export interface EmailVerificationsTable {
  token_hash: string;
  user_id: string;
  email: string;
  /** The user's address when the link was sent; '' for none. */
  previous_email: string;
  created_at: number;
  expires_at: number;
}
