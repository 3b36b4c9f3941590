/**
 * The OpenAPI 3.1 document at /{identity_rest}/openapi.json: valid by the OpenAPI schema, and
 * listing exactly the routes Fastify serves for the identity API.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import Fastify, { type RouteOptions } from 'fastify';
import type { HttpDeps } from '../../../src/http/deps.ts';
import { identityApiRoutes } from '../../../src/http/identity-api/plugin.ts';
import { DATABASES } from '../../helpers/databases.ts';
import type { RunningServer } from '../../helpers/server.ts';
import { startApiServer } from './helpers.ts';

type Spec = Parameters<Validator['validate']>[0];
type Document = { openapi: string; paths: Record<string, Record<string, { operationId: string; security?: unknown[] }>> };

describe('identity API OpenAPI document', () => {
  let server: RunningServer;
  let document: Document;
  before(async () => {
    server = await startApiServer(DATABASES[0]!, { GATEHOUSE_LEGACY_REST_PREFIX: 'old-api' });
    const response = await fetch(`${server.url}/customerid-rest/openapi.json`);
    assert.equal(response.status, 200, 'served without credentials');
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    document = (await response.json()) as Document;
  });
  after(async () => server.close());

  test('is a valid OpenAPI 3.1 document', async () => {
    assert.equal(document.openapi, '3.1.0');
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document) as unknown as Spec);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    assert.equal(validator.version, '3.1');
    const broken = structuredClone(document) as Document;
    (broken.paths['/customerid-rest/openapi.json']!.get as unknown as Record<string, unknown>).responses = 'none';
    assert.equal((await new Validator().validate(broken as unknown as Spec)).valid, false, 'the validator does catch a broken document');
  });

  test('lists every route Fastify serves for the API, and nothing else', async () => {
    const served: string[] = [];
    const app = Fastify({ logger: false });
    app.addHook('onRoute', (route: RouteOptions) => {
      const methods = [route.method].flat().filter((m) => m !== 'HEAD');
      if ((route.config as { methodNotAllowed?: boolean } | undefined)?.methodNotAllowed) return;
      for (const method of methods) served.push(`${method.toLowerCase()} ${route.url.replace(/:([A-Za-z]+)/g, '{$1}')}`);
    });
    await app.register(async (scope) => identityApiRoutes(scope, { config: server.config } as HttpDeps));
    await app.ready();
    const listed = Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method} ${path}`));
    assert.deepEqual([...new Set(listed)].sort(), [...new Set(served)].sort());
    assert.ok(listed.includes('get /old-api/services/users/'), 'the legacy prefix comes from configuration');
    assert.ok(listed.includes('put /customerid-rest/services/2.1/users/{id}/groups/{group}'));
    assert.equal(listed.length, 2 * 19 + 2 * 7 + 1, '19 routes per version (14 of users and organizations, 5 of invitations), 7 legacy reads under each prefix, the document');
    const operationIds = Object.values(document.paths).flatMap((operations) => Object.values(operations).map((o) => o.operationId));
    assert.equal(new Set(operationIds).size, operationIds.length, 'operationIds are unique');
    assert.deepEqual(document.paths['/customerid-rest/openapi.json']!.get!.security, []);
  });

  test('the document does not depend on a request: it is the same for everyone', async () => {
    const again = await (await fetch(`${server.url}/customerid-rest/openapi.json`, { headers: { authorization: 'Basic eDp5' } })).json();
    assert.deepEqual(again, document);
  });
});
