/** The login page's template (display) and language (ui_locales, Accept-Language): OIDC Core §3.1.2.1. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, browse, createTestClient } from '../helpers/fixtures.ts';
import { assertErrorPage, assertLoginPage } from '../helpers/front-channel.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

for (const db of DATABASES) {
  describe(`login page templates and languages on ${db.name}`, () => {
    let server: RunningServer;
    let client: Client;
    const page = async (extra: Record<string, string>, headers: Record<string, string> = {}) =>
      assertLoginPage(await browse(authorizationUrl(server.url, { client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid', ...extra }), undefined, headers));

    before(async () => {
      server = await startServer(db);
      ({ client } = await createTestClient(server.gatehouse.store, { name: 'Kirjasto & <Library>' }));
    });
    after(async () => server.close());

    test('display picks page, popup or touch; unknown values fall back to page', async () => {
      const pageHtml = await page({});
      assert.match(pageHtml, /<body class="display-page">/);
      assert.match(pageHtml, /class="card"/);
      const popup = await page({ display: 'popup' });
      assert.match(popup, /<body class="display-popup">/);
      assert.match(popup, /class="compact"/);
      const touch = await page({ display: 'touch' });
      assert.match(touch, /<body class="display-touch">/);
      assert.match(touch, /class="touch"/);
      assert.match(await page({ display: 'wap' }), /<body class="display-page">/);
      assert.match(await page({ display: '<x>' }), /<body class="display-page">/);
    });

    test('the client name is escaped', async () => {
      assert.ok((await page({})).includes('Kirjasto &amp; &lt;Library&gt;'));
    });

    test('ui_locales: the first supported language wins (fi, sv), with region subtags', async () => {
      const fi = await page({ ui_locales: 'de fi-FI sv' });
      assert.match(fi, /<html lang="fi">/);
      assert.match(fi, /<label for="username">Käyttäjätunnus<\/label>/);
      assert.match(fi, /<label for="password">Salasana<\/label>/);
      const sv = await page({ ui_locales: 'sv-SE' });
      assert.match(sv, /<html lang="sv">/);
      assert.match(sv, /<label for="username">Användarnamn<\/label>/);
      assert.match(sv, /Lösenord/);
    });

    test('without a usable ui_locales the Accept-Language header decides, by weight; else English', async () => {
      assert.match(await page({}, { 'accept-language': 'de-DE, sv;q=0.8, fi;q=0.9' }), /<html lang="fi">/);
      assert.match(await page({ ui_locales: 'de' }, { 'accept-language': 'sv' }), /<html lang="sv">/);
      assert.match(await page({}, { 'accept-language': 'fi;q=0, de' }), /<html lang="en">/);
      assert.match(await page({ ui_locales: 'xx' }), /<html lang="en">/);
      assert.match(await page({ ui_locales: 'en' }, { 'accept-language': 'fi' }), /<html lang="en">/);
    });

    test('the error page speaks the request’s language too', async () => {
      const html = await assertErrorPage(await browse(`${server.url}/uas/oauth2/authorization?client_id=unknown&ui_locales=sv`), 'invalid_client');
      assert.match(html, /<html lang="sv">/);
      assert.match(html, /Inloggningsfel/);
    });
  });
}
