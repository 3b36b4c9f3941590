/**
 * The peer's storage: an in-memory adapter (oidc-provider's documented Adapter interface:
 * upsert, find, findByUserCode, findByUid, consume, destroy, revokeByGrantId) that keeps every
 * entry until it expires, as a database would. The package's own quick-start adapter is an LRU of
 * 1,000 entries: at thousands of grants a second it drops tokens and device codes within a second
 * (polled device codes come back `invalid_grant`), and evicting is cheaper than keeping, which
 * would flatter the peer. Still nothing here is written to disk, unlike gatehouse's SQLite store.
 */

type Payload = Record<string, unknown> & { grantId?: string; userCode?: string; uid?: string; consumed?: number };

const entries = new Map<string, { payload: Payload; expiresAt: number }>();
/** `Model:userCode` / `Model:uid` → id. */
const secondary = new Map<string, string>();
/** grantId → keys of the entries issued under that grant (RFC 7009 §2.1 revokes them together). */
const byGrant = new Map<string, Set<string>>();

// Expired entries go every minute (a device code lives 10 minutes, a token an hour).
setInterval(() => {
  const now = Date.now();
  for (const [key, entry] of entries) if (entry.expiresAt <= now) entries.delete(key);
}, 60_000).unref();

export class MapAdapter {
  readonly #model: string;

  constructor(model: string) {
    this.#model = model;
  }

  #key(id: string): string {
    return `${this.#model}:${id}`;
  }

  async upsert(id: string, payload: Payload, expiresIn: number | undefined): Promise<void> {
    const key = this.#key(id);
    entries.set(key, { payload, expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : Infinity });
    if (payload.grantId) {
      let keys = byGrant.get(payload.grantId);
      if (!keys) byGrant.set(payload.grantId, (keys = new Set()));
      keys.add(key);
    }
    if (payload.userCode) secondary.set(`${this.#model}:userCode:${payload.userCode}`, id);
    if (payload.uid) secondary.set(`${this.#model}:uid:${payload.uid}`, id);
  }

  async find(id: string): Promise<Payload | undefined> {
    const key = this.#key(id);
    const entry = entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      entries.delete(key);
      return undefined;
    }
    return entry.payload;
  }

  async findByUserCode(userCode: string): Promise<Payload | undefined> {
    const id = secondary.get(`${this.#model}:userCode:${userCode}`);
    return id === undefined ? undefined : this.find(id);
  }

  async findByUid(uid: string): Promise<Payload | undefined> {
    const id = secondary.get(`${this.#model}:uid:${uid}`);
    return id === undefined ? undefined : this.find(id);
  }

  async consume(id: string): Promise<void> {
    const entry = entries.get(this.#key(id));
    if (entry) entry.payload.consumed = Math.floor(Date.now() / 1000);
  }

  async destroy(id: string): Promise<void> {
    entries.delete(this.#key(id));
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    for (const key of byGrant.get(grantId) ?? []) entries.delete(key);
    byGrant.delete(grantId);
  }
}
