/**
 * A raw HTTP/1.1 client for tests that must send what fetch refuses to: any bytes in the request
 * line, CR/LF or NUL in header values, any body under any content type, headers over the server's
 * limit. One request per connection (`Connection: close`); the answer is read until the server
 * closes, so a server that never answers is a failure ("no complete answer"), not a hung test.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", " (set-cookie kept apart in setCookies). */
  headers: Record<string, string>;
  setCookies: string[];
  body: string;
}

export interface RawRequest {
  method: string;
  /** The request target, sent as is (latin1: one byte per character). */
  target: string;
  /** Header lines, sent as is: name and value may hold anything, CR/LF included. */
  headers?: [string, string][];
  body?: Buffer | string;
}

const RAW_TIMEOUT_MS = 10_000;

/** One request on its own connection (`Connection: close`); rejects on a hang or a broken answer. */
export function send(port: number, request: RawRequest): Promise<RawResponse> {
  const body = request.body === undefined ? undefined : Buffer.isBuffer(request.body) ? request.body : Buffer.from(request.body, 'utf8');
  const lines = [`${request.method} ${request.target} HTTP/1.1`, `host: 127.0.0.1:${port}`, 'connection: close'];
  for (const [name, value] of request.headers ?? []) lines.push(`${name}: ${value}`);
  if (body !== undefined) lines.push(`content-length: ${body.length}`);
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${RAW_TIMEOUT_MS} ms to ${request.method} ${request.target.slice(0, 200)}`));
    }, RAW_TIMEOUT_MS);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {
      // A reset after the answer (the server closes a connection it refused) is fine; no answer is caught below.
    });
    socket.on('close', () => {
      clearTimeout(timer);
      try {
        resolve(parseResponse(Buffer.concat(chunks), request.method));
      } catch (error) {
        reject(error instanceof Error ? new Error(`${error.message} (to ${request.method} ${request.target.slice(0, 200)})`) : error);
      }
    });
    socket.write(body === undefined ? head : Buffer.concat([head, body]));
  });
}

/** The answer in `bytes` (interim 1xx answers skipped); throws when they hold no whole answer. */
export function parseResponse(bytes: Buffer, method: string): RawResponse {
  // Interim answers (100 Continue to `Expect: 100-continue`) come before the real one.
  while (/^HTTP\/1\.1 1\d\d /.test(bytes.subarray(0, 13).toString('latin1'))) {
    const interimEnd = bytes.indexOf('\r\n\r\n');
    if (interimEnd === -1) break;
    bytes = bytes.subarray(interimEnd + 4);
  }
  const end = bytes.indexOf('\r\n\r\n');
  if (end === -1) throw new Error(`no HTTP answer (${bytes.length} bytes received)`);
  const [statusLine = '', ...headerLines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const match = /^HTTP\/1\.1 (\d{3})(?: .*)?$/.exec(statusLine);
  if (!match) throw new Error(`not an HTTP/1.1 status line: ${JSON.stringify(statusLine)}`);
  const headers: Record<string, string> = {};
  const setCookies: string[] = [];
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'set-cookie') setCookies.push(value);
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  let payload = bytes.subarray(end + 4);
  // A HEAD answer has no body — unless Node refused the request before knowing it was a HEAD.
  if (method === 'HEAD' && payload.length === 0) return { status: Number(match[1]), headers, setCookies, body: '' };
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) payload = dechunk(payload);
  else if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    assert.ok(payload.length >= length, `body shorter than its content-length (${payload.length} < ${length})`);
    payload = payload.subarray(0, length);
  }
  return { status: Number(match[1]), headers, setCookies, body: payload.toString('utf8') };
}

function dechunk(bytes: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    if (lineEnd === -1) throw new Error('truncated chunked body');
    const size = parseInt(bytes.subarray(at, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size)) throw new Error('bad chunk size');
    if (size === 0) return Buffer.concat(parts);
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}
