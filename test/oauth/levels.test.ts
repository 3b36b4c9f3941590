/**
 * Levels of authentication (issue 24, item 3): what each requirement asks of an amr, the acr claim
 * chosen, which factors could raise a sign-in, the setting's parsing, and how a request selects a
 * level (acr_values, the claims parameter, default_acr_values, the policy) and what it then needs.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Factor } from '../../src/domain/factor.ts';
import { decideInteraction, levelStep } from '../../src/oauth/authorize/decide-interaction.ts';
import type { AuthorizationRequest } from '../../src/oauth/authorize/request.ts';
import type { SsoSession } from '../../src/domain/session.ts';
import { NO_DEMAND, selectLevel, type LevelDemand } from '../../src/oauth/authorize/select-level.ts';
import { acrClaim, meets, raisingKinds } from '../../src/oauth/levels.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { configuredLevels, parseAcrLevels } from '../../src/protocol/acr-levels.ts';

const LEVELS = parseAcrLevels(['pwd=single', 'mfa=multi', 'phr', 'phrh']);
const factor = (kind: Factor['kind']): Factor => ({ id: kind, userId: 'u', kind, name: kind, createdAt: 0, lastUsedAt: undefined });
const client = (metadata: Record<string, unknown> = {}) => ({ metadata });

test('meets: single any sign-in; multi needs mfa; phr hwk or swk; phrh hwk (the contract of COMMON24)', () => {
  const table = [['pwd'], ['pwd', 'otp', 'mfa'], ['swk', 'mfa'], ['pwd', 'hwk', 'mfa']].map((amr) => (['single', 'multi', 'phr', 'phrh'] as const).map((r) => meets(r, amr)));
  assert.deepEqual(table, [
    [true, false, false, false],
    [true, true, false, false],
    [true, true, true, false],
    [true, true, true, true],
  ]);
});

test('the acr claim: the first requested value met, else the strongest configured level met; nothing configured, none', () => {
  assert.equal(acrClaim(LEVELS, ['phr', 'mfa', 'pwd'], ['pwd', 'otp', 'mfa']), 'mfa');
  assert.equal(acrClaim(LEVELS, ['unknown'], ['pwd', 'otp', 'mfa']), 'mfa');
  assert.equal(acrClaim(LEVELS, ['pwd'], ['pwd', 'otp', 'mfa']), 'pwd');
  assert.equal(acrClaim(LEVELS, [], ['pwd']), 'pwd');
  assert.equal(acrClaim([], ['pwd'], ['pwd']), undefined);
  assert.equal(acrClaim(parseAcrLevels(['mfa=multi']), [], ['pwd']), undefined);
});

test('raisingKinds: the factors whose one use meets the requirement (TOTP and recovery codes reach multi, never phr)', () => {
  const factors = [factor('totp'), factor('recovery_codes')];
  assert.deepEqual(raisingKinds('multi', ['pwd'], factors), ['totp', 'recovery_codes']);
  assert.deepEqual(raisingKinds('phr', ['pwd'], factors), []);
  assert.deepEqual(raisingKinds('multi', ['pwd'], []), []);
});

test('GATEHOUSE_ACR_LEVELS: value=requirement weakest first; phr/phrh stand alone; clear errors', () => {
  assert.deepEqual(parseAcrLevels(['a=single', 'b=multi', 'phr']), [{ value: 'a', requirement: 'single' }, { value: 'b', requirement: 'multi' }, { value: 'phr', requirement: 'phr' }]);
  assert.deepEqual(parseAcrLevels(['urn:x:loa=2=multi']), [{ value: 'urn:x:loa=2', requirement: 'multi' }]);
  const refused = (entries: string[]) => assert.throws(() => parseAcrLevels(entries), Error, entries.join(','));
  for (const bad of [['mfa'], ['a=strong'], ['=multi'], ['b=multi', 'a=single'], ['a=multi', 'b=multi'], ['a=single', 'a=multi']]) refused(bad);
  assert.throws(() => parseAcrLevels(['b=multi', 'a=single']), /list the levels weakest first/);
  assert.throws(() => parseAcrLevels(['a=strong']), /"strong" is not a requirement; use one of single, multi, phr, phrh/);
});

test('start-up: a bad GATEHOUSE_ACR_LEVELS or a GATEHOUSE_ACR it contradicts stops loadConfig naming the variable; config.levels otherwise', () => {
  assert.throws(() => loadConfig({ GATEHOUSE_ACR_LEVELS: 'mfa=multi,pwd=single' }), (error: unknown) => error instanceof ConfigError && error.variable === 'GATEHOUSE_ACR_LEVELS' && /weakest first/.test(error.message));
  assert.throws(() => loadConfig({ GATEHOUSE_ACR_LEVELS: 'mfa=multi', GATEHOUSE_ACR: 'mfa' }), (error: unknown) => error instanceof ConfigError && error.variable === 'GATEHOUSE_ACR_LEVELS');
  assert.deepEqual(loadConfig({ GATEHOUSE_ACR_LEVELS: 'mfa=multi, phr', GATEHOUSE_ACR: 'pwd' }).levels.map((l) => `${l.value}=${l.requirement}`), ['pwd=single', 'mfa=multi', 'phr=phr']);
  assert.deepEqual(loadConfig({}).levels, []);
});

test('GATEHOUSE_ACR is the single level: put first, or must be single where the list names it', () => {
  assert.deepEqual(configuredLevels('pwd', parseAcrLevels(['mfa=multi'])).map((l) => l.value), ['pwd', 'mfa']);
  assert.deepEqual(configuredLevels('pwd', undefined), [{ value: 'pwd', requirement: 'single' }]);
  assert.deepEqual(configuredLevels(undefined, undefined), []);
  assert.throws(() => configuredLevels('mfa', parseAcrLevels(['mfa=multi'])), /single-method sign-in/);
  assert.throws(() => configuredLevels('pwd', parseAcrLevels(['other=single'])), /weakest first/);
});

test('selection: acr_values voluntary in order; claims acr essential or voluntary (value/values); defaults only when the request names none; the policy always essential', () => {
  const select = (input: Partial<Parameters<typeof selectLevel>[1]>) => selectLevel(LEVELS, { claims: undefined, acrValues: undefined, client: client(), policy: undefined, ...input });
  assert.deepEqual(select({ acrValues: 'x mfa pwd' }), { requested: ['x', 'mfa', 'pwd'], essential: undefined, unmeetable: false, preferred: ['multi', 'single'] });
  assert.deepEqual(select({ claims: JSON.stringify({ id_token: { acr: { essential: true, values: ['phr', 'mfa'] } } }) }), { requested: ['phr', 'mfa'], essential: 'multi', unmeetable: false, preferred: [] });
  assert.deepEqual(select({ claims: JSON.stringify({ userinfo: { acr: { value: 'mfa' } }, id_token: { other: null } }) }).preferred, ['multi']);
  assert.deepEqual(select({ claims: JSON.stringify({ id_token: { acr: { essential: true, value: 'nope' } } }) }).unmeetable, true);
  assert.deepEqual(select({ claims: JSON.stringify({ id_token: { acr: null } }) }), { requested: [], essential: undefined, unmeetable: false, preferred: [] });
  assert.deepEqual(select({ client: client({ default_acr_values: ['mfa'] }) }).preferred, ['multi']);
  assert.deepEqual(select({ client: client({ default_acr_values: ['mfa'] }), acrValues: 'pwd' }).preferred, ['single'], 'the request overrides the defaults');
  assert.deepEqual(select({ policy: 'multi', acrValues: 'pwd' }).essential, 'multi');
  assert.deepEqual(select({ claims: '{"unknown":{"x":1}}' }), { requested: [], essential: undefined, unmeetable: false, preferred: [] }, 'unknown members are ignored');
  assert.throws(() => select({ claims: 'not json' }), { error: 'invalid_request' });
  assert.throws(() => select({ claims: '[]' }), { error: 'invalid_request' });
});

test('levelStep: essential missing and reachable asks for the raising kinds only; out of reach is unreachable; voluntary out of reach goes on', () => {
  const demand = (d: Partial<ReturnType<typeof selectLevel>>) => ({ requested: [], essential: undefined, unmeetable: false, preferred: [], ...d });
  const totp = [factor('totp'), factor('recovery_codes')];
  assert.deepEqual(levelStep(demand({ essential: 'multi' }), ['pwd'], totp), { type: 'step_up', essential: true, kinds: ['totp', 'recovery_codes'] });
  assert.deepEqual(levelStep(demand({ essential: 'multi' }), ['pwd'], []), { type: 'unreachable' });
  assert.deepEqual(levelStep(demand({ essential: 'phr' }), ['pwd'], totp), { type: 'unreachable' });
  assert.deepEqual(levelStep(demand({ essential: 'multi' }), ['pwd', 'otp', 'mfa'], totp), { type: 'met' });
  assert.deepEqual(levelStep(demand({ preferred: ['phr', 'multi'] }), ['pwd'], totp), { type: 'step_up', essential: false, kinds: ['totp', 'recovery_codes'] });
  assert.deepEqual(levelStep(demand({ preferred: ['multi'] }), ['pwd'], []), { type: 'met' });
  assert.deepEqual(levelStep(demand({ unmeetable: true }), ['pwd', 'hwk', 'mfa'], totp), { type: 'unreachable' });
});

test('decideInteraction: a session below an essential level steps up (login_required under prompt=none); a voluntary one is skipped under prompt=none; out of the factors\' reach is a fresh sign-in; unmeetable is unmet', () => {
  const now = 1_800_000_000_000;
  const session = { userId: 'u', authTime: now, amr: ['pwd'] } as unknown as SsoSession;
  const request = (level: Partial<LevelDemand>, prompt: string[] = []) => ({ client: { metadata: {} }, prompt: new Set(prompt), maxAge: undefined, hintedSubject: undefined, level: { ...NO_DEMAND, ...level } }) as unknown as AuthorizationRequest;
  const totp = [factor('totp')];
  assert.deepEqual(decideInteraction(request({ essential: 'multi' }), session, now, totp), { type: 'step_up', session, kinds: ['totp'] });
  assert.throws(() => decideInteraction(request({ essential: 'multi' }, ['none']), session, now, totp), { error: 'login_required' });
  // Out of the user's factors' reach, but a factor enrolled at a fresh sign-in could meet it (SA124):
  // the login page (the password, then the enrolment); under prompt=none, login_required.
  assert.deepEqual(decideInteraction(request({ essential: 'multi' }), session, now, []), { type: 'login' });
  assert.throws(() => decideInteraction(request({ essential: 'multi' }, ['none']), session, now, []), { error: 'login_required' });
  // Nothing can meet it (only unconfigured values were essential): unmet, with or without a page.
  assert.throws(() => decideInteraction(request({ unmeetable: true }), session, now, totp), { error: 'unmet_authentication_requirements' });
  assert.throws(() => decideInteraction(request({ unmeetable: true }, ['none']), session, now, totp), { error: 'unmet_authentication_requirements' });
  assert.deepEqual(decideInteraction(request({ preferred: ['multi'] }, ['none']), session, now, totp), { type: 'silent', session });
  assert.deepEqual(decideInteraction(request({ preferred: ['multi'] }), session, now, totp).type, 'step_up');
  assert.deepEqual(decideInteraction(request({ essential: 'multi' }, ['login']), session, now, totp), { type: 'login' }, 'prompt=login: everything again');
});
