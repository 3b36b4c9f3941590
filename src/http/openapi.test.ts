import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { declaredParameters, errorAnswers, openApiPath, openApiSchema } from './openapi.ts';

describe('OpenAPI pieces shared by the REST APIs', () => {
  test('paths use OpenAPI templates below the API base', () => {
    assert.equal(openApiPath('/manage/api/v1', '/clients/:client_id/secret'), '/manage/api/v1/clients/{client_id}/secret');
  });

  test('schemas are copied as JSON Schema 2020-12, draft-07 {not: {}} spelled false', () => {
    const schema = { type: 'object', properties: { a: { not: {} }, b: { not: { type: 'string' } } }, additionalProperties: { not: {} } };
    const shown = openApiSchema(schema);
    assert.deepEqual(shown, { type: 'object', properties: { a: false, b: { not: { type: 'string' } } }, additionalProperties: false });
    assert.notEqual(shown, schema, 'a copy: Fastify may annotate the schemas it compiles');
  });

  test('parameters come from the path and query schemas, with their descriptions and required list', () => {
    const route = {
      method: 'GET',
      path: '/users/:id',
      params: { type: 'object', properties: { id: { type: 'string', description: 'The id.' } } },
      querystring: { type: 'object', required: ['q'], properties: { q: { type: 'string' }, limit: { type: 'integer', description: 'At most.' } } },
    };
    assert.deepEqual(declaredParameters(route), [
      { name: 'id', in: 'path', required: true, description: 'The id.', schema: { type: 'string' } },
      { name: 'q', in: 'query', required: true, schema: { type: 'string' } },
      { name: 'limit', in: 'query', required: false, description: 'At most.', schema: { type: 'integer' } },
    ]);
  });

  test('error answers follow what the route takes and does', () => {
    const names = { badRequest: 'B', unauthenticated: 'U', forbidden: 'F', notFound: 'N', conflict: 'C', tooLarge: 'T', unsupportedMediaType: 'M' };
    const ref = (name: string) => ({ $ref: `#/components/responses/${name}` });
    assert.deepEqual(errorAnswers({ method: 'GET', path: '/x' }, names), { 400: ref('B'), 401: ref('U'), 403: ref('F') });
    assert.deepEqual(errorAnswers({ method: 'PUT', path: '/x/:id', params: {}, body: {} }, { ...names, serverError: 'S' }), {
      400: ref('B'), 401: ref('U'), 403: ref('F'), 404: ref('N'), 409: ref('C'), 413: ref('T'), 415: ref('M'), 500: ref('S'),
    });
  });
});
