#!/usr/bin/env node
// First, before any .ts file is loaded: an older Node stops here with one line (bin/require-node.js).
import './require-node.js';

// Node's on-disk compile cache makes every later start of the CLI about a third faster.
// Looked up rather than imported by name: a missing named export would fail before the check above.
const nodeModule = await import('node:module');
nodeModule.enableCompileCache?.();

// The checkout runs its TypeScript directly. The package made by `npm pack` carries no src/ but
// dist/, the same modules compiled at pack time (scripts/build-package.ts): Node does not strip
// types under node_modules, where the package is installed.
const { existsSync } = await import('node:fs');
const source = new URL('../src/cli/main.ts', import.meta.url);
const built = new URL('../dist/cli/main.js', import.meta.url);
if (existsSync(source)) await import(source.href);
else if (existsSync(built)) await import(built.href);
else {
  process.stderr.write('gatehouse: neither src/ nor dist/ is here: a package made with `npm pack --ignore-scripts` lacks the JavaScript its prepack script builds; pack it again without that flag.\n');
  process.exit(2);
}
