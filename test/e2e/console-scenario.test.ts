/**
 * The web console's whole story in Chromium (issue 14, docs/console.md), on every test database:
 * `gatehouse admin bootstrap` (the real CLI) makes the first administrator, who signs in to
 * /manage/ through the real login page; registers a confidential client and runs the web SSO
 * example (openid-client, a child process) with exactly the commands the console prints; creates a
 * user, a group with that user in it and an authorization policy that adds claims, attaches the
 * policy to the client, and sees the claims in the example app once the user logs in there; ends
 * that user's session and sees the example's access token refused at UserInfo; rotates a signing
 * key; and finds each of those changes in the audit view, naming the administrator. On every
 * console page visited: no serious or critical axe-core violation and no CSP violation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { bootstrap, cspViolations, launchChromium, noChromium, recordCspViolations, seriousViolations, startWebSso, type WebSsoApp } from '../helpers/console-browser.ts';
import { DATABASES } from '../helpers/databases.ts';
import { freePort, startServer, type RunningServer } from '../helpers/server.ts';

const ADMIN = { username: 'admin', password: 'console administrator password 1' };
const USER = { username: 'sally', password: 'sally sells sea shells 42', email: 'sally@example.com', given: 'Sally', family: 'Seller' };
const GROUP = 'Sales team';
const POLICY = 'sales-claims';

/** One `export NAME='value'` line as a POSIX shell reads it (a `'` inside is written `'\''`). */
function parseExport(line: string): [string, string] {
  const match = /^export ([A-Z_][A-Z0-9_]*)=((?:'[^']*'|\\')+)$/.exec(line);
  assert.ok(match, `not an export line: ${line}`);
  const value = match[2]!.replace(/'([^']*)'|\\(')/g, (_all, quoted: string | undefined, escaped: string | undefined) => quoted ?? escaped ?? '');
  return [match[1]!, value];
}

const claimsOf = async (page: Page, id: 'id-token-claims' | 'userinfo-claims') => JSON.parse(await page.locator(`#${id}`).innerText()) as Record<string, unknown>;

