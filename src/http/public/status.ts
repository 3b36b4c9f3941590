import { XMLBuilder } from 'fast-xml-parser';
import type { FastifyInstance } from 'fastify';
import type { RawParams } from '../../oauth/params.ts';
import { sessionStatus } from '../../oauth/session-status.ts';
import type { HttpDeps } from '../deps.ts';

const xml = new XMLBuilder({ ignoreAttributes: false, suppressEmptyNode: true });
const DECLARATION = { '@_version': '1.0', '@_encoding': 'UTF-8' };

/**
 * `GET /uas/status?entityID&sessionIndex&refresh&type` (the product we replace): JSON by default,
 * XML with `type=application/xml`. Always 200; an unknown session or client is `valid: false`.
 */
export async function statusRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  app.get(`${deps.config.issuerPath}/status`, async (request, reply) => {
    const raw = request.query as RawParams;
    const status = await sessionStatus(deps, raw);
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    if (raw.type === 'application/xml') {
      return reply.type('application/xml; charset=utf-8').send(xml.build({ '?xml': DECLARATION, status }) as string);
    }
    return reply.type('application/json').send(status);
  });
}
