/**
 * The peer's fixture: the same four machine clients as gatehouse's (S7, S8, S9 and a resource
 * server for its S1), made up here and handed to bench/peers/oidc-provider.ts in its environment,
 * since the peer keeps its clients in its configuration rather than in a store.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { JWK } from 'jose';
import type { PeerFixtureConfig } from '../peers/oidc-provider.ts';
import { basic, type ClientCredentials } from './fixtures.ts';

export interface PeerFixture {
  /** For BENCH_PEER_FIXTURE. */
  config: PeerFixtureConfig;
  ccBasic: ClientCredentials;
  ccJwt: { clientId: string };
  device: { clientId: string };
  rs: ClientCredentials;
}

export function makePeerFixture(clientJwk: JWK): PeerFixture {
  const secret = () => randomBytes(32).toString('base64url');
  const config: PeerFixtureConfig = {
    ccBasic: { clientId: randomUUID(), secret: secret() },
    ccJwt: { clientId: randomUUID(), jwk: clientJwk },
    device: { clientId: randomUUID() },
    rs: { clientId: randomUUID(), secret: secret() },
  };
  return {
    config,
    ccBasic: { clientId: config.ccBasic.clientId, basic: basic(config.ccBasic.clientId, config.ccBasic.secret) },
    ccJwt: { clientId: config.ccJwt.clientId },
    device: { clientId: config.device.clientId },
    rs: { clientId: config.rs.clientId, basic: basic(config.rs.clientId, config.rs.secret) },
  };
}
