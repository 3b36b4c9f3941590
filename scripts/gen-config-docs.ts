// Writes docs/configuration.md from the settings table in src/config.ts.
import { writeFileSync } from 'node:fs';
import { configurationDocs } from '../src/config.ts';

writeFileSync(new URL('../docs/configuration.md', import.meta.url), configurationDocs());
process.stdout.write('docs/configuration.md written\n');
