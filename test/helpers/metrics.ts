/** Scraping gatehouse's Prometheus exposition in tests. */

/** Every sample of an exposition: `name{label="value",…}` (labels sorted) → value. */
export function parseExposition(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const labels = [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map(([, name, value]) => `${name}="${value}"`).sort();
    samples.set(labels.length > 0 ? `${match[1]}{${labels.join(',')}}` : match[1]!, Number(match[3]));
  }
  return samples;
}

/** The metric families an exposition declares (`# TYPE name type`). */
export function metricNames(text: string): string[] {
  return [...text.matchAll(/^# TYPE (\S+) \S+$/gm)].map((m) => m[1]!);
}

export async function scrape(url: string, token?: string): Promise<{ status: number; contentType: string | null; text: string }> {
  const response = await fetch(url, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, contentType: response.headers.get('content-type'), text: await response.text() };
}
