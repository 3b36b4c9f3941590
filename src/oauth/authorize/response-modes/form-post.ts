import { presentParams, type ResponseMode } from './mode.ts';

/**
 * `form_post` (OAuth 2.0 Form Post Response Mode §2): the parameters are hidden fields of an HTML
 * form that the browser submits at once, by POST, to the redirect_uri, so the code is in no URL,
 * history entry, log or Referer. Only a web server receives a POST: a private-use scheme
 * (`com.example.app:/cb`, RFC 8252 §7.1) would get a navigation without the body, so such a
 * redirect_uri is refused and the error goes by the default mode (query).
 */
export const formPost: ResponseMode = {
  name: 'form_post',
  refuses: (redirectUri) => (/^https?:\/\//i.test(redirectUri) ? undefined : 'response_mode=form_post needs an http or https redirect_uri.'),
  deliver: (redirectUri, params) => ({ type: 'form_post', action: redirectUri, fields: presentParams(params) }),
};
