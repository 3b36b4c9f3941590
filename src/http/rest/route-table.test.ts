import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { openApiDocument, type ApiDocumentSpec } from '../openapi.ts';
import { nulField, refuseNul, registerRouteTable, type TableRoute } from './route-table.ts';

type Call = { body: unknown; method: string };
type Route = TableRoute<Call, unknown>;

const route = (method: string, path: string, extra: Partial<Route> = {}): Route => ({
  method,
  path,
  operationId: `${method.toLowerCase()}${path.replace(/\W/g, '')}`,
  summary: 'A route',
  tag: path.split('/')[1]!,
  responses: { 200: { description: 'Done.', schema: { type: 'object', properties: { body: {} } } } },
  handle: async (call) => ({ body: call.body }),
  ...extra,
});

class Refusal extends Error {
  readonly status: number;
  readonly allow: string;
  constructor(status: number, message: string, allow = '') {
    super(message);
    this.status = status;
    this.allow = allow;
  }
}

async function serve(routes: Route[], serialize = false): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  await app.register(async (api) => {
    api.setErrorHandler((error: Refusal & { statusCode?: number }, _request, reply) => {
      if (error.allow) reply.header('allow', error.allow);
      return reply.code(error.status ?? error.statusCode ?? 500).send({ message: error.message });
    });
    refuseNul(api, 2, (part, field) => new Refusal(400, `NUL in ${part} at ${field}`));
    registerRouteTable<Route, Call, unknown>(api, routes, {
      url: (r) => `/v1${r.path}`,
      bodyLimit: 100,
      ...(serialize ? { serialize: { errors: { type: 'object', properties: { message: { type: 'string' } } } } } : {}),
      call: (request) => ({ body: request.body, method: request.method }),
      send: (reply, _request, result) => reply.send(result),
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS'],
      methodNotAllowed: (url, allow) => new Refusal(405, `${url} allows ${allow}`, allow),
      otherPaths: { '/doc': ['GET'] },
    });
    api.get('/doc', async () => ({ doc: true }));
  });
  await app.ready();
  return app;
}

describe('the route table of the REST APIs', () => {
  test('each route is served with its call and rendering; a known path answers other methods 405 with Allow (RFC 9110 §15.5.6)', async () => {
    const app = await serve([route('GET', '/things'), route('POST', '/things'), route('DELETE', '/things/:id')]);
    assert.equal((await app.inject({ method: 'POST', url: '/v1/things', payload: { a: 1 } })).json().body.a, 1);
    const put = await app.inject({ method: 'PUT', url: '/v1/things' });
    assert.equal(put.statusCode, 405);
    assert.equal(put.headers.allow, 'GET, POST, HEAD', 'HEAD is had wherever GET is');
    const head = await app.inject({ method: 'HEAD', url: '/v1/things/x' });
    assert.equal(head.statusCode, 405, 'a path without GET has no HEAD either');
    assert.equal(head.headers.allow, 'DELETE');
    assert.equal((await app.inject({ method: 'HEAD', url: '/v1/things' })).statusCode, 200);
    assert.equal((await app.inject({ method: 'OPTIONS', url: '/doc' })).headers.allow, 'GET, HEAD', "the API's own paths too");
    assert.equal((await app.inject({ method: 'PATCH', url: '/v1/things' })).statusCode, 404, 'only the methods the API lists answer 405');
    assert.equal((await app.inject({ method: 'POST', url: '/v1/things', payload: 'x'.repeat(200), headers: { 'content-type': 'text/plain' } })).statusCode, 413);
  });

  test('a body the route says may be left out reaches the handler as {}', async () => {
    const app = await serve([route('POST', '/a', { bodyOptional: true, body: { type: 'object' } }), route('POST', '/b')]);
    assert.deepEqual((await app.inject({ method: 'POST', url: '/v1/a' })).json(), { body: {} });
    assert.deepEqual((await app.inject({ method: 'POST', url: '/v1/b' })).json(), {});
  });

  test('with `serialize`, answers go through the response schemas: undeclared members are not sent', async () => {
    const leaky = route('GET', '/leaky', { handle: async () => ({ body: 1, secret: 'x' }) });
    assert.deepEqual((await (await serve([leaky], true)).inject({ method: 'GET', url: '/v1/leaky' })).json(), { body: 1 });
    assert.deepEqual((await (await serve([leaky], false)).inject({ method: 'GET', url: '/v1/leaky' })).json(), { body: 1, secret: 'x' });
  });

  test('a NUL in a path, query or body value or member name is refused naming the field, to the depth asked', async () => {
    const app = await serve([route('POST', '/things/:id')]);
    const refused = async (url: string, payload?: Record<string, unknown>) => (await app.inject({ method: 'POST', url, ...(payload === undefined ? {} : { payload }) })).json().message;
    assert.equal(await refused('/v1/things/a%00'), 'NUL in path at id');
    assert.equal(await refused('/v1/things/a?q=%00'), 'NUL in query at q');
    assert.equal(await refused('/v1/things/a', { list: ['ok', 'n\u0000'] }), 'NUL in body at list[1]');
    assert.equal(await refused('/v1/things/a', { 'k\u0000': 1 }), 'NUL in body at k\u0000');
    assert.equal(nulField({ a: { b: { c: '\u0000' } } }, '', 2), 'a.b.c');
    assert.equal(nulField({ a: { b: { c: { d: '\u0000' } } } }, '', 2), undefined, 'deeper than asked is left to validation');
  });
});

