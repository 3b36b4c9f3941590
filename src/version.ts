/** gatehouse's version: package.json's, the one source (`gatehouse --version`, the start-up log line). */
import pkg from '../package.json' with { type: 'json' };

export const VERSION: string = pkg.version;
