/**
 * The worked example of docs/authorization.md, "Authorization policies", run verbatim: the shell
 * block marked `<!-- policy-example: commands -->` runs in bash against a real gatehouse (with
 * `npx gatehouse` being this checkout's bin/gatehouse.js), alice signs in at the client it
 * registered through the real login form, and the ID token payload, UserInfo and introspection
 * answers are compared with the doc's JSON blocks: the same members, and the same values except
 * where the doc writes "…" (the doc says so: a value that differs at every run).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { decodeJwt } from 'jose';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { assertCodeRedirect } from '../helpers/front-channel.ts';
import { CookieJar, loginThroughForm } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { bash, NPX_GATEHOUSE } from '../helpers/shell.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOC = readFileSync(join(ROOT, 'docs/authorization.md'), 'utf8');
const ELIDED = '…';
const MARKER = '--- the client registered by the example ---';

/** The fenced block right after `<!-- policy-example: NAME -->`. */
function block(name: string): string {
  const match = new RegExp(`<!-- policy-example: ${name} -->\\n\`\`\`[a-z]*\\n([\\s\\S]*?)\\n\`\`\`\\n`).exec(DOC);
  assert.ok(match, `docs/authorization.md has no policy-example block "${name}"`);
  return match[1]!;
}

/** `actual` as the doc shows it: same members, equal values, "…" matching any value. */
function assertShown(actual: Record<string, unknown>, shown: Record<string, unknown>, what: string): void {
  assert.deepEqual(Object.keys(actual).sort(), Object.keys(shown).sort(), `${what}: the members`);
  for (const [key, value] of Object.entries(shown)) {
    if (value === ELIDED) continue;
    assert.deepEqual(actual[key], value, `${what}: ${key}`);
  }
}

const sqlite = DATABASES.find((db) => db.name === 'sqlite')!;

describe('docs/authorization.md: the authorization policy worked example', () => {
  let server: RunningServer;
  let dir: string;
  before(async () => {
    server = await startServer(sqlite);
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-policy-example-'));
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the commands run verbatim, and the ID token, UserInfo and introspection answers are the ones shown', { timeout: 120_000 }, async () => {
    // `npx gatehouse` is this checkout's command; the doc's lines run as they are, then the client is kept for the test.
    const prologue = NPX_GATEHOUSE;
    const epilogue = `\nprintf '\\n%s\\n%s' '${MARKER}' "$client"\n`;
    const run = await bash(prologue + block('commands') + epilogue, dir, { GATEHOUSE_DATABASE_URL: server.database.url, GATEHOUSE_LOG_LEVEL: 'silent' });
    assert.equal(run.code, 0, run.stderr);
    const client = JSON.parse(run.stdout.slice(run.stdout.lastIndexOf(MARKER) + MARKER.length)) as { client_id: string; client_secret: string; redirect_uris: string[] };

    const query = { client_id: client.client_id, redirect_uri: client.redirect_uris[0]!, response_type: 'code', scope: 'openid profile email', state: 'st', nonce: 'n-0S6_WzA2Mj' };
    const response = await loginThroughForm({ baseUrl: server.url, jar: new CookieJar() }, query, { username: 'alice', password: 'correct horse battery staple' });
    const code = assertCodeRedirect(response, { redirectUri: query.redirect_uri, state: 'st', issuer: server.issuer, status: 303 });
    const auth = { authorization: basic(client.client_id, client.client_secret) };
    const tokens = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: query.redirect_uri }, auth);
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));

    assertShown(decodeJwt(tokens.body.id_token as string), JSON.parse(block('id_token')) as Record<string, unknown>, 'ID token');
    const userinfo = await fetch(`${server.url}/uas/oauth2/userinfo`, { headers: { authorization: `Bearer ${tokens.body.access_token as string}` } });
    assertShown((await userinfo.json()) as Record<string, unknown>, JSON.parse(block('userinfo')) as Record<string, unknown>, 'UserInfo');
    const introspection = await postForm(`${server.url}/uas/oauth2/introspection`, { token: tokens.body.access_token as string }, auth);
    assertShown(introspection.body, JSON.parse(block('introspection')) as Record<string, unknown>, 'introspection');
  });
});