describe('the OpenAPI document of a route table', () => {
  const spec: ApiDocumentSpec<Route> = {
    info: { title: 'T', version: '1', description: 'D' },
    document: { path: '/v1/openapi.json', operationId: 'doc', description: 'This.' },
    security: [{ bearer: [] }],
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    errorAnswers: { badRequest: 'Bad', unauthenticated: 'Who', forbidden: 'No', notFound: 'None', conflict: 'Clash', tooLarge: 'Big', unsupportedMediaType: 'Type' },
    errorDescriptions: { Bad: 'Malformed.' },
    errorContent: { 'application/problem+json': { schema: { type: 'object' } } },
  };
  const routes = [route('GET', '/b'), route('PUT', '/a/:id', { body: { type: 'object' }, bodyOptional: true }), route('POST', '/a', { body: { type: 'object' } })];
  type Op = Record<string, unknown> & { requestBody?: { required: boolean; content: Record<string, unknown> } };
  const op = (document: Record<string, unknown>, path: string, method: string) => (document.paths as Record<string, Record<string, Op>>)[path]![method]!;

  test('every route of every scope; a repeated operationId gets the scope name', () => {
    const document = openApiDocument(spec, 'https://id.example', [
      { base: '/one', name: 'one', routes },
      { base: '/two-x', name: 'two-x', routes: [routes[0]!] },
    ]);
    assert.deepEqual(Object.keys(document.paths as object), ['/one/b', '/one/a/{id}', '/one/a', '/two-x/b', '/v1/openapi.json']);
    assert.equal(op(document, '/two-x/b', 'get').operationId, 'getb_two_x');
    assert.deepEqual(document.tags, [{ name: 'b' }, { name: 'a' }, { name: 'Documentation' }], 'tags in order of appearance');
    assert.deepEqual(document.servers, [{ url: 'https://id.example' }]);
    assert.deepEqual((document.components as Record<string, unknown>).responses, { Bad: { description: 'Malformed.', content: spec.errorContent } });
  });

  test('bodies are required unless the route says otherwise; other media types follow JSON', () => {
    const plain = openApiDocument(spec, 'https://id.example', [{ base: '', name: '', routes }]);
    assert.equal(op(plain, '/a', 'post').requestBody!.required, true);
    assert.equal(op(plain, '/a/{id}', 'put').requestBody!.required, false);
    const xml = { 'application/xml': { schema: { type: 'string' } } };
    const both = openApiDocument({ ...spec, bodyRequired: () => false, otherMedia: { request: xml, response: xml }, tags: ['a', 'b'] }, 'https://id.example', [{ base: '', name: '', routes }]);
    assert.equal(op(both, '/a', 'post').requestBody!.required, false);
    assert.deepEqual(Object.keys(op(both, '/a', 'post').requestBody!.content), ['application/json', 'application/xml']);
    assert.deepEqual(both.tags, [{ name: 'a' }, { name: 'b' }, { name: 'Documentation' }]);
  });
});