for (const db of DATABASES) {
  describe(`the console's whole scenario in Chromium on ${db.name}`, { skip: noChromium }, () => {
    let server: RunningServer;
    let browser: Browser;
    let app: WebSsoApp | undefined;

    before(async () => {
      server = await startServer(db);
      browser = await launchChromium();
    });
    after(async () => {
      await app?.stop();
      await browser?.close();
      await server?.close();
    });

    test('bootstrap, sign in, register a client for the web SSO example, user + group + policy → claim, end the session → token refused, rotate a key, audit', { timeout: 300_000 }, async () => {
      // a. The first administrator, made by the real CLI.
      const output = await bootstrap({ databaseUrl: server.database.url, issuer: server.issuer }, ADMIN.username, ADMIN.password);
      assert.match(output, /gatehouse-console/);

      const consoleContext = await browser.newContext();
      await recordCspViolations(consoleContext);
      const page = await consoleContext.newPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));
      const axe: Record<string, string[]> = {};
      const visited: string[] = [];
      /** axe-core and the CSP on the console page shown now. */
      const check = async (name: string) => {
        visited.push(name);
        axe[name] = await seriousViolations(page);
        assert.deepEqual(await cspViolations(page), [], `CSP violations on ${name}`);
      };
      const nav = (label: string) => page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: label, exact: true }).click();
      const port = await freePort();
      const origin = `http://127.0.0.1:${port}`;
      const visitors: BrowserContext[] = [];

      try {
        await page.goto(`${server.url}/manage/`);
        assert.match(page.url(), /\/uas\/oauth2\/authorization\?/, 'the console sends an unsigned-in browser to gatehouse’s login');
        await page.getByLabel('Username').fill(ADMIN.username);
        await page.getByLabel('Password').fill(ADMIN.password);
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        await page.waitForURL(`${server.url}/manage/`);
        await page.getByRole('heading', { name: 'Overview' }).waitFor();
        assert.ok((await page.textContent('header'))?.includes(ADMIN.username));
        assert.ok((await page.textContent('main'))?.includes('administrator'));
        await check('overview');

        // The administrator's user id: the actor every audit event must name.
        await nav('Users');
        await page.getByRole('heading', { name: 'Users' }).waitFor();
        await check('users');
        await page.getByRole('link', { name: ADMIN.username, exact: true }).click();
        await page.getByRole('heading', { name: `User ${ADMIN.username}` }).waitFor();
        const adminId = (await page.locator('main dl dd code').first().innerText()).trim();
        assert.equal(adminId, (await server.gatehouse.store.users.getByUsername(ADMIN.username))?.id);
        await check('administrator');

        // b. A confidential client for the web SSO example; the secret once, the commands to run it.
        await nav('Clients');
        await page.getByRole('heading', { name: 'Clients' }).waitFor();
        await check('clients');
        await page.getByRole('link', { name: 'Register a client' }).click();
        await page.getByRole('heading', { name: 'Register a client' }).waitFor();
        await check('register a client');
        await page.getByLabel('Name', { exact: true }).fill('Sales portal');
        await page.getByLabel('Redirect URIs', { exact: true }).fill(`${origin}/callback`);
        await page.getByLabel('Post-logout redirect URIs').fill(`${origin}/`);
        await page.getByRole('button', { name: 'Register' }).click();
        await page.getByRole('heading', { name: 'Client registered' }).waitFor();
        await check('client registered');
        const clientId = (await page.locator('#client-id').innerText()).trim();
        const secret = (await page.locator('#client-secret').innerText()).trim();
        assert.match(secret, /^[A-Za-z0-9_-]{20,}$/);
        const settings = await page.locator('dl.settings').innerText();
        assert.ok(settings.includes(`${server.issuer}/.well-known/openid-configuration`), settings);
        assert.ok(settings.includes(`${origin}/callback`), settings);
        assert.match(settings, /client_secret_basic|client_secret_post/);
        const commands = (await page.locator('#example-commands').innerText()).trim().split('\n');
        assert.equal(commands.at(-1), 'node examples/web-sso/server.ts');
        const env = Object.fromEntries(commands.slice(0, -1).map(parseExport));
        assert.deepEqual(env, { ISSUER: server.issuer, CLIENT_ID: clientId, CLIENT_SECRET: secret, PORT: String(port) });
        app = await startWebSso(env);

        // The administrator logs in to the example: no policy yet, so only the standard claims.
        const first = await browser.newContext();
        visitors.push(first);
        const firstSite = await first.newPage();
        await firstSite.goto(`${origin}/`);
        await firstSite.getByRole('link', { name: 'Log in' }).click();
        await firstSite.getByLabel('Username').fill(ADMIN.username);
        await firstSite.getByLabel('Password').fill(ADMIN.password);
        await Promise.all([firstSite.waitForURL(`${origin}/`), firstSite.getByRole('button', { name: 'Sign in', exact: true }).click()]);
        const adminClaims = await claimsOf(firstSite, 'id-token-claims');
        assert.equal(adminClaims.iss, server.issuer);
        assert.equal(adminClaims.aud, clientId);
        assert.equal(adminClaims.sub, adminId);
        assert.equal(adminClaims.department, undefined, 'no policy, no extra claim');

        // c. A user with a password, a group with the user in it, a policy with claims, attached to the client.
        await nav('Users');
        await page.getByRole('link', { name: 'Create a user' }).click();
        await page.getByRole('heading', { name: 'Create a user' }).waitFor();
        await check('create a user');
        await page.getByLabel('Username').fill(USER.username);
        await page.getByLabel('Email').fill(USER.email);
        await page.getByLabel('Given name').fill(USER.given);
        await page.getByLabel('Family name').fill(USER.family);
        await page.getByLabel('Password').fill(USER.password);
        await page.getByRole('button', { name: 'Save' }).click();
        await page.getByRole('heading', { name: `User ${USER.given} ${USER.family}` }).or(page.getByRole('heading', { name: `User ${USER.username}` })).waitFor();
        await page.getByText('Created.').waitFor();
        const userId = (await page.locator('main dl dd code').first().innerText()).trim();
        assert.equal(userId, (await server.gatehouse.store.users.getByUsername(USER.username))?.id);
        await check('user created');
        const userUrl = page.url();

        await nav('Groups');
        await page.getByRole('heading', { name: 'Groups' }).waitFor();
        await check('groups');
        await page.getByRole('link', { name: 'Create a group' }).click();
        await page.getByRole('heading', { name: 'Create a group' }).waitFor();
        await check('create a group');
        await page.getByLabel('Group name').fill(GROUP);
        await page.getByLabel('Description').fill('The people who sell');
        await page.getByRole('button', { name: 'Save' }).click();
        await page.getByRole('heading', { name: `Group ${GROUP}` }).waitFor();
        await page.getByLabel('Username').fill(USER.username);
        await page.getByRole('button', { name: 'Add a member' }).click();
        await page.getByText('Added.').waitFor();
        await page.locator('main ul.plain').getByRole('link', { name: USER.username, exact: true }).waitFor();
        await check('group with a member');

        await nav('Policies');
        await page.getByRole('heading', { name: 'Authorization policies' }).waitFor();
        await check('policies');
        await page.getByRole('link', { name: 'New policy' }).click();
        await page.getByRole('heading', { name: 'New policy' }).waitFor();
        await check('new policy');
        const policy = {
          name: POLICY,
          claims: [
            { claim: 'department', value: 'Sales', in: ['id_token', 'userinfo'] },
            { claim: 'teams', from: 'groups', in: ['id_token', 'userinfo'] },
          ],
        };
        await page.getByLabel('Policy document (JSON)').fill(JSON.stringify(policy, null, 2));
        await page.getByRole('button', { name: 'Save' }).click();
        await page.getByRole('heading', { name: `Policy ${POLICY}` }).waitFor();
        await page.getByText('Created.').waitFor();
        await check('policy created');

        await nav('Clients');
        await page.getByRole('link', { name: 'Sales portal' }).click();
        await page.getByRole('heading', { name: 'Client Sales portal' }).waitFor();
        await check('client');
        await page.getByRole('link', { name: 'Edit', exact: true }).click();
        await page.getByRole('heading', { name: 'Edit client Sales portal' }).waitFor();
        await check('edit client');
        await page.getByLabel('Authorization policy').selectOption(POLICY);
        await page.getByRole('button', { name: 'Save' }).click();
        await page.getByRole('heading', { name: 'Client Sales portal' }).waitFor();
        await page.getByText('Saved.').waitFor();
        assert.ok((await page.textContent('main'))?.includes(POLICY), 'the client page shows its policy');
        await check('client with a policy');

        // The user logs in to the example in another browser: the policy's claims are there.
        const second = await browser.newContext();
        visitors.push(second);
        const site = await second.newPage();
        await site.goto(`${origin}/`);
        await site.getByRole('link', { name: 'Log in' }).click();
        await site.getByLabel('Username').fill(USER.username);
        await site.getByLabel('Password').fill(USER.password);
        await Promise.all([site.waitForURL(`${origin}/`), site.getByRole('button', { name: 'Sign in', exact: true }).click()]);
        const idToken = await claimsOf(site, 'id-token-claims');
        assert.equal(idToken.sub, userId);
        assert.equal(idToken.aud, clientId);
        assert.equal(idToken.department, 'Sales');
        assert.deepEqual(idToken.teams, [GROUP]);
        const userinfo = await claimsOf(site, 'userinfo-claims');
        assert.equal(userinfo.sub, userId);
        assert.equal(userinfo.department, 'Sales');
        assert.deepEqual(userinfo.teams, [GROUP]);
        assert.equal(userinfo.email, USER.email);
        const sessionIndex = idToken.session_index as string;
        assert.match(sessionIndex, /.+/);

        // d. The administrator ends that session; the example's access token is refused at UserInfo.
        await page.goto(userUrl);
        await page.getByRole('heading', { name: 'Sessions' }).waitFor();
        await check('user with a session');
        const row = page.locator('section[aria-labelledby="sessions"] tbody tr', { hasText: sessionIndex });
        assert.equal(await row.count(), 1, 'the session of the ID token is listed');
        await row.getByRole('link', { name: 'End session' }).click();
        await page.getByRole('heading', { name: 'Are you sure?' }).waitFor();
        await check('end session confirmation');
        await page.getByRole('button', { name: 'End session' }).click();
        await page.getByText('The session was ended.').waitFor();
        assert.equal(await page.locator('section[aria-labelledby="sessions"] tbody tr', { hasText: sessionIndex }).count(), 0, 'the session is gone');
        await check('user after ending the session');

        await site.getByRole('button', { name: 'Fetch UserInfo again' }).click();
        await site
          .locator('#userinfo-error')
          .waitFor({ timeout: 10_000 })
          .catch(() => assert.fail('no #userinfo-error: the ended session’s access token was still accepted at UserInfo'));
        assert.match(await site.locator('#userinfo-error').innerText(), /invalid_token/);
        // Only that session: the administrator's login at the example still works.
        await firstSite.getByRole('button', { name: 'Fetch UserInfo again' }).click();
        await firstSite.locator('#userinfo-claims').waitFor();
        assert.equal(await firstSite.locator('#userinfo-error').count(), 0, 'another session’s token is still accepted');

        // e. A signing key rotation, after its confirmation page.
        await nav('Signing keys');
        await page.getByRole('heading', { name: 'Signing keys' }).waitFor();
        await check('keys');
        const kids = async () => (await page.locator('tbody tr td:first-child').allInnerTexts()).map((kid) => kid.trim()).sort();
        const kidsBefore = await kids();
        await page.getByRole('link', { name: 'Rotate the signing keys' }).click();
        await page.getByRole('heading', { name: 'Are you sure?' }).waitFor();
        await check('rotate confirmation');
        await page.getByRole('button', { name: 'Rotate the signing keys' }).click();
        await page.getByText('The signing keys were rotated.').waitFor();
        const kidsAfter = await kids();
        assert.equal(kidsAfter.length, kidsBefore.length + 1, `a new key: ${kidsBefore.join(',')} → ${kidsAfter.join(',')}`);
        const newKid = kidsAfter.find((kid) => !kidsBefore.includes(kid))!;
        await check('keys after rotation');

        // f. Each change in the audit view, by type and by the acting administrator, naming them.
        await server.gatehouse.auditStore?.flush();
        await nav('Audit events');
        await page.getByRole('heading', { name: 'Audit events' }).waitFor();
        await check('audit events');
        const expected: [event: string, mentions: string][] = [
          ['client.created', clientId],
          ['user.created', USER.username], // people by username (issue 22 item 11)
          ['user.group_added', GROUP],
          ['policy.created', POLICY],
          ['client.updated', POLICY],
          ['session.ended', USER.username], // the session itself by fingerprint only
          ['key.rotated', newKid],
        ];
        for (const [event, mentions] of expected) {
          await page.getByLabel('Event type').fill(event);
          await page.getByLabel('User ID').fill(adminId);
          await page.getByRole('button', { name: 'Filter' }).click();
          await page.waitForURL((url) => url.searchParams.get('type') === event);
          const rows = page.locator('tbody tr');
          const texts = await rows.allInnerTexts();
          const matching = texts.filter((text) => text.includes(event) && text.includes(mentions));
          assert.equal(matching.length, 1, `one ${event} naming ${mentions}: ${texts.join('\n')}`);
          assert.ok(matching[0]!.includes(`manage-api · ${ADMIN.username} · gatehouse-console`), `${event} names the administrator: ${matching[0]}`);
          assert.ok(texts.every((text) => text.includes(event)), `the type filter keeps only ${event}`);
          if (event === 'session.ended') assert.match(matching[0]!, /"revoked":[1-9]/, 'the session’s tokens were revoked with it');
        }
        await check('audit events filtered');
        // The user filter also finds the ended session by the user it ended.
        await page.getByLabel('Event type').fill('session.*');
        await page.getByLabel('User ID').fill(userId);
        await page.getByRole('button', { name: 'Filter' }).click();
        await page.locator('tbody tr', { hasText: 'session.ended' }).waitFor();
      } catch (error) {
        throw new Error(`${(error as Error).message}\n--- web-sso example\n${app?.output() ?? ''}`, { cause: error });
      } finally {
        for (const context of visitors) await context.close();
        await consoleContext.close();
      }
      // g. Every console page visited: no serious or critical accessibility violation.
      assert.ok(visited.length >= 20, `pages checked: ${visited.join(', ')}`);
      for (const [name, violations] of Object.entries(axe)) assert.deepEqual(violations, [], `axe on ${name}`);
      assert.deepEqual(problems, [], 'no console errors (CSP reports land there too)');
    });
  });
}
