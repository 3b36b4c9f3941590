/**
 * How the CLI prints: with --json, exactly one JSON document on stdout and nothing else; without
 * it, short text in aligned columns for people.
 */

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** `label  value` lines with the values aligned; arrays are joined, absent values shown as "-". */
export function printFields(fields: [label: string, value: unknown][]): void {
  const width = Math.max(...fields.map(([label]) => label.length));
  for (const [label, value] of fields) process.stdout.write(`${label.padEnd(width)}  ${shown(value)}\n`);
}

/** A table with a header row; a note instead when there are no rows. */
export function printTable(headers: string[], rows: unknown[][], empty: string): void {
  if (rows.length === 0) {
    process.stdout.write(`${empty}\n`);
    return;
  }
  const cells = [headers, ...rows.map((row) => row.map(shown))];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  for (const row of cells) {
    const line = row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0))).join('  ');
    process.stdout.write(`${line.trimEnd()}\n`);
  }
}

/** A line for people, e.g. "Deleted client …"; suppressed by --json, which prints a document instead. */
export function printLine(text: string): void {
  process.stdout.write(`${text}\n`);
}

export function isoTime(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : new Date(ms).toISOString();
}

function shown(value: unknown): string {
  if (value === undefined || value === null || value === '') return '-';
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.map(shown).join(', ');
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
