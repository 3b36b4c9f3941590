/**
 * The OpenAPI 3.1 document at /manage/api/v1/openapi.json: valid by the OpenAPI schema, served
 * without a token, and listing exactly the routes Fastify serves for the API (every registered
 * route, and nothing else).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import Fastify, { type RouteOptions } from 'fastify';
import type { HttpDeps } from '../../../src/http/deps.ts';
import { manageApiRoutes } from '../../../src/http/manage-api/plugin.ts';
import { MANAGE_ROUTES } from '../../../src/http/manage-api/routes/index.ts';
import { DATABASES } from '../../helpers/databases.ts';
import { startServer, type RunningServer } from '../../helpers/server.ts';

type Spec = Parameters<Validator['validate']>[0];
type Operation = { operationId: string; security?: unknown[]; responses: Record<string, unknown>; tags: string[] };
type Document = { openapi: string; paths: Record<string, Record<string, Operation>>; components: { securitySchemes: Record<string, { scheme?: string }> } };

describe('management API OpenAPI document', () => {
  let server: RunningServer;
  let document: Document;
  before(async () => {
    server = await startServer(DATABASES[0]!);
    const response = await fetch(`${server.url}/manage/api/v1/openapi.json`);
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
    const broken = structuredClone(document);
    (broken.paths['/manage/api/v1/me']!.get as unknown as Record<string, unknown>).responses = 'none';
    assert.equal((await new Validator().validate(broken as unknown as Spec)).valid, false, 'the validator does catch a broken document');
  });

  test('lists every route Fastify serves for the API, and nothing else', async () => {
    const served: string[] = [];
    const app = Fastify({ logger: false });
    app.addHook('onRoute', (route: RouteOptions) => {
      if (!route.url.startsWith('/manage/api/v1')) return;
      // The 405 routes answer the methods a path does not have.
      if ((route.config as { methodNotAllowed?: boolean } | undefined)?.methodNotAllowed) return;
      for (const method of [route.method].flat().filter((m) => m !== 'HEAD')) served.push(`${method.toLowerCase()} ${route.url.replace(/:([A-Za-z_]+)/g, '{$1}')}`);
    });
    await app.register(async (scope) => manageApiRoutes(scope, { config: server.config } as HttpDeps));
    await app.ready();
    const listed = Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method} ${path}`));
    assert.deepEqual([...listed].sort(), [...served].sort());
    assert.equal(listed.length, MANAGE_ROUTES.length + 1, 'every registered route, and the document');
    for (const route of MANAGE_ROUTES) assert.ok(listed.includes(`${route.method.toLowerCase()} /manage/api/v1${route.path.replace(/:([A-Za-z_]+)/g, '{$1}')}`), `${route.method} ${route.path}`);
    const operationIds = Object.values(document.paths).flatMap((operations) => Object.values(operations).map((o) => o.operationId));
    assert.equal(new Set(operationIds).size, operationIds.length, 'operationIds are unique');
  });

  test('bearer security everywhere but the document; the problem answers are described', () => {
    assert.equal(document.components.securitySchemes.bearer!.scheme, 'bearer');
    assert.deepEqual(document.paths['/manage/api/v1/openapi.json']!.get!.security, []);
    const register = document.paths['/manage/api/v1/clients']!.post!;
    for (const status of ['201', '400', '401', '403', '409', '413', '415']) assert.ok(register.responses[status], status);
    assert.deepEqual(register.tags, ['Clients']);
  });
});
