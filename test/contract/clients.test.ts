import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SIGNING_ALGS } from '../../src/protocol/constants.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { InvalidClientMetadata, registerClient, rotateClientSecret, setClientActive, updateClient, type ClientRegistrationDeps as RegistrationDeps } from '../../src/oauth/client-registration.ts';
import { ConflictError, type Store } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aClient, only, openTestStore, T0, unique, warmUp, type TestStore } from '../helpers/store.ts';

for (const kind of DATABASES) {
  describe(`client store on ${kind.name}`, () => {
    let harness: TestStore;
    let store: Store;
    before(async () => {
      harness = await openTestStore(kind);
      store = harness.store;
    });
    after(async () => harness.close());

    test('a client with every optional set round-trips field for field', async () => {
      const client = aClient({
        idTokenSignedResponseAlg: 'EdDSA',
        userinfoSignedResponseAlg: 'PS256',
        metadata: { client_name: 'Åsa’s app ✓', redirect_uris: ['https://rp.example/cb'], default_max_age: 3600, require_auth_time: true, nested: { list: [1, 'two', null], empty: {} } },
      });
      await store.clients.insert(client);
      assert.deepEqual(await store.clients.get(client.clientId), client);
    });

    test('each signing algorithm round-trips as id_token_signed_response_alg and userinfo_signed_response_alg (AL-05)', async () => {
      for (const alg of SIGNING_ALGS) {
        const client = aClient({ idTokenSignedResponseAlg: alg, userinfoSignedResponseAlg: alg });
        await store.clients.insert(client);
        assert.deepEqual(await store.clients.get(client.clientId), client);
      }
    });

    test('a public client with every optional unset round-trips with undefined, false and empty lists', async () => {
      const client = aClient({
        secretHash: undefined,
        active: false,
        redirectUris: [],
        tokenEndpointAuthMethod: undefined,
        grantTypes: ['authorization_code'],
        codeChallengeMethod: undefined,
        scope: undefined,
        refreshTokens: false,
        rotateRefreshTokens: true,
        accessTokenTtl: undefined,
        postLogoutRedirectUris: [],
        idTokenSignedResponseAlg: 'RS256',
        userinfoSignedResponseAlg: undefined,
        metadata: {},
      });
      await store.clients.insert(client);
      const stored = await store.clients.get(client.clientId);
      assert.deepEqual(stored, client);
      assert.ok(stored && 'secretHash' in stored && 'scope' in stored, 'optional fields are present as undefined');
    });

    test('the other enum values round-trip', async () => {
      const client = aClient({ tokenEndpointAuthMethod: 'none', codeChallengeMethod: 'plain', secretHash: undefined });
      const post = aClient({ tokenEndpointAuthMethod: 'client_secret_post' });
      await store.clients.insert(client);
      await store.clients.insert(post);
      assert.deepEqual(await store.clients.get(client.clientId), client);
      assert.deepEqual(await store.clients.get(post.clientId), post);
    });

    test('an unknown client_id is undefined', async () => {
      assert.equal(await store.clients.get(unique('nobody-')), undefined);
    });

    test('a second client with the same client_id is a ConflictError and leaves the first unchanged', async () => {
      const client = aClient();
      await store.clients.insert(client);
      await assert.rejects(store.clients.insert(aClient({ clientId: client.clientId, name: 'Impostor' })), ConflictError);
      assert.deepEqual(await store.clients.get(client.clientId), client);
    });

    test('client_ids are case-sensitive: Foo and foo are two clients', async () => {
      const id = unique('Case-');
      const upper = aClient({ clientId: id });
      const lower = aClient({ clientId: id.toLowerCase() });
      await store.clients.insert(upper);
      await store.clients.insert(lower);
      assert.deepEqual(await store.clients.get(id), upper);
      assert.deepEqual(await store.clients.get(id.toLowerCase()), lower);
    });

    test('update replaces every field, including unsetting optionals', async () => {
      const client = aClient();
      await store.clients.insert(client);
      const changed = {
        ...client,
        name: 'Renamed',
        secretHash: undefined,
        active: false,
        redirectUris: ['https://new.example/cb'],
        tokenEndpointAuthMethod: 'none' as const,
        grantTypes: ['authorization_code' as const],
        codeChallengeMethod: undefined,
        scope: 'openid',
        refreshTokens: false,
        rotateRefreshTokens: true,
        accessTokenTtl: undefined,
        postLogoutRedirectUris: [],
        metadata: { client_name: 'Renamed' },
        updatedAt: T0 + 5000,
      };
      assert.equal(await store.clients.update(changed), true);
      assert.deepEqual(await store.clients.get(client.clientId), changed);
    });

    test('a change made through another store instance (another process) is seen at once; what get returns is frozen', async () => {
      const client = aClient();
      await store.clients.insert(client);
      const before = await store.clients.get(client.clientId);
      assert.equal(before?.active, true);
      assert.ok(Object.isFrozen(before) && Object.isFrozen(before.redirectUris), 'shared between requests, so unchangeable');
      const other = await harness.open();
      // Same updatedAt: only the content differs, so nothing but the full row can tell.
      await other.clients.update({ ...client, active: false, redirectUris: ['https://other.example/cb'] });
      const after = await store.clients.get(client.clientId);
      assert.equal(after?.active, false);
      assert.deepEqual(after?.redirectUris, ['https://other.example/cb']);
      assert.equal(await store.clients.get(client.clientId), after, 'an unchanged row gives the same client again');
    });

    test('update of an unknown client is false and creates nothing', async () => {
      const client = aClient();
      assert.equal(await store.clients.update(client), false);
      assert.equal(await store.clients.get(client.clientId), undefined);
    });

    test('delete returns true, then false; the client is gone and others stay', async () => {
      const client = aClient();
      const other = aClient();
      await store.clients.insert(client);
      await store.clients.insert(other);
      assert.equal(await store.clients.delete(client.clientId), true);
      assert.equal(await store.clients.get(client.clientId), undefined);
      assert.equal(await store.clients.delete(client.clientId), false);
      assert.deepEqual(await store.clients.get(other.clientId), other);
    });

    test('list returns every client, oldest first, then by client_id', async () => {
      const p = unique('list-');
      const newest = aClient({ clientId: `${p}-a`, createdAt: T0 + 3000 });
      const tiedB = aClient({ clientId: `${p}-c`, createdAt: T0 + 1000 });
      const tiedA = aClient({ clientId: `${p}-b`, createdAt: T0 + 1000 });
      const oldest = aClient({ clientId: `${p}-d`, createdAt: T0 - 1000 });
      for (const c of [newest, tiedB, tiedA, oldest]) await store.clients.insert(c);
      const listed = only(await store.clients.list(), (c) => c.clientId, [newest, tiedB, tiedA, oldest].map((c) => c.clientId));
      assert.deepEqual(listed, [oldest, tiedA, tiedB, newest]);
    });

    test('a secret rotation and a deactivation at once, from two instances: neither change is lost (repeated)', async () => {
      // Each change reads the client and writes the whole row back; as separate statements the
      // later write undid the other's change (a deactivated client came back active).
      const other = await harness.open();
      await Promise.all([warmUp(store, 2), warmUp(other, 2)]);
      const TRIALS = 20;
      const lost: string[] = [];
      for (let trial = 0; trial < TRIALS; trial++) {
        const client = aClient();
        await store.clients.insert(client);
        const [rotated] = await Promise.all([
          rotateClientSecret({ clients: store.clients, transaction: store.transaction, clock: systemClock, random: cryptoRandom }, client.clientId),
          setClientActive({ transaction: other.transaction, clock: systemClock }, client.clientId, false),
        ]);
        const stored = (await store.clients.get(client.clientId))!;
        if (stored.active) lost.push(`trial ${trial}: the deactivation`);
        if (stored.secretHash !== hashSecret(rotated.clientSecret)) lost.push(`trial ${trial}: the new secret`);
      }
      assert.deepEqual(lost, []);
    });

    test('resource URIs (RI-03): found by URI exactly, replaced on update, gone with the client; another client\'s URI is a ConflictError', async () => {
      const uri = `https://${unique('api')}.example/`;
      const server = aClient({ metadata: { resource_server: true, resource_uris: [uri, `${uri}v2`] } });
      await store.clients.insert(server);
      assert.deepEqual(await store.clients.findByResourceUri(uri), server);
      assert.deepEqual(await store.clients.findByResourceUri(`${uri}v2`), server);
      assert.equal(await store.clients.findByResourceUri(uri.toUpperCase()), undefined, 'compared exactly');
      assert.equal(await store.clients.findByResourceUri(`${uri}v3`), undefined);
      // Not a resource server: its metadata's URIs are not registered.
      const plain = aClient({ metadata: { resource_uris: [`${uri}plain`] } });
      await store.clients.insert(plain);
      assert.equal(await store.clients.findByResourceUri(`${uri}plain`), undefined);
      // Another client's URI: refused, and nothing of the refused insert or update stays.
      const thief = aClient({ metadata: { resource_server: true, resource_uris: [`${uri}mine`, uri] } });
      await assert.rejects(store.clients.insert(thief), ConflictError);
      assert.equal(await store.clients.get(thief.clientId), undefined);
      assert.equal(await store.clients.findByResourceUri(`${uri}mine`), undefined);
      await assert.rejects(store.transaction((tx) => tx.clients.update({ ...plain, name: 'Stolen', metadata: { resource_server: true, resource_uris: [uri] } })), ConflictError);
      assert.deepEqual(await store.clients.get(plain.clientId), plain);
      // An update replaces the URIs: the dropped one is free again.
      const updated = { ...server, metadata: { resource_server: true, resource_uris: [`${uri}v2`] } };
      assert.equal(await store.clients.update(updated), true);
      assert.equal(await store.clients.findByResourceUri(uri), undefined);
      assert.deepEqual(await store.clients.findByResourceUri(`${uri}v2`), updated);
      assert.equal(await store.clients.delete(server.clientId), true);
      assert.equal(await store.clients.findByResourceUri(`${uri}v2`), undefined, 'deleted with the client');
      await store.clients.insert(aClient({ metadata: { resource_server: true, resource_uris: [`${uri}v2`] } }));
    });

    test('declared scope values (RS-01): owners found by value in one call, replaced on update, gone with the client; another client\'s value is a ConflictError', async () => {
      const read = unique('orders.read');
      const write = unique('orders.write');
      const server = aClient({ metadata: { resource_server: true, resource_scopes: [read, write] } });
      await store.clients.insert(server);
      assert.deepEqual(await store.clients.resourceScopeOwners([read, write, 'openid', unique('none')]), new Map([[read, server.clientId], [write, server.clientId]]));
      assert.deepEqual(await store.clients.resourceScopeOwners([read.toUpperCase()]), new Map(), 'compared exactly');
      assert.deepEqual(await store.clients.resourceScopeOwners([]), new Map());
      // Not a resource server: its metadata's values are not declared.
      const plain = aClient({ metadata: { resource_scopes: [unique('plain')] } });
      await store.clients.insert(plain);
      assert.deepEqual(await store.clients.resourceScopeOwners(plain.metadata.resource_scopes as string[]), new Map());
      // Another client's value: refused, and nothing of the refused insert or update stays.
      const mine = unique('mine');
      const thief = aClient({ metadata: { resource_server: true, resource_scopes: [mine, read] } });
      await assert.rejects(store.clients.insert(thief), ConflictError);
      assert.equal(await store.clients.get(thief.clientId), undefined);
      assert.deepEqual(await store.clients.resourceScopeOwners([mine]), new Map());
      await assert.rejects(store.transaction((tx) => tx.clients.update({ ...plain, name: 'Stolen', metadata: { resource_server: true, resource_scopes: [write] } })), ConflictError);
      assert.deepEqual(await store.clients.get(plain.clientId), plain);
      // An update replaces the values: the dropped one is free again.
      const updated = { ...server, metadata: { resource_server: true, resource_scopes: [write] } };
      assert.equal(await store.clients.update(updated), true);
      assert.deepEqual(await store.clients.resourceScopeOwners([read, write]), new Map([[write, server.clientId]]));
      assert.equal(await store.clients.delete(server.clientId), true);
      assert.deepEqual(await store.clients.resourceScopeOwners([write]), new Map(), 'deleted with the client');
      const next = aClient({ metadata: { resource_server: true, resource_scopes: [write, read] } });
      await store.clients.insert(next);
      assert.deepEqual(await store.clients.resourceScopeOwners([read, write]), new Map([[read, next.clientId], [write, next.clientId]]));
    });

    /** Runs `trial` 15 times with registration on two instances of the store; what each says went wrong must be nothing. */
    async function racing(trial: (mine: RegistrationDeps, other: RegistrationDeps, n: number) => Promise<string[]>): Promise<void> {
      const other = await harness.open();
      await Promise.all([warmUp(store, 2), warmUp(other, 2)]);
      const deps = (s: Store): RegistrationDeps => ({ clients: s.clients, transaction: s.transaction, clock: systemClock, random: cryptoRandom });
      const wrong: string[] = [];
      for (let n = 0; n < 15; n++) wrong.push(...(await trial(deps(store), deps(other), n)).map((what) => `trial ${n}: ${what}`));
      assert.deepEqual(wrong, []);
    }

    /** Of two attempts exactly one succeeded, and the other failed with a metadata error on one of `fields`. */
    function oneWon(outcomes: PromiseSettledResult<unknown>[], fields: string[]): string[] {
      const won = outcomes.filter((o) => o.status === 'fulfilled').length;
      const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
      return [...(won === 1 ? [] : [`${won} won`]), ...lost.filter((o) => !(o.reason instanceof InvalidClientMetadata && fields.includes(o.reason.field))).map((o) => String(o.reason))];
    }

    test('two declarations of one scope value at once, from two instances: exactly one wins (RS-01, repeated)', async () => {
      await racing(async (mine, other, n) => {
        const value = unique('race.read');
        // One registers, the other moves an existing resource server onto the same value.
        const { client: existing } = await registerClient(other, { client_name: `Existing ${n}`, resource_server: true });
        const outcomes = await Promise.allSettled([registerClient(mine, { client_name: `Race ${n}`, resource_server: true, resource_scopes: [value] }), updateClient(other, existing.clientId, { resource_scopes: [value] })]);
        const holder = (await store.clients.resourceScopeOwners([value])).get(value);
        const winner = outcomes.find((o) => o.status === 'fulfilled')?.value.client.clientId;
        return [...oneWon(outcomes, ['resource_scopes']), ...(holder === winner ? [] : [`held by ${holder}, won by ${winner}`])];
      });
    });

    test('a declared scope value and an imported client_id of the same name at once: exactly one wins (RS-02, repeated)', async () => {
      await racing(async (mine, other, n) => {
        const value = unique('both');
        const { client: server } = await registerClient(other, { client_name: `API ${n}`, resource_server: true });
        const outcomes = await Promise.allSettled([registerClient(mine, { client_name: `Import ${n}`, grant_types: [] }, { clientId: value }), updateClient(other, server.clientId, { resource_scopes: [value] })]);
        const both = (await store.clients.get(value)) !== undefined && (await store.clients.resourceScopeOwners([value])).size > 0;
        return [...oneWon(outcomes, ['resource_scopes', 'client_id']), ...(both ? [`${value} is a client_id and a declared value`] : [])];
      });
    });

    test('two registrations of one resource URI at once, from two instances: exactly one wins (RI-03, repeated)', async () => {
      const other = await harness.open();
      await Promise.all([warmUp(store, 2), warmUp(other, 2)]);
      const deps = (s: Store) => ({ clients: s.clients, transaction: s.transaction, clock: systemClock, random: cryptoRandom });
      const TRIALS = 15;
      const wrong: string[] = [];
      for (let trial = 0; trial < TRIALS; trial++) {
        const uri = `https://${unique('race')}.example/api`;
        const metadata = { client_name: `Race ${trial}`, resource_server: true, resource_uris: [uri] };
        // One registers, the other moves an existing resource server onto the same URI.
        const { client: existing } = await registerClient(deps(other), { client_name: `Existing ${trial}`, resource_server: true });
        const outcomes = await Promise.allSettled([registerClient(deps(store), metadata), updateClient(deps(other), existing.clientId, { resource_uris: [uri] })]);
        const won = outcomes.filter((o) => o.status === 'fulfilled');
        const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
        if (won.length !== 1) wrong.push(`trial ${trial}: ${won.length} won`);
        for (const o of lost) if (!(o.reason instanceof InvalidClientMetadata && o.reason.field === 'resource_uris')) wrong.push(`trial ${trial}: ${String(o.reason)}`);
        const holder = await store.clients.findByResourceUri(uri);
        const winner = (won[0] as PromiseFulfilledResult<{ client: { clientId: string } }> | undefined)?.value.client.clientId;
        if (holder?.clientId !== winner) wrong.push(`trial ${trial}: held by ${holder?.clientId}, won by ${winner}`);
      }
      assert.deepEqual(wrong, []);
    });
  });
}
