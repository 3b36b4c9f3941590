/**
 * `GET /me`: who the token is and what it may do; the web console reads it to show or hide changes.
 */
import type { ManageRoute } from '../route.ts';

const meSchema = {
  type: 'object',
  required: ['role', 'client_id'],
  properties: {
    role: { enum: ['admin', 'reader'], description: '`admin` may change everything; `reader` may only read.' },
    user_id: { type: 'string', description: "The token's user; absent for a client's own token (client_credentials)." },
    username: { type: 'string' },
    client_id: { type: 'string', description: 'The client the token was issued to.' },
  },
};

export const meRoutes: ManageRoute[] = [
  {
    method: 'GET',
    path: '/me',
    operationId: 'getMe',
    summary: 'The caller: role, user and client',
    tag: 'Caller',
    access: 'read',
    responses: { 200: { description: 'The caller.', schema: meSchema } },
    async handle({ deps, caller }) {
      const user = caller.userId === undefined ? undefined : await deps.admin.users.profile(caller.userId);
      return { body: { role: caller.role, ...(caller.userId === undefined ? {} : { user_id: caller.userId }), ...(user ? { username: user.username } : {}), client_id: caller.clientId } };
    },
  },
];
