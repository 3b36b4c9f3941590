/**
 * Reference R5 (issue 27): the least a stateful introspection can do in Node on the same core —
 * bare node:http, one SHA-256 of the token sent in the form body, one prepared point read of a
 * SQLite row by that hash (node:sqlite, a WAL-mode file as gatehouse's store), a small JSON answer.
 * No framework, no client authentication, no policy, no audit: S1 and S2 are reported as ratios to
 * it. It fills its table with TOKENS rows (one of them the token the benchmark sends, given in
 * BENCH_R5_TOKEN), prints its port on stdout once listening, and stops on SIGTERM.
 */
import { createHash, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { DatabaseSync } from 'node:sqlite';

const TOKENS = 10_000;
const path = process.env.BENCH_R5_DATABASE;
const token = process.env.BENCH_R5_TOKEN;
if (!path || !token) throw new Error('BENCH_R5_DATABASE and BENCH_R5_TOKEN are required');

const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');
const db = new DatabaseSync(path);
db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;');
db.exec('CREATE TABLE IF NOT EXISTS tokens (token_hash TEXT PRIMARY KEY, sub TEXT NOT NULL, client_id TEXT NOT NULL, scope TEXT NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID');
const insert = db.prepare('INSERT OR REPLACE INTO tokens VALUES (?, ?, ?, ?, ?)');
const expiresAt = Date.now() + 86_400_000;
db.exec('BEGIN');
insert.run(sha256(token), '6f1c1f53-7c4e-4a55-9d0b-3c3f4c1c2b1a', 'bench-rp', 'openid profile email', expiresAt);
for (let i = 1; i < TOKENS; i++) insert.run(sha256(randomBytes(32).toString('base64url')), `user-${i}`, 'bench-rp', 'openid profile email', expiresAt);
db.exec('COMMIT');
const read = db.prepare('SELECT sub, client_id, scope, expires_at FROM tokens WHERE token_hash = ?');

const server = createServer((request, response) => {
  let body = '';
  request.setEncoding('utf8');
  request.on('data', (chunk: string) => (body += chunk));
  request.on('end', () => {
    const row = read.get(sha256(new URLSearchParams(body).get('token') ?? '')) as { sub: string; client_id: string; scope: string; expires_at: number } | undefined;
    const answer = JSON.stringify(row && row.expires_at > Date.now() ? { active: true, sub: row.sub, client_id: row.client_id, scope: row.scope, exp: Math.floor(row.expires_at / 1000) } : { active: false });
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(answer), 'cache-control': 'no-store' });
    response.end(answer);
  });
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : ''}\n`);
});
process.on('SIGTERM', () =>
  server.close(() => {
    db.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
    process.exit(0);
  }),
);
