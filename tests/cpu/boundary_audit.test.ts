// The kernel boundary is the only door to kernel memory (Note [Kernel boundary] in core/cpu/boundary.ts): this
// reads the sources and checks that no other file computes kernel addresses, calls kernel exports or makes
// views of the shared memory itself.
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
    return name.endsWith('.ts') || (name.endsWith('.js') && name !== 'kernels_wasm.js') ? [path] : [];
  });
}

/** Lines of code (JSDoc and comment lines left out: examples there may show the raw calls). */
function codeLines(path: string): Array<[number, string]> {
  return readFileSync(path, 'utf8').split('\n').map((line, i) => [i + 1, line] as [number, string]).filter(
    ([, line]) => !/^\s*(\*|\/\/|\/\*\*)/.test(line),
  );
}

interface Rule {
  readonly what: string;
  readonly pattern: RegExp;
  /** Files (relative to the repository root) allowed to match. */
  readonly allowed: readonly string[];
}

const RULES: readonly Rule[] = [
  {
    what: 'reads a storage address',
    pattern: /\.ptr\b/,
    // core/workers/shared_storage.ts publishes a shared storage's block to the other agents (its header).
    allowed: ['core/cpu/boundary.ts', 'core/tensor/storage.ts', 'core/workers/shared_storage.ts'],
  },
  {
    what: 'reaches the kernel exports without the boundary',
    pattern: /(cpuRuntime\(\)|\brt|\bruntime)\.kernels\b|instantiateKernels\(/,
    allowed: ['core/cpu/boundary.ts', 'core/cpu/runtime.ts', 'core/cpu/wasm.ts'],
  },
  {
    what: 'views the shared kernel memory',
    pattern: /memory\.buffer/,
    allowed: [
      'core/cpu/boundary.ts',
      'core/cpu/runtime.ts',
      'core/cpu/allocator.ts',
      'core/cpu/guarded_allocator.ts',
      'core/cpu/wasm.ts', // makes the memory; only asks whether its buffer is shared
      // The memory shared by agents: the control block, the page pool, host views of shared blocks.
      'core/workers/shared_runtime.ts',
      'core/workers/shared_storage.ts',
    ],
  },
  {
    what: 'reads a storage block directly',
    pattern: /storage\.bytes\(\)/,
    allowed: ['core/cpu/boundary.ts', 'core/tensor/tensor.ts'],
  },
  {
    what: 'uses the allocator directly',
    pattern: /\.allocator\.(alloc|free)\(/,
    // core/workers/shared_runtime.ts re-registers the CPU allocator of an agent that shares its memory.
    allowed: ['core/cpu/boundary.ts', 'core/cpu/runtime.ts', 'core/workers/shared_runtime.ts'],
  },
];

describe('the kernel boundary audit', () => {
  const files = sources(join(root, 'core'));

  it('finds the sources it audits', () => {
    assert.ok(files.some((f) => f.endsWith(join('core', 'cpu', 'elementwise.ts'))));
    assert.ok(files.length > 50);
  });

  for (const rule of RULES) {
    it(`no file outside the boundary ${rule.what}`, () => {
      const offenders: string[] = [];
      for (const file of files) {
        const rel = relative(root, file).split('\\').join('/');
        if (rule.allowed.includes(rel)) continue;
        for (const [line, text] of codeLines(file)) {
          if (rule.pattern.test(text)) offenders.push(`${rel}:${line}: ${text.trim()}`);
        }
      }
      assert.deepEqual(offenders, []);
    });
  }
});
