/**
 * Keeps the pictures of docs/console.md honest: every image the page shows exists under docs/, is a
 * PNG (or JPEG) at the 1280×800 viewport `npm run screenshots` uses and under 200 KB; every
 * docs/images/console-* picture is shown (none left behind by a renamed page); and the page says
 * how to take them again, with a script package.json really has.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, normalize } from 'node:path';
import { test } from 'node:test';

const ROOT = join(import.meta.dirname, '..', '..');
const DOCS = join(ROOT, 'docs');
const DOC = readFileSync(join(DOCS, 'console.md'), 'utf8');
const MAX_BYTES = 200 * 1024;

/** Markdown images `![alt](path)` and HTML `<img src="path">`, relative to docs/. */
function imagesOf(markdown: string): { alt: string; path: string }[] {
  const markdownImages = [...markdown.matchAll(/!\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => ({ alt: m[1]!, path: m[2]! }));
  const htmlImages = [...markdown.matchAll(/<img\b[^>]*\bsrc="([^"]+)"[^>]*>/g)].map((m) => ({ alt: /\balt="([^"]*)"/.exec(m[0])?.[1] ?? '', path: m[1]! }));
  return [...markdownImages, ...htmlImages];
}

/** Width and height from a PNG's IHDR chunk or a JPEG's SOFn segment. */
function dimensions(bytes: Buffer): { type: 'png' | 'jpeg'; width: number; height: number } {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) && bytes.toString('latin1', 12, 16) === 'IHDR') {
    return { type: 'png', width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
  }
  if (bytes[0] === 0xff && bytes[1] === 0xd8) {
    for (let at = 2; at + 9 < bytes.length; ) {
      if (bytes[at] !== 0xff) break;
      const marker = bytes[at + 1]!;
      const length = bytes.readUInt16BE(at + 2);
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        return { type: 'jpeg', width: bytes.readUInt16BE(at + 7), height: bytes.readUInt16BE(at + 5) };
      }
      at += 2 + length;
    }
  }
  throw new Error('neither a PNG nor a JPEG');
}

test('every picture docs/console.md shows exists, at 1280×800 and under 200 KB, with alternative text', () => {
  const images = imagesOf(DOC);
  assert.ok(images.length >= 10, `the Screenshots section shows the main pages (found ${images.length})`);
  for (const image of images) {
    assert.doesNotMatch(image.path, /^[a-z]+:/i, `${image.path}: a file in the repository, not a URL`);
    const file = normalize(join(DOCS, image.path));
    assert.ok(file.startsWith(DOCS), `${image.path} stays under docs/`);
    assert.ok(existsSync(file), `docs/console.md shows ${image.path}, which does not exist`);
    const size = statSync(file).size;
    assert.ok(size <= MAX_BYTES, `${image.path} is ${size} bytes, more than ${MAX_BYTES}`);
    const { width, height } = dimensions(readFileSync(file));
    assert.deepEqual({ width, height }, { width: 1280, height: 800 }, `${image.path} is taken at the fixed viewport`);
    assert.notEqual(image.alt.trim(), '', `${image.path} has alternative text`);
  }
});

test('every console picture in docs/images is shown in docs/console.md', () => {
  const shown = new Set(imagesOf(DOC).map((image) => normalize(join(DOCS, image.path))));
  const pictures = readdirSync(join(DOCS, 'images')).filter((name) => /^console-.*\.(png|jpe?g)$/.test(name));
  assert.ok(pictures.length > 0);
  for (const name of pictures) assert.ok(shown.has(join(DOCS, 'images', name)), `docs/images/${name} is not shown in docs/console.md`);
});

test('docs/console.md says how to take the pictures again, and that script exists', () => {
  const screenshots = DOC.slice(DOC.indexOf('## Screenshots'));
  assert.match(screenshots, /`npm run screenshots`/);
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  assert.match(scripts.screenshots ?? '', /scripts\/console-screenshots\.ts/);
  assert.ok(existsSync(join(ROOT, 'scripts', 'console-screenshots.ts')));
});
