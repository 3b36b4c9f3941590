/**
 * Mutations of a valid request's parameters, as fast-check arbitraries: drop, duplicate, replace
 * a value or a name, add a parameter, make a value overlong, flip a character, change a name's
 * case, swap two values — then put the result on the wire one of several ways.
 */
import fc from 'fast-check';
import { CONTENT_TYPES, encodePairs, hostileString, type Encoding } from './harness.ts';

export type Pairs = [string, string][];

export type Mutation =
  | { kind: 'drop'; at: number }
  | { kind: 'duplicate'; at: number; value: string | undefined }
  | { kind: 'value'; at: number; value: string }
  | { kind: 'name'; at: number; name: string }
  | { kind: 'add'; name: string; value: string }
  | { kind: 'overlong'; at: number; times: number }
  | { kind: 'flip'; at: number; position: number; char: string }
  | { kind: 'case'; at: number }
  | { kind: 'swap'; at: number; other: number }
  | { kind: 'append'; at: number; suffix: string };

export function mutation(knownNames: readonly string[]): fc.Arbitrary<Mutation> {
  const at = fc.nat(40);
  const name = fc.oneof(fc.constantFrom(...knownNames), hostileString());
  return fc.oneof(
    fc.record({ kind: fc.constant('drop' as const), at }),
    fc.record({ kind: fc.constant('duplicate' as const), at, value: fc.option(hostileString(), { nil: undefined }) }),
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('value' as const), at, value: hostileString() }) },
    fc.record({ kind: fc.constant('name' as const), at, name }),
    fc.record({ kind: fc.constant('add' as const), name, value: hostileString() }),
    fc.record({ kind: fc.constant('overlong' as const), at, times: fc.constantFrom(2, 100, 5000) }),
    fc.record({ kind: fc.constant('flip' as const), at, position: fc.nat(100), char: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) }),
    fc.record({ kind: fc.constant('case' as const), at }),
    fc.record({ kind: fc.constant('swap' as const), at, other: at }),
    fc.record({ kind: fc.constant('append' as const), at, suffix: fc.constantFrom('%00', '%FF', '\u0000', '\r\n', ' ', '😀', '\ud800', '%', '&x=1', '#', '=') }),
  );
}

export function applyMutations(valid: readonly (readonly [string, string])[], mutations: readonly Mutation[]): Pairs {
  const pairs: Pairs = valid.map(([n, v]) => [n, v]);
  for (const m of mutations) {
    const i = pairs.length === 0 ? -1 : 'at' in m ? m.at % pairs.length : -1;
    const target = i >= 0 ? pairs[i]! : undefined;
    switch (m.kind) {
      case 'drop':
        if (target) pairs.splice(i, 1);
        break;
      case 'duplicate':
        if (target) pairs.splice(i + 1, 0, [target[0], m.value ?? target[1]]);
        break;
      case 'value':
        if (target) target[1] = m.value;
        break;
      case 'name':
        if (target) target[0] = m.name;
        break;
      case 'add':
        pairs.push([m.name, m.value]);
        break;
      case 'overlong':
        if (target) target[1] = (target[1] || 'x').repeat(m.times).slice(0, 80_000);
        break;
      case 'flip':
        if (target) {
          const p = target[1].length === 0 ? 0 : m.position % target[1].length;
          target[1] = target[1].slice(0, p) + m.char + target[1].slice(p + 1);
        }
        break;
      case 'case':
        if (target) target[0] = target[0] === target[0].toUpperCase() ? target[0].toLowerCase() : target[0].toUpperCase();
        break;
      case 'swap': {
        const j = pairs.length === 0 ? -1 : m.other % pairs.length;
        if (target && j >= 0) [target[1], pairs[j]![1]] = [pairs[j]![1], target[1]];
        break;
      }
      case 'append':
        if (target) target[1] += m.suffix;
        break;
    }
  }
  return pairs;
}

export const encoding: fc.Arbitrary<Encoding> = fc.oneof(
  { weight: 6, arbitrary: fc.constant('proper' as const) },
  { weight: 2, arbitrary: fc.constant('raw' as const) },
  { weight: 1, arbitrary: fc.constant('percent-all' as const) },
);

/** Mostly the right content type, sometimes any other. */
export const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 6, arbitrary: fc.constant('application/x-www-form-urlencoded') },
  { weight: 2, arbitrary: fc.constantFrom<string | undefined>(...CONTENT_TYPES, undefined) },
);

export interface Plan {
  mutations: Mutation[];
  encoding: Encoding;
}

/** A set of mutations (possibly none) to apply to a valid request, and how to send the result. */
export function plan(knownNames: readonly string[], maxMutations = 4): fc.Arbitrary<Plan> {
  return fc.record({ mutations: fc.array(mutation(knownNames), { maxLength: maxMutations }), encoding });
}

export interface Mutated {
  pairs: Pairs;
  /** The pairs as a query string or form body, in the plan's encoding. */
  wire: string;
  encoding: Encoding;
}

/** The mutated pairs of `valid` and their wire form. */
export function build(valid: readonly (readonly [string, string])[], how: Plan): Mutated {
  const pairs = applyMutations(valid, how.mutations);
  return { pairs, wire: encodePairs(pairs, how.encoding), encoding: how.encoding };
}

/** Everything a response could legitimately echo back, for assertSafeResponse. */
export function sentText(pairs: readonly (readonly [string, string])[], ...more: string[]): string {
  return [...pairs.flat(), ...more].join('\n');
}
