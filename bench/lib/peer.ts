/**
 * The peer's fixture: the same machine clients as gatehouse's (S7, S8, S9 and a resource server
 * for its S1), two relying parties (S2–S6 with RS256 ID tokens, S3-ES with ES256) and a login,
 * made up here and handed to bench/peers/oidc-provider.ts in its environment, since the peer keeps
 * its clients and its one account in its configuration rather than in a store.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { JWK } from 'jose';
import type { PeerFixtureConfig } from '../peers/oidc-provider.ts';
import { basic, REDIRECT_URI, type ClientCredentials } from './fixtures.ts';

export interface PeerFixture {
  /** For BENCH_PEER_FIXTURE. */
  config: PeerFixtureConfig;
  ccBasic: ClientCredentials;
  ccJwt: { clientId: string };
  device: { clientId: string };
  rs: ClientCredentials;
  rp: ClientCredentials;
  rpEs: ClientCredentials;
  login: { username: string; password: string };
}

export function makePeerFixture(clientJwk: JWK): PeerFixture {
  const secret = () => randomBytes(32).toString('base64url');
  const config: PeerFixtureConfig = {
    ccBasic: { clientId: randomUUID(), secret: secret() },
    ccJwt: { clientId: randomUUID(), jwk: clientJwk },
    device: { clientId: randomUUID() },
    rs: { clientId: randomUUID(), secret: secret() },
    rp: { clientId: randomUUID(), secret: secret() },
    rpEs: { clientId: randomUUID(), secret: secret() },
    redirectUri: REDIRECT_URI,
    login: { username: `peer-login-${randomBytes(4).toString('hex')}`, password: `correct horse battery ${randomBytes(4).toString('hex')}` },
  };
  return {
    config,
    ccBasic: { clientId: config.ccBasic.clientId, basic: basic(config.ccBasic.clientId, config.ccBasic.secret) },
    ccJwt: { clientId: config.ccJwt.clientId },
    device: { clientId: config.device.clientId },
    rs: { clientId: config.rs.clientId, basic: basic(config.rs.clientId, config.rs.secret) },
    rp: { clientId: config.rp.clientId, basic: basic(config.rp.clientId, config.rp.secret) },
    rpEs: { clientId: config.rpEs.clientId, basic: basic(config.rpEs.clientId, config.rpEs.secret) },
    login: config.login,
  };
}
