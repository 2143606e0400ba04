/**
 * The library loads in a browser: no module of it imports a `node:` built-in (a page cannot resolve one). Files are
 * reached through core/tensor/host_files.ts, which looks `node:fs` up only when a file is read or written.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.(ts|js)$/.test(path) ? [path] : []; // .js: plain JS modules such as the generated operator API
  });
}

describe('browser-safe sources', () => {
  it('no library module imports a node: built-in', () => {
    const files = [join(root, 'mod.ts'), ...sources(join(root, 'core')), ...sources(join(root, 'gpu'))];
    assert.ok(files.length > 50);
    assert.ok(files.some((f) => f.endsWith(join('core', 'ops', 'generated_api.js'))));
    const offenders = files.filter((file) =>
      /^\s*(import|export)\b[^;]*from\s*['"]node:/m.test(readFileSync(file, 'utf8'))
    ).map((file) => file.slice(root.length));
    assert.deepEqual(offenders, []);
  });
});
