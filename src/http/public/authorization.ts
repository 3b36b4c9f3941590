import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authorize } from '../../oauth/authorize/authorize.ts';
import { ENDPOINT_PATHS } from '../../oauth/discovery.ts';
import { clientAddress } from '../client-address.ts';
import type { HttpDeps } from '../deps.ts';
import { sendConsentPage } from '../interaction/consent-page.ts';
import { readSessionCookie, setPendingSignInCookie } from '../interaction/cookies.ts';
import { sendCodePage } from '../interaction/login-route.ts';
import { firstCodeMethod } from '../interaction/second-factor-page.ts';
import { holdStepUp } from '../../oauth/authorize/login.ts';
import { requestParams, useHtmlScope } from '../interaction/html-scope.ts';
import { sendLoginPage } from '../interaction/login-page.ts';
import { clientNameFor } from '../../oauth/client-display.ts';
import { sendAccessDeniedPage, sendAuthorizationError, sendCode } from '../render/authorization.ts';

/** The authorization endpoint, GET and form POST with the same meaning (OIDC Core §3.1.2.1). */
export async function authorizationRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  useHtmlScope(app, deps);
  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    const outcome = await authorize(deps, requestParams(request), readSessionCookie(request, deps.config), clientAddress(request));
    switch (outcome.type) {
      case 'code':
        return sendCode(request, reply, deps, outcome.target, outcome.code);
      case 'login':
        return sendLoginPage(request, reply, deps, outcome.request);
      case 'step_up': {
        // Issue 24: only the missing factor is asked for, the sign-in held as after a password (login.ts holdStepUp).
        const pendingCookie = await holdStepUp(deps, outcome.request, outcome.session, clientAddress(request));
        if (pendingCookie === undefined) return sendLoginPage(request, reply, deps, outcome.request);
        setPendingSignInCookie(reply, deps.config, pendingCookie);
        return sendCodePage(request, reply, deps, outcome.request, { method: firstCodeMethod(outcome.kinds), kinds: outcome.kinds });
      }
      case 'consent':
        return sendConsentPage(request, reply, deps, outcome.request, outcome.session);
      case 'denied':
        return sendAccessDeniedPage(request, reply, deps, outcome.request.target, (locale) => clientNameFor(outcome.request.client, locale), outcome.request.uiLocales, outcome.reason);
      case 'error':
        return sendAuthorizationError(request, reply, deps, outcome.target, outcome.error);
    }
  };
  app.get(`${deps.config.issuerPath}${ENDPOINT_PATHS.authorization}`, handle);
  app.post(`${deps.config.issuerPath}${ENDPOINT_PATHS.authorization}`, handle);
}
