/**
 * Signing in to the web console over HTTP as a browser does (docs/console.md, "Signing in"):
 * `/manage/` → the authorization endpoint → the login form → `/manage/callback` → the page asked for.
 */
import assert from 'node:assert/strict';
import { browse, CookieJar, formAction, formFields, submit } from './fixtures.ts';

/** The console's answer to a sign-in as `username`: the callback's response, and the jar holding the cookies. */
export async function consoleSignIn(baseUrl: string, username: string, password: string): Promise<{ jar: CookieJar; callback: Response }> {
  const jar = new CookieJar();
  const first = await browse(`${baseUrl}/manage/`, jar);
  assert.equal(first.status, 302, `/manage/ should send the browser to sign in: ${first.status} ${await first.clone().text()}`);
  const login = await browse(first.headers.get('location')!, jar);
  assert.equal(login.status, 200, `the login page: ${await login.clone().text()}`);
  const html = await login.text();
  const fields = formFields(html).map(([n, v]): [string, string] => [n, n === 'username' ? username : n === 'password' ? password : v]);
  const back = await submit(new URL(formAction(html), baseUrl).toString(), fields, jar);
  assert.equal(back.status, 303, 'the login form redirects to the console');
  const callback = await browse(back.headers.get('location')!, jar);
  return { jar, callback };
}

/** Signs in and opens the console's home page: its HTML, which names the signed-in user. */
export async function consoleHome(baseUrl: string, username: string, password: string): Promise<string> {
  const { jar, callback } = await consoleSignIn(baseUrl, username, password);
  assert.equal(callback.status, 303, `the callback: ${await callback.clone().text()}`);
  const home = await browse(new URL(callback.headers.get('location')!, baseUrl).toString(), jar);
  assert.equal(home.status, 200);
  return home.text();
}
