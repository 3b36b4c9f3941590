/**
 * The nginx and Caddy configurations of docs/deployment.md against the routes gatehouse really
 * serves (issue 22 item 8): every route under the issuer's path and /manage/ is forwarded, the
 * identity API only from the internal network, /health and the root are not, a route of a new
 * kind fails until someone decides, and no location forwards a path gatehouse does not serve.
 * The routes are Fastify's own list (printRoutes) of a server with every optional route on.
 *
 * Each configuration is read with a small model of its server's matching, enough for what the
 * page uses and refusing anything else, so the model cannot be silently wrong:
 * nginx: `location [=|^~] uri` (exact first, then the longest prefix; a prefix ending in `/`
 * that proxies answers its bare form with a 301 to it), with `proxy_pass`, `allow`/`deny`,
 * `return`; Caddy: `handle [matcher]`, sorted as the Caddyfile adapter sorts them (a single
 * path matcher first, longest first; then named matchers in order; then none), with named
 * matchers of `path` and `remote_ip`, and `reverse_proxy` or `respond` inside.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createGatehouse } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DEPLOYMENT = readFileSync(join(ROOT, 'docs/deployment.md'), 'utf8');

/** What the proxy does with a path, seen from outside and from the internal network. */
type Decision = 'forwarded' | 'internal only' | 'refused';
/** Client addresses: one on the documented internal network, one on the internet. */
const INSIDE = '10.1.2.3';
const OUTSIDE = '203.0.113.9';

/** Every route path gatehouse serves with every optional route on, parameters filled with `x`. */
async function servedPaths(): Promise<{ paths: string[]; issuerPath: string; prefixes: string[] }> {
  const config = loadConfig({
    GATEHOUSE_ISSUER: 'https://sso.example.com/uas',
    GATEHOUSE_DATABASE_URL: 'sqlite::memory:',
    GATEHOUSE_LOG_LEVEL: 'silent',
    GATEHOUSE_CLEANUP_INTERVAL: '0',
    GATEHOUSE_DYNAMIC_REGISTRATION: 'initial_access_token',
    GATEHOUSE_THEME_DIR: join(ROOT, 'examples/theme'),
  });
  const gatehouse = await createGatehouse(config, {}, { logger: false });
  try {
    await gatehouse.app.ready();
    return { paths: parseRouteTree(gatehouse.app.printRoutes({ commonPrefix: false })), issuerPath: config.issuerPath, prefixes: [config.identityRestPrefix, config.legacyRestPrefix] };
  } finally {
    await gatehouse.close();
  }
}

/** Fastify's route tree (`├── uas (GET, HEAD)` under `└── / (GET)`) as full paths. */
function parseRouteTree(tree: string): string[] {
  const stack: string[] = [];
  const paths = new Set<string>();
  for (const line of tree.split('\n').filter(Boolean)) {
    const at = line.indexOf('── ');
    const match = /^(.*?)(?: \(([A-Z, ]+)\))?$/.exec(line.slice(at + 3))!;
    // `└── ` at column 0, each level four columns further right.
    const depth = (at - 1) / 4;
    stack.length = depth;
    stack.push(`${stack.at(-1) ?? ''}${match[1]!}`);
    if (match[2] !== undefined) paths.add(stack.at(-1)!.replace(/:[^/.]+|\*/g, 'x'));
  }
  return [...paths].sort();
}

