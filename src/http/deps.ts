import type { Config } from '../config.ts';
import type { Administration } from '../manage/administration.ts';
import type { OAuthDeps } from '../oauth/deps.ts';
import type { Theme } from './interaction/theme.ts';

/** The settings as the HTTP layer sees them: with the login theme of GATEHOUSE_THEME_DIR, loaded at start-up (src/app.ts). */
export type ServingConfig = Config & { readonly theme: Theme | undefined };

/** Everything the HTTP layer is given by the composition root (src/app.ts). */
export type HttpDeps = Omit<OAuthDeps, 'config'> & {
  config: ServingConfig;
  /** The application layer's use cases (src/manage/administration.ts), built once. */
  admin: Administration;
};

/**
 * What a route of the two REST APIs is given (identity-api/route.ts, manage-api/route.ts): the
 * application layer's use cases and the settings — not the store, not the protocol core's services.
 */
export type RestRouteDeps = Pick<HttpDeps, 'config' | 'admin'>;
