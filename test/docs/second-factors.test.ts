/**
 * docs/second-factors.md's worked examples run verbatim (issue 24, item 6): the migration block
 * (`<!-- factors: migration -->`) imports the export it shows into a fresh store, printing exactly
 * the lines it shows and never a secret; the sealing block (`<!-- factors: seal -->`), run later
 * with GATEHOUSE_KEY_ENCRYPTION_KEY set, prints exactly its lines; then the imported factors are
 * sealed and each verifies the codes its app shows, with the parameters the export gave.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Secret, TOTP } from 'otpauth';
import { loadConfig } from '../../src/config.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { verifySecondFactor } from '../../src/oauth/factors/verify.ts';
import { openSqlStore } from '../../src/storage/sql/store.ts';
import { runGatehouse } from '../helpers/cli.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { bash, NPX_GATEHOUSE } from '../helpers/shell.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOC = readFileSync(join(ROOT, 'docs/second-factors.md'), 'utf8');
const KEY = 'a key-encryption key of the deployment, 32+ chars';
const sqlite = DATABASES.find((db) => db.name === 'sqlite')!;

interface Block {
  /** Each `$ ` command with its `> ` continuation lines, as one script line each. */
  commands: { script: string; output: string[] }[];
}

/** The console block after `<!-- factors: NAME -->`: its commands and, after each, the lines it shows as that command's output. */
function block(name: string): Block {
  const match = new RegExp(`<!-- factors: ${name} -->\\n\`\`\`console\\n([\\s\\S]*?)\\n\`\`\`\\n`).exec(DOC);
  assert.ok(match, `docs/second-factors.md has no block "${name}"`);
  const commands: Block['commands'] = [];
  for (const line of match[1]!.split('\n')) {
    if (line.startsWith('$ ')) commands.push({ script: line.slice(2), output: [] });
    else if (line.startsWith('> ')) commands.at(-1)!.script += `\n${line.slice(2)}`;
    else commands.at(-1)!.output.push(line);
  }
  return { commands };
}

/** The shown output as a pattern: `…` stands for whatever the run printed there (an id). */
function shown(lines: string[]): RegExp {
  return new RegExp(`^${lines.map((line) => line.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^\\n]*')).join('\\n')}\\n$`);
}

describe('docs/second-factors.md: the migration and sealing examples, verbatim', () => {
  let database: TestDatabase;
  let dir: string;
  let env: Record<string, string>;
  before(async () => {
    database = await sqlite.create();
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-factor-docs-'));
    env = { GATEHOUSE_DATABASE_URL: database.url, GATEHOUSE_ISSUER: 'https://sso.example.com/uas', HOME: dir };
    assert.equal((await runGatehouse(['migrate'], env)).code, 0);
    for (const username of ['alice', 'bob']) assert.equal((await runGatehouse(['user', 'create', '--username', username, '--password-stdin'], env, 'a password of theirs\n')).code, 0);
  });
  after(async () => {
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the export shown is imported with the lines shown, never printing a secret; sealing later seals both, once; the codes of each app then verify', async () => {
    const [cat, ...rest] = block('migration').commands;
    assert.equal(cat?.script, 'cat totp-export.csv');
    // The reader's export is what the doc shows `cat` printing.
    writeFileSync(join(dir, 'totp-export.csv'), `${cat.output.join('\n')}\n`);
    const rows = cat.output.map((line) => line.split(','));
    const run = await bash(`${NPX_GATEHOUSE}${[cat, ...rest].map((c) => c.script).join('\n')}\n`, dir, env);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, shown([...cat.output, ...rest.flatMap((c) => c.output)]));
    const afterCat = run.stdout.slice(cat.output.join('\n').length);
    for (const [, secret] of rows) assert.equal(afterCat.includes(secret!) || run.stderr.includes(secret!), false, 'no secret printed by gatehouse');
    assert.equal(existsSync(join(dir, 'totp-export.csv')), false, 'the export is gone');

    const seal = block('seal').commands;
    const sealed = await bash(`${NPX_GATEHOUSE}${seal.map((c) => c.script).join('\n')}\n`, dir, { ...env, GATEHOUSE_KEY_ENCRYPTION_KEY: KEY });
    assert.equal(sealed.code, 0, sealed.stderr);
    assert.match(sealed.stdout, shown(seal.flatMap((c) => c.output)));

    const store = await openSqlStore(database.url);
    try {
      const config = loadConfig({ GATEHOUSE_ISSUER: env.GATEHOUSE_ISSUER!, GATEHOUSE_KEY_ENCRYPTION_KEY: KEY });
      const clock = new ManualClock(Date.UTC(2026, 10, 27, 12, 0, 0));
      for (const [username, secret, digits, period, algorithm] of rows) {
        const user = (await store.users.getByUsername(username!))!;
        const [factor, ...none] = await store.factors.totpFactors(user.id);
        assert.deepEqual([none.length, factor?.secret.form, factor?.digits, factor?.period, factor?.algorithm], [0, 'sealed', Number(digits), Number(period), algorithm], username);
        const code = TOTP.generate({ secret: Secret.fromBase32(secret!.replace(/\s/g, '').toUpperCase()), digits: Number(digits), period: Number(period), algorithm: algorithm!, timestamp: clock.now() });
        const verified = await verifySecondFactor({ config, store, clock, audit: { emit: () => undefined } }, { userId: user.id, username: user.username, code, ip: '192.0.2.1' });
        assert.equal(verified.type, 'ok', `${username}'s app's code`);
      }
    } finally {
      await store.close();
    }
  });
});