/** The fenced blocks of a language, each with the sentence before it. */
function blocks(language: string): { text: string; before: string }[] {
  return [...DEPLOYMENT.matchAll(new RegExp(`([^\\n]*)\\n\\n\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => ({ before: m[1]!, text: m[2]! }));
}

interface Statement {
  words: string[];
  children?: Statement[];
}

/** Braces, `;` (nginx) or line ends (Caddy) make statements; `#` starts a comment. */
function parseBlocks(text: string, endsAtNewline: boolean): Statement[] {
  const tokens = text
    .split('\n')
    .map((line) => line.replace(/#.*$/, ''))
    .flatMap((line) => [...(line.match(/[{};]|[^\s{};]+/g) ?? []), ...(endsAtNewline ? ['\n'] : [])]);
  let i = 0;
  const statements = (): Statement[] => {
    const out: Statement[] = [];
    let words: string[] = [];
    while (i < tokens.length) {
      const token = tokens[i++]!;
      if (token === '}') break;
      if (token === '{') {
        out.push({ words, children: statements() });
        words = [];
      } else if (token === ';' || token === '\n') {
        if (words.length > 0) out.push({ words });
        words = [];
      } else words.push(token);
    }
    if (words.length > 0) out.push({ words });
    return out;
  };
  return statements();
}

function inRanges(address: string, ranges: string[]): boolean {
  const bits = (ip: string) => ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
  return ranges.some((range) => {
    if (range === 'all') return true;
    const [base, length = '32'] = range.split('/');
    assert.match(base!, /^\d+\.\d+\.\d+\.\d+$/, `the model knows IPv4 ranges only, not ${range}`);
    const size = 2 ** (32 - Number(length));
    return Math.floor(bits(address) / size) === Math.floor(bits(base!) / size);
  });
}

/** One rule of a proxy: where it applies and what it does there. */
interface Rule {
  name: string;
  forwards: boolean;
  decide(path: string, client: string): 'forward' | 'refuse' | 'pass';
}

/** How a configuration answers each path, and which of its forwarding rules served at least one. */
interface Proxy {
  rules: Rule[];
  route(path: string, client: string): { outcome: 'forward' | 'refuse'; rule: string; path: string };
}

// --- nginx -------------------------------------------------------------------------------------

function nginxLocation(statement: Statement): { modifier: string; uri: string; rule: Rule } {
  const [, ...args] = statement.words;
  const [modifier, uri] = args.length === 2 ? [args[0]!, args[1]!] : ['', args[0]!];
  assert.ok(['', '=', '^~'].includes(modifier), `location ${args.join(' ')}: the model has no regular expressions`);
  let forwards = false;
  let returns: string | undefined;
  const access: [string, string][] = [];
  for (const { words } of statement.children ?? []) {
    const [name, ...values] = words;
    if (name === 'proxy_pass') {
      // No URI part: the path reaches gatehouse as the client sent it (deployment.md says why).
      assert.match(values[0]!, /^https?:\/\/[^/]+$/, `${uri}: proxy_pass ${values[0]} would rewrite the path`);
      forwards = true;
    } else if (name === 'return') returns = values[0];
    else if (name === 'allow' || name === 'deny') access.push([name, values[0]!]);
    else assert.fail(`location ${uri}: the model does not know "${name}"`);
  }
  assert.ok(forwards !== (returns !== undefined), `location ${uri}: either proxy_pass or return`);
  const rule: Rule = {
    name: `location ${modifier ? `${modifier} ` : ''}${uri}`,
    forwards,
    decide(_path, client) {
      // allow/deny: the first that matches the client wins (ngx_http_access_module).
      const first = access.find(([, range]) => inRanges(client, [range]));
      if (first?.[0] === 'deny') return 'refuse';
      return forwards ? 'forward' : 'refuse';
    },
  };
  return { modifier, uri, rule };
}

function nginxProxy(locations: Statement[]): Proxy {
  const parsed = locations.map(nginxLocation);
  const match = (path: string) =>
    parsed.find((l) => l.modifier === '=' && l.uri === path) ??
    parsed.filter((l) => l.modifier !== '=' && path.startsWith(l.uri)).sort((a, b) => b.uri.length - a.uri.length)[0];
  return {
    rules: parsed.map((l) => l.rule),
    route(path, client) {
      let location = match(path);
      // A proxying prefix location `/x/` answers `/x` with a 301 to `/x/` (ngx_http_core_module, location).
      const slashed = parsed.find((l) => l.modifier !== '=' && l.uri === `${path}/` && l.rule.forwards);
      if (slashed && location?.modifier !== '=') {
        path = `${path}/`;
        location = slashed;
      }
      assert.ok(location, `nginx has no location for ${path}`);
      const outcome = location.rule.decide(path, client);
      return { outcome: outcome === 'pass' ? 'refuse' : outcome, rule: location.rule.name, path };
    },
  };
}

function nginxServer(text: string): Statement[] {
  const servers = parseBlocks(text, false).filter((s) => s.words[0] === 'server');
  const tls = servers.filter((s) => s.children!.some((c) => c.words[0] === 'listen' && c.words.includes('ssl')));
  assert.equal(tls.length, 1, 'one TLS server block');
  return tls[0]!.children!.filter((c) => c.words[0] === 'location');
}

// --- Caddy -------------------------------------------------------------------------------------

function pathMatches(pattern: string, path: string): boolean {
  assert.ok(!pattern.slice(0, -1).includes('*'), `path ${pattern}: the model knows a trailing * only`);
  return pattern.endsWith('*') ? path.startsWith(pattern.slice(0, -1)) : path === pattern;
}

function caddyProxy(statements: Statement[]): Proxy {
  const matchers = new Map<string, { paths: string[]; ranges: string[] }>();
  for (const s of statements.filter((s) => s.words[0]!.startsWith('@'))) {
    const lines = s.children ?? [{ words: s.words.slice(1) }];
    const matcher = { paths: [] as string[], ranges: [] as string[] };
    for (const { words } of lines) {
      if (words[0] === 'path') matcher.paths.push(...words.slice(1));
      else if (words[0] === 'remote_ip') matcher.ranges.push(...words.slice(1));
      else assert.fail(`${s.words[0]}: the model does not know the matcher "${words[0]}"`);
    }
    matchers.set(s.words[0]!, matcher);
  }
  const handles = statements.filter((s) => !s.words[0]!.startsWith('@'));
  for (const h of handles) assert.equal(h.words[0], 'handle', `the model knows only handle blocks, not "${h.words[0]}"`);
  const rules = handles.map((h, index): Rule & { order: [number, number, number] } => {
    const token = h.words[1];
    const inner = h.children!.map((c) => c.words[0]);
    assert.ok(inner.length === 1 && ['reverse_proxy', 'respond'].includes(inner[0]!), `handle ${token ?? ''}: one reverse_proxy or respond`);
    const forwards = inner[0] === 'reverse_proxy';
    const matcher = token === undefined ? { paths: [], ranges: [] } : token.startsWith('@') ? matchers.get(token)! : { paths: [token], ranges: [] };
    assert.ok(matcher, `handle ${token}: no matcher of that name`);
    // The Caddyfile adapter's order: a single path matcher first, longest first; then other matchers; then none.
    const order: [number, number, number] = token === undefined ? [2, 0, index] : token.startsWith('@') ? [1, 0, index] : [0, -token.length, index];
    return {
      name: `handle ${token ?? '(everything else)'}`,
      forwards,
      order,
      decide(path, client) {
        if (matcher.paths.length > 0 && !matcher.paths.some((p) => pathMatches(p, path))) return 'pass';
        if (matcher.ranges.length > 0 && !inRanges(client, matcher.ranges)) return 'pass';
        return forwards ? 'forward' : 'refuse';
      },
    };
  });
  const sorted = [...rules].sort((a, b) => a.order[0] - b.order[0] || a.order[1] - b.order[1] || a.order[2] - b.order[2]);
  return {
    rules,
    route(path, client) {
      for (const rule of sorted) {
        const outcome = rule.decide(path, client);
        if (outcome !== 'pass') return { outcome, rule: rule.name, path };
      }
      // No handle matched: Caddy answers an empty 200, which is no forwarding either.
      return { outcome: 'refuse', rule: '(none)', path };
    },
  };
}

function caddySite(text: string): Statement[] {
  const sites = parseBlocks(text, true);
  assert.equal(sites.length, 1, 'one site block');
  return sites[0]!.children!;
}

// --- the check ---------------------------------------------------------------------------------

/** Each served path's decision, and the forwarding rules no served path reaches. */
function decide(proxy: Proxy, paths: string[]): { decisions: Record<string, Decision>; unused: string[] } {
  const used = new Set<string>();
  const served = new Set(paths);
  const decisions: Record<string, Decision> = {};
  for (const path of paths) {
    const [outside, inside] = [OUTSIDE, INSIDE].map((client) => {
      const routed = proxy.route(path, client);
      // A redirect to a path gatehouse does not serve reaches nothing.
      if (routed.outcome === 'forward' && !served.has(routed.path)) return 'refuse';
      if (routed.outcome === 'forward') used.add(routed.rule);
      return routed.outcome;
    });
    assert.ok(!(outside === 'forward' && inside === 'refuse'), `${path}: forwarded from outside but not from inside`);
    decisions[path] = outside === 'forward' ? 'forwarded' : inside === 'forward' ? 'internal only' : 'refused';
  }
  return { decisions, unused: proxy.rules.filter((r) => r.forwards && !used.has(r.name)).map((r) => r.name) };
}

/** What docs/deployment.md's table says for each served path; a path of a new kind is "unclassified". */
function documented(paths: string[], issuerPath: string, prefixes: string[], console: Decision): Record<string, Decision | 'unclassified'> {
  const under = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);
  return Object.fromEntries(
    paths.map((path) => {
      if (under(path, issuerPath)) return [path, 'forwarded'];
      if (under(path, '/manage')) return [path, console];
      if (prefixes.some((prefix) => under(path, `/${prefix}`))) return [path, 'internal only'];
      if (under(path, '/health') || path === '/' || path === '/favicon.ico') return [path, 'refused'];
      return [path, 'unclassified'];
    }),
  );
}

describe('the proxy configurations of docs/deployment.md against the routes gatehouse serves', async () => {
  const { paths, issuerPath, prefixes } = await servedPaths();
  const nginx = blocks('nginx');
  const caddy = blocks('caddy');

  test('the route list is read: every kind of route is there', () => {
    for (const path of ['/', '/health/ready', '/uas', '/uas/.well-known/openid-configuration', '/uas/oauth2/register', '/uas/theme/x', '/manage', '/manage/', '/manage/api/v1/users', '/customerid-rest/services/2.0/users/x', '/eidm2/services/users/x']) {
      assert.ok(paths.includes(path), path);
    }
    assert.deepEqual([nginx.length, caddy.length], [2, 2], 'a full configuration and the internal console variant, for each');
  });

  test('nginx: the issuer path and /manage/ are forwarded, the identity API only inside, nothing else; every location is used', () => {
    const { decisions, unused } = decide(nginxProxy(nginxServer(nginx[0]!.text)), paths);
    assert.deepEqual(decisions, documented(paths, issuerPath, prefixes, 'forwarded'));
    assert.deepEqual(unused, []);
  });

  test('Caddy: the same', () => {
    const { decisions, unused } = decide(caddyProxy(caddySite(caddy[0]!.text)), paths);
    assert.deepEqual(decisions, documented(paths, issuerPath, prefixes, 'forwarded'));
    assert.deepEqual(unused, []);
  });

  test('"Keeping the console internal": with its nginx location in place of /manage/, the console is internal only', () => {
    const [variant] = parseBlocks(nginx[1]!.text, false);
    assert.deepEqual(variant!.words, ['location', '/manage/']);
    const locations = nginxServer(nginx[0]!.text).map((l) => (l.words.join(' ') === variant!.words.join(' ') ? variant! : l));
    const { decisions, unused } = decide(nginxProxy(locations), paths);
    assert.deepEqual(decisions, documented(paths, issuerPath, prefixes, 'internal only'));
    assert.deepEqual(unused, []);
  });

  test('"Keeping the console internal": with its Caddy matcher in place of handle /manage*, the console is internal only', () => {
    const variant = parseBlocks(caddy[1]!.text, true);
    const site = caddySite(caddy[0]!.text).filter((s) => s.words.join(' ') !== 'handle /manage*');
    assert.equal(site.length, caddySite(caddy[0]!.text).length - 1, 'the variant replaces handle /manage*');
    const { decisions, unused } = decide(caddyProxy([...site, ...variant]), paths);
    assert.deepEqual(decisions, documented(paths, issuerPath, prefixes, 'internal only'));
    assert.deepEqual(unused, []);
  });
});
