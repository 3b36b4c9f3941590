import type { OAuthDeps } from '../oauth/deps.ts';

/** Everything the HTTP layer is given by the composition root (src/app.ts). */
export type HttpDeps = OAuthDeps;
