import { DISPLAYS, type Display } from './request.ts';

/**
 * display (OIDC Core §3.1.2.1) picks the login template. `wap` and values we do not know fall back
 * to the full page: an optional parameter never causes an error (OIDC certification AZ-09).
 */
export function checkDisplay(value: string | undefined): Display {
  return (DISPLAYS as readonly string[]).includes(value ?? '') ? (value as Display) : 'page';
}
