/**
 * `gatehouse theme check`: validates a login-page theme (docs/theming.md) the way the server does
 * at start-up, without starting it: the folder of `--dir`, else GATEHOUSE_THEME_DIR. An invalid
 * theme is reported as the server would report it (file and field) and exits 2.
 */
import type { Command } from 'commander';
import { loadConfig } from '../config.ts';
import { configuredTheme, loadTheme, type Theme } from '../http/interaction/theme.ts';
import { printFields, printJson } from './output.ts';

export function registerThemeCommands(program: Command): void {
  const theme = program.command('theme').description('login-page themes (docs/theming.md)');
  theme
    .command('check')
    .description('validate a theme folder as the server does at start-up: --dir, else GATEHOUSE_THEME_DIR')
    .option('--dir <dir>', 'the theme folder (default: GATEHOUSE_THEME_DIR)')
    .option('--json', 'print JSON only')
    .action((flags: { dir?: string; json?: boolean }) => {
      const checked = flags.dir === undefined ? configuredTheme(loadConfig()) : loadTheme(flags.dir);
      if (checked === undefined) throw new Error('no theme to check: give --dir or set GATEHOUSE_THEME_DIR');
      const report = themeReport(checked);
      if (flags.json) return printJson(report);
      printFields([
        ['folder', report.folder],
        ['product name', report.product_name],
        ['files', report.files.map((f) => `${f.name} (${f.bytes} bytes)`)],
        ...Object.entries(report.texts).map(([locale, keys]): [string, unknown] => [`texts ${locale}`, keys.length === 0 ? '-' : `${keys.length} overridden`]),
        ['result', 'valid'],
      ]);
    });
}

/** What the check found: the files that would be served under `<issuer>/theme/` and the overridden texts. */
export function themeReport(theme: Theme) {
  return {
    valid: true,
    folder: theme.dir,
    product_name: theme.productName,
    files: [...theme.assets.values()].map((a) => ({ name: a.name, content_type: a.contentType, bytes: a.body.length })),
    texts: theme.overridden,
  };
}
