/**
 * Content negotiation for the identity API (RFC 9110 §12.5.1): XML when the client prefers
 * `application/xml` (or `text/xml`) over JSON, otherwise the route's default. A client that
 * accepts neither still gets the default rather than a 406: an error body it can read beats none.
 */
export type Format = 'json' | 'xml';

interface MediaRange {
  type: string;
  q: number;
}

function parseAccept(header: string): MediaRange[] {
  return header.split(',').flatMap((part) => {
    const [range, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (!range) return [];
    let q = 1;
    for (const param of params) {
      const match = /^q=([01](?:\.\d{0,3})?)$/.exec(param);
      if (match) q = Number(match[1]);
    }
    return [{ type: range, q }];
  });
}

/** The quality the client gives `type`: its most specific matching range wins (RFC 9110 §12.5.1). */
function quality(ranges: MediaRange[], type: string): number {
  const [major] = type.split('/');
  const exact = ranges.find((r) => r.type === type);
  if (exact) return exact.q;
  const partial = ranges.find((r) => r.type === `${major}/*`);
  if (partial) return partial.q;
  return ranges.find((r) => r.type === '*/*')?.q ?? 0;
}

export function preferredFormat(accept: string | undefined, fallback: Format): Format {
  if (accept === undefined || accept.trim() === '') return fallback;
  const ranges = parseAccept(accept.slice(0, 1024));
  // text/xml counts only when named: through a wildcard it would outrank an explicit `application/xml;q=0`.
  const namesTextXml = ranges.some((r) => r.type === 'text/xml');
  const xml = Math.max(quality(ranges, 'application/xml'), namesTextXml ? quality(ranges, 'text/xml') : 0);
  const json = quality(ranges, 'application/json');
  if (xml > json) return 'xml';
  if (json > xml) return 'json';
  return fallback;
}
