/**
 * What every console page is given and how it answers. A page is data (method, path, section,
 * handler) in a registry (pages/index.ts); plugin.ts wraps each one with the session, CSRF and
 * error handling, so no page can forget them.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpDeps } from '../deps.ts';
import { ensureOk, type ApiAnswer, type ApiFieldError, type ManageApi } from './api.ts';
import { fill, type ConsoleMessageKey, type ConsoleMessages, type Locale } from './i18n.ts';

/** `GET /me` of the management API. */
export interface Me {
  role: 'admin' | 'reader';
  user_id?: string;
  username?: string;
  client_id: string;
}

/** The console's sections, in the main navigation's order. */
export interface ConsoleSection {
  key: string;
  /** Below /manage, e.g. `/clients`. */
  path: string;
  label: ConsoleMessageKey;
}

/** What a finished change says on the page it leads to (`?done=`). */
export const DONE_KEYS = ['created', 'saved', 'deleted', 'activated', 'deactivated', 'rotated', 'passwordSet', 'enabled', 'disabled', 'ended', 'withdrawn', 'added', 'removed', 'revoked', 'reset', 'renamed', 'redelivered', 'resetSent', 'approved', 'rejected', 'invited', 'resent', 'verificationSent'] as const;
export type DoneKey = (typeof DONE_KEYS)[number];

export interface PageCall {
  request: FastifyRequest;
  reply: FastifyReply;
  deps: HttpDeps;
  locale: Locale;
  t: ConsoleMessages;
  api: ManageApi;
  me: Me;
  /** Whether the caller may change things (the API decides; this only hides buttons). */
  canWrite: boolean;
  params: Record<string, string>;
  query: Record<string, unknown>;
  /** The posted form (POST only). */
  form: Record<string, unknown>;
  /** Renders `view` in the console's layout. */
  render(view: string, data: Record<string, unknown> & { title: string }, status?: number): FastifyReply;
  /** 303 to a console path (below /manage), with a `?done=` message when given. */
  redirect(path: string, done?: DoneKey): FastifyReply;
}

export interface ConsolePage {
  method: 'GET' | 'POST';
  /** Below /manage, in Fastify's syntax: `/clients/:id`. */
  path: string;
  /** The navigation entry shown as current. */
  section: string;
  handle(call: PageCall): Promise<FastifyReply>;
}

/** A single text field of a query or form: '' when absent, repeated or not text. */
export function field(source: Record<string, unknown>, name: string): string {
  const value = source[name];
  return typeof value === 'string' ? value : '';
}

/** Every value of a repeatable form field (checkboxes). */
export function fieldValues(source: Record<string, unknown>, name: string): string[] {
  const value = source[name];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : typeof value === 'string' ? [value] : [];
}

/** Lines of a textarea, trimmed, blank ones dropped. */
export function lines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

/**
 * The API's field errors by the form field they belong to: `redirect_uris[1]` is an error of the
 * `redirect_uris` field, shown as "redirect_uris[1]: message" so the line is named; an error of
 * the whole body (field '' or '/') goes under ''.
 */
