/**
 * The Node.js version check that runs before any TypeScript is loaded. gatehouse runs its .ts
 * files on Node's type stripping (Node 24): an older Node fails while loading the first .ts file,
 * with ERR_UNKNOWN_FILE_EXTENSION, before any of our code could explain. This plain .js file is
 * loaded first by bin/gatehouse.js (the CLI and `gatehouse serve`) and by `npm start` and
 * `npm test` (`node scripts/require-node.js && node …`), and stops an older Node with one line.
 *
 * Written for old Nodes: no syntax or API newer than Node 12.
 * Keep REQUIRED_MAJOR in step with package.json "engines" and .nvmrc (test/cli/node-guard.test.ts checks).
 */

export const REQUIRED_MAJOR = 24;

/** The one line an older Node gets, or undefined when `version` (e.g. "20.20.2") will do. */
export function nodeVersionProblem(version, execPath) {
  const major = Number(String(version).replace(/^v/, '').split('.')[0]);
  if (major >= REQUIRED_MAJOR) return undefined;
  return (
    'gatehouse: Node.js ' + REQUIRED_MAJOR + ' or later is needed, but this is Node.js v' + String(version).replace(/^v/, '') +
    ' (' + execPath + '). Install Node.js ' + REQUIRED_MAJOR + ' (`nvm install` reads .nvmrc; README.md, "Installing Node.js 24") and run again.'
  );
}

const problem = nodeVersionProblem(process.versions.node, process.execPath);
if (problem !== undefined) {
  process.stderr.write(problem + '\n');
  // 2, as every other error of the gatehouse command (docs/cli.md).
  process.exit(2);
}
