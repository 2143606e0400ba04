// The WebGPU kernel boundary is the only place where tensors become buffer bindings (Note [GPU kernel boundary]
// in gpu/boundary.ts): this reads the sources of gpu/ and checks that no other file reads a storage address,
// looks a buffer up in the pool or writes a queue directly.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.(ts|js)$/.test(name) ? [path] : []; // .js: plain JS modules such as the generated operator API
  });
}

const RULES = [
  { what: 'reads a storage address', pattern: /\.ptr\b/, allowed: ['gpu/boundary.ts'] },
  { what: 'looks a buffer up in the pool', pattern: /pool\.lookup\(/, allowed: ['gpu/boundary.ts'] },
  {
    what: 'writes device memory without the queue',
    pattern: /queue\.writeBuffer\(|\.device\.queue\b/,
    allowed: ['gpu/commands.ts', 'gpu/device.ts'],
  },
  {
    what: 'creates bind groups outside the pipeline cache',
    pattern: /createBindGroup\(/,
    allowed: ['gpu/pipelines.ts', 'gpu/device.ts'],
  },
] as const;

describe('the WebGPU kernel boundary audit', () => {
  const files = sources(join(root, 'gpu'));

  it('finds the sources it audits', () => {
    assert.ok(files.some((f) => f.endsWith(join('gpu', 'kernels', 'elementwise.ts'))));
    assert.ok(files.length > 15);
  });

  for (const rule of RULES) {
    it(`no file outside the boundary ${rule.what}`, () => {
      const offenders: string[] = [];
      for (const file of files) {
        const rel = relative(root, file).split('\\').join('/');
        if ((rule.allowed as readonly string[]).includes(rel)) continue;
        readFileSync(file, 'utf8').split('\n').forEach((text, i) => {
          if (!/^\s*(\*|\/\/)/.test(text) && rule.pattern.test(text)) offenders.push(`${rel}:${i + 1}: ${text.trim()}`);
        });
      }
      assert.deepEqual(offenders, []);
    });
  }
});
