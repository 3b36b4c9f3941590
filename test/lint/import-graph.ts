// The import graph of src/: every relative import and re-export (type-only ones included, since the
// layers are about what a module may know, not only what it loads), and the cycles in it.
// Run `node test/lint/import-graph.ts` to print the cycles.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Each file of src/ (relative to the repository, tests left out) → the files of src/ it imports. */
export function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(join(ROOT, 'src'))) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, false);
    const targets = importedFiles
      .map((imported) => imported.fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => relative(ROOT, resolve(dirname(file), name)));
    graph.set(relative(ROOT, file), [...new Set(targets)].sort());
  }
  return graph;
}

/** The strongly connected components with more than one file (Tarjan), each sorted, largest first. */
export function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return found.sort((a, b) => b.length - a.length || a[0]!.localeCompare(b[0]!));
}

/** The top-level part of src/ a file belongs to: `oauth`, `http`, or `config.ts` for a file at the root. */
export function layerOf(file: string): string {
  return file.split('/')[1]!;
}

/** The graph between the top-level parts of src/ (an import of package.json and the like left out). */
export function layerGraph(graph: Map<string, string[]>): Map<string, string[]> {
  const layers = new Map<string, Set<string>>();
  for (const [from, targets] of graph) {
    const arrows = layers.get(layerOf(from)) ?? new Set<string>();
    for (const to of targets) if (to.startsWith('src/') && layerOf(to) !== layerOf(from)) arrows.add(layerOf(to));
    layers.set(layerOf(from), arrows);
  }
  return new Map([...layers].map(([layer, arrows]) => [layer, [...arrows].sort()]));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const graph = importGraph();
  for (const cycle of cycles(graph)) console.log(`files in a cycle (${cycle.length}):\n  ${cycle.join('\n  ')}`);
  for (const cycle of cycles(layerGraph(graph))) console.log(`layers in a cycle: ${cycle.join(', ')}`);
  for (const [layer, arrows] of layerGraph(graph)) console.log(`${layer} -> ${arrows.join(', ')}`);
}
