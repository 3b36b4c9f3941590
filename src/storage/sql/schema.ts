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
}

export interface GroupsTable {
  id: string;
  name: string;
  name_key: string;
  description: string | null;
  created_at: number;
}

export interface GroupMembersTable {
  group_id: string;
  user_id: string;
}

export interface ClientsTable {
  client_id: string;
  name: string;
  secret_hash: string | null;
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
  metadata: string;
  created_at: number;
  updated_at: number;
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
}
