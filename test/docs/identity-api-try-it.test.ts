/**
 * docs/identity-api.md, "Try it", run verbatim after the README's Quickstart (issue 22 item 11: the
 * bearer section failed after the Quickstart, whose `admin` has another password). In one bash,
 * as a reader would: the Quickstart's blocks, then every block the doc marks `<!-- try-it -->`, in
 * order, with `npx gatehouse` being this checkout's bin/gatehouse.js. The server the doc restarts
 * with data/identity-api.env is started here with that file's settings; only its address differs
 * from the doc's http://127.0.0.1:8080. Then the bearer token and the password grant's token the
 * doc obtained must both read the users through the API.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { bash, NPX_GATEHOUSE } from '../helpers/shell.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOC_ORIGIN = 'http://127.0.0.1:8080';
const sqlite = DATABASES.find((db) => db.name === 'sqlite')!;

/** The ```sh blocks of `text` between the heading `from` and the next heading of its level. */
function shBlocks(text: string, from: string): string[] {
  const start = text.indexOf(`\n${from}\n`);
  assert.ok(start >= 0, `no heading ${from}`);
  const level = /^#+/.exec(from)![0];
  const rest = text.slice(start + from.length + 2);
  const end = rest.search(new RegExp(`\\n${level} `));
  return [...(end < 0 ? rest : rest.slice(0, end)).matchAll(/```sh\n([\s\S]*?)\n```/g)].map((m) => m[1]!);
}

/** The blocks right after `<!-- try-it -->`, in the order of the doc. */
function tryItBlocks(text: string): string[] {
  return [...text.matchAll(/<!-- try-it -->\n```sh\n([\s\S]*?)\n```/g)].map((m) => m[1]!);
}

describe('docs/identity-api.md: "Try it" after the README Quickstart', () => {
  let database: TestDatabase;
  let dir: string;
  let server: RunningServer | undefined;
  before(async () => {
    database = await sqlite.create();
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-try-it-'));
  });
  after(async () => {
    await server?.close();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the marked blocks run verbatim in order, and both tokens read the API', { timeout: 180_000 }, async () => {
    const env = { GATEHOUSE_DATABASE_URL: database.url, GATEHOUSE_LOG_LEVEL: 'silent', HOME: dir };
    const npx = NPX_GATEHOUSE;
    const readme = shBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'), '## Quickstart');
    assert.equal(readme.length, 2, 'the console and CLI blocks of the Quickstart');
    const [once, ...terminal2] = tryItBlocks(readFileSync(join(ROOT, 'docs/identity-api.md'), 'utf8'));
    assert.ok(once?.includes('data/identity-api.env') && terminal2.length >= 7, 'the registration block, then the calls');

    // The Quickstart's server created the store on its first start; then its blocks and the doc's registration.
    const setup = await bash(`${npx}npx gatehouse migrate >/dev/null\n${readme.join('\n')}\n${once}\n`, dir, env, ['-eo', 'pipefail']);
    assert.equal(setup.code, 0, setup.stderr);

    // Terminal 1: the server restarted with data/identity-api.env.
    const settings = Object.fromEntries(
      readFileSync(join(dir, 'data/identity-api.env'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]),
    );
    server = await startServer(sqlite, { database, env: settings });

    // Terminal 2, in one shell: every marked block, then the two tokens it obtained, used once more.
    const epilogue = `
printf '\\n--- bearer %s\\n' "$(curl -sf -o /dev/null -w '%{http_code}' -H "authorization: Bearer $token" "$API/users/?login=dana")"
`;
    const script = `${npx}${terminal2.join('\n').replaceAll(DOC_ORIGIN, server.url)}\n${epilogue}`;
    const run = await bash(script, dir, env, ['-eo', 'pipefail']);
    assert.equal(run.code, 0, `${run.stderr}\n${run.stdout}`);
    assert.match(run.stdout, /\n--- bearer 200\n$/, run.stdout);
    // The authorization-code token's call, as the doc shows it: dana's id.
    const dana = await server.gatehouse.store.users.getByUsername('dana');
    assert.ok(run.stdout.includes(`{"users":["${dana!.id}"]}`), run.stdout);
  });
});
