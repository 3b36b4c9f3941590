import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SsoSession } from '../../domain/session.ts';
import { LoginRequired } from '../errors.ts';
import { checkMaxAge, checkPrompt } from './check-prompt.ts';
import { decideInteraction } from './decide-interaction.ts';
import { NO_DEMAND } from './select-level.ts';
import type { AuthorizationRequest } from './request.ts';

const NOW = 1_800_000_000_000;
const session = { userId: 'u1', authTime: NOW - 60_000 } as SsoSession;
const request = (overrides: Partial<AuthorizationRequest> = {}) => ({ client: { metadata: {} }, prompt: new Set(), maxAge: undefined, hintedSubject: undefined, level: NO_DEMAND, ...overrides }) as AuthorizationRequest;

test('a session answers silently unless prompt, max_age or the hint say otherwise (OIDC Core §3.1.2.1)', () => {
  assert.equal(decideInteraction(request(), session, NOW).type, 'silent');
  assert.equal(decideInteraction(request(), undefined, NOW).type, 'login');
  for (const p of ['login', 'consent', 'select_account'] as const) assert.equal(decideInteraction(request({ prompt: new Set([p]) }), session, NOW).type, 'login');
  assert.equal(decideInteraction(request({ maxAge: 60 }), session, NOW).type, 'silent', 'exactly max_age old is still fine');
  assert.equal(decideInteraction(request({ maxAge: 59 }), session, NOW).type, 'login');
  assert.equal(decideInteraction(request({ maxAge: 0 }), { ...session, authTime: NOW }, NOW).type, 'login', 'max_age=0 is prompt=login');
  assert.equal(decideInteraction(request({ hintedSubject: 'u2' }), session, NOW).type, 'login');
  assert.equal(decideInteraction(request({ hintedSubject: 'u1' }), session, NOW).type, 'silent');
});

test('a third-party client\'s prompt=consent is answered after the session (the consent page), a first-party client\'s by the login page (F2)', () => {
  const consent = new Set(['consent'] as const);
  const thirdParty = { metadata: { consent_required: true } } as unknown as AuthorizationRequest['client'];
  assert.equal(decideInteraction(request({ prompt: consent, client: thirdParty }), session, NOW).type, 'silent');
  assert.equal(decideInteraction(request({ prompt: consent, client: thirdParty }), undefined, NOW).type, 'login');
  assert.equal(decideInteraction(request({ prompt: new Set(['consent', 'login'] as const), client: thirdParty }), session, NOW).type, 'login');
});

test('prompt=none never shows a page: login_required instead', () => {
  const none = new Set(['none'] as const);
  assert.equal(decideInteraction(request({ prompt: none }), session, NOW).type, 'silent');
  assert.throws(() => decideInteraction(request({ prompt: none }), undefined, NOW), LoginRequired);
  assert.throws(() => decideInteraction(request({ prompt: none, maxAge: 1 }), session, NOW), LoginRequired);
});

test('prompt and max_age parsing', () => {
  assert.deepEqual([...checkPrompt('login  consent bogus')], ['login', 'consent']);
  assert.deepEqual([...checkPrompt('none')], ['none']);
  assert.throws(() => checkPrompt('none login'), { error: 'invalid_request' });
  assert.throws(() => checkPrompt('none bogus'), { error: 'invalid_request' });
  assert.equal(checkMaxAge('0'), 0);
  assert.equal(checkMaxAge(undefined), undefined);
  for (const bad of ['-1', '1.0', ' 1', '0x10', '12345678901']) assert.throws(() => checkMaxAge(bad), { error: 'invalid_request' }, bad);
});