export function errorsByField(errors: readonly ApiFieldError[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const error of errors) {
    const top = /^\/?([A-Za-z0-9_#-]*)/.exec(error.field)?.[1] ?? '';
    const text = error.field !== top && error.field !== `/${top}` ? `${error.field}: ${error.message}` : error.message;
    (out[top] ??= []).push(text);
  }
  return out;
}

/**
 * The field errors of a refused form: the problem's `errors[]` by field, or, when it names none,
 * its detail as an error of the whole form (under '').
 */
export function formErrors(body: unknown): Record<string, string[]> {
  const problem = (body ?? {}) as { detail?: unknown; errors?: unknown };
  const named = Array.isArray(problem.errors) ? (problem.errors as unknown[]).filter((e): e is ApiFieldError => typeof e === 'object' && e !== null && typeof (e as ApiFieldError).field === 'string' && typeof (e as ApiFieldError).message === 'string') : [];
  if (named.length > 0) return errorsByField(named);
  return { '': [typeof problem.detail === 'string' ? problem.detail : 'rejected'] };
}

/**
 * A JSON text area's text as a document, or the error to show under it: text that is not JSON is
 * refused here (naming where it broke); everything else is the API's to judge.
 */
function parseJsonField(t: ConsoleMessages, text: string): { ok: true; document: unknown } | { ok: false; errors: string[] } {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    return { ok: false, errors: [fill(t.invalidJson, { error: (error as Error).message })] };
  }
  // JSON.parse takes any depth, but sending the document on to the API (JSON.stringify) recurses
  // and would overflow the stack: refused here, far deeper than any real document goes.
  if (nestedDeeperThan(document, MAX_DOCUMENT_DEPTH)) return { ok: false, errors: [fill(t.jsonTooDeep, { max: String(MAX_DOCUMENT_DEPTH) })] };
  return { ok: true, document };
}

/** Levels of arrays and objects a JSON text area may nest (a policy or client metadata needs four). */
const MAX_DOCUMENT_DEPTH = 32;

/** Whether `value` nests arrays or objects more than `max` levels deep; without recursion. */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [next, depth] = stack.pop()!;
    if (typeof next !== 'object' || next === null) continue;
    if (depth + 1 > max) return true;
    for (const child of Object.values(next)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * The errors of a refused JSON document, for its one text area: every field error of the API's
 * problem with its JSON path (`access.groups: …`), or the problem's detail when it names none.
 */
function documentErrors(body: unknown): string[] {
  const problem = (body ?? {}) as { detail?: unknown; errors?: unknown };
  const named = Array.isArray(problem.errors) ? (problem.errors as { field?: unknown; message?: unknown }[]).filter((e) => typeof e?.message === 'string') : [];
  if (named.length > 0) return named.map((e) => (typeof e.field === 'string' && e.field !== '' ? `${e.field}: ${String(e.message)}` : String(e.message)));
  return [typeof problem.detail === 'string' ? problem.detail : 'rejected'];
}

/** What a page of one JSON text area (a policy, a client metadata document) shows. */
export interface DocumentForm {
  title: string;
  action: string;
  submit: string;
  cancel: string;
  /** The text area's label and hint. */
  label: string;
  hint: string;
  rows: number;
  text: string;
  errors?: string[];
  status?: number;
}

/** Renders a page of one JSON text area with its errors listed under it (templates/document-form.eta). */
export function renderDocumentForm(call: PageCall, form: DocumentForm): FastifyReply {
  const errors = form.errors ?? [];
  return call.render(
    'document-form',
    {
      title: form.title,
      action: form.action,
      submitLabel: form.submit,
      cancel: form.cancel,
      hasErrors: errors.length > 0,
      field: { name: 'document', label: form.label, type: 'textarea', rows: form.rows, value: form.text, hint: form.hint, errors, required: true },
    },
    form.status ?? 200,
  );
}

/**
 * Sends the posted JSON text area of a DocumentForm page to the API. Text that is not JSON, a
 * document `check` refuses (its error), or the API's 400 or 409 answer the same page again with
 * the errors under the text area and what was typed kept; any other refusal is an ApiError (the
 * plugin's page for it); otherwise the API's answer.
 */
export async function submitDocument<T = Record<string, unknown>>(
  call: PageCall,
  form: Omit<DocumentForm, 'text' | 'errors' | 'status'>,
  send: (document: unknown) => Promise<ApiAnswer>,
  check: (document: unknown) => string | undefined = () => undefined,
): Promise<{ ok: true; body: T } | { ok: false; page: FastifyReply }> {
  const text = field(call.form, 'document');
  const refuse = (errors: string[], status: number) => ({ ok: false as const, page: renderDocumentForm(call, { ...form, text, errors, status }) });
  const parsed = parseJsonField(call.t, text);
  if (!parsed.ok) return refuse(parsed.errors, 400);
  const problem = check(parsed.document);
  if (problem !== undefined) return refuse([problem], 400);
  const answer = await send(parsed.document);
  if (answer.status === 400 || answer.status === 409) return refuse(documentErrors(answer.body), answer.status);
  return { ok: true, body: ensureOk<T>(answer) };
}
