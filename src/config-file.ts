/**
 * The optional configuration file (`GATEHOUSE_CONFIG=path`): the same settings as the environment,
 * under the same names (the variables of docs/configuration.md), in YAML or JSON. It only fills in
 * what the environment leaves unset, so a deployment can keep its defaults in a file and still
 * override one value per run. A key that names no setting is refused rather than ignored: a typo
 * would otherwise silently leave a security setting at its default.
 */
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { closest } from './lib/similar.ts';

export type RawSettings = Record<string, string>;

/** The variable that names the file; it cannot be set inside the file itself. */
export const CONFIG_FILE_VARIABLE = 'GATEHOUSE_CONFIG';

/**
 * Reads the file into raw setting strings, as the environment would carry them. `known` maps each
 * variable name to its type (docs/configuration.md); a `list` may be written as a sequence.
 * Throws an Error whose message says what is wrong, for the caller to attribute to GATEHOUSE_CONFIG.
 */
export function readConfigFile(path: string, known: ReadonlyMap<string, string>): RawSettings {
  const format = extname(path).toLowerCase();
  if (!['.json', '.yaml', '.yml'].includes(format)) throw new Error(`${path}: the file name must end in .yaml, .yml or .json`);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, { cause: error });
  }
  let document: unknown;
  try {
    // YAML 1.2's core schema: `yes`/`on` stay strings (the boolean settings accept them anyway),
    // and a key given twice is an error, not a silent last-one-wins.
    document = format === '.json' ? JSON.parse(text) : parseYaml(text, { schema: 'core', uniqueKeys: true });
  } catch (error) {
    throw new Error(`${path}: is not valid ${format === '.json' ? 'JSON' : 'YAML'}: ${(error as Error).message.split('\n')[0]}`, { cause: error });
  }
  if (document === null || document === undefined) return {};
  if (typeof document !== 'object' || Array.isArray(document)) throw new Error(`${path}: must be a mapping of setting names to values`);

  const out: RawSettings = {};
  for (const [key, value] of Object.entries(document as Record<string, unknown>)) {
    if (key === CONFIG_FILE_VARIABLE) throw new Error(`${path}: ${key} cannot be set inside the configuration file`);
    const type = known.get(key);
    if (type === undefined) throw new Error(`${path}: unknown setting "${key}"${suggestion(key, known)}; the keys are the variable names of docs/configuration.md`);
    // null (`KEY:` with nothing after it) leaves the setting unset, as an empty variable does.
    if (value === null) continue;
    out[key] = scalar(path, key, type, value);
  }
  return out;
}

function scalar(path: string, key: string, type: string, value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (Array.isArray(value) && type === 'list' && value.every((item) => typeof item === 'string')) {
    if (value.some((item) => item.includes(','))) throw new Error(`${path}: ${key}: an entry of the list contains a comma`);
    return value.join(',');
  }
  throw new Error(`${path}: ${key}: must be a string, number or boolean${type === 'list' ? ', or a list of strings' : ''}`);
}

/**
 * The setting `name` probably means, among the variable names `known`: `databaseUrl`,
 * `database_url` and `gatehouse_database_url` name GATEHOUSE_DATABASE_URL, and GATEHOUSE_WORKRES is
 * a typing slip away from GATEHOUSE_WORKERS. The common prefix is left out of the comparison, or
 * every name would look close to every other.
 */
export function similarSetting(name: string, known: Iterable<string>): string | undefined {
  const normal = name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase().replace(/[^A-Z0-9]/g, '_');
  const bare = normal.startsWith(PREFIX) ? normal.slice(PREFIX.length) : normal;
  const match = closest(bare, [...known].map((variable) => variable.slice(PREFIX.length)));
  return match === undefined ? undefined : `${PREFIX}${match}`;
}

const PREFIX = 'GATEHOUSE_';

function suggestion(key: string, known: ReadonlyMap<string, string>): string {
  const similar = similarSetting(key, known.keys());
  return similar === undefined ? '' : ` (did you mean ${similar}?)`;
}
