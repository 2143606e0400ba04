// Checked mode (core/cpu/guarded_allocator.ts): guard bytes around every block catch writes just outside it, in
// either direction and at any distance within the guards, when verified after a kernel or at free; and the test
// suite itself runs in checked mode.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Allocator } from '../../core/cpu/allocator.ts';
import { GuardedAllocator, GuardViolationError } from '../../core/cpu/guarded_allocator.ts';
import { CHECKED_ENV_VAR, cpuRuntime, isCpuChecked, verifyCpuGuards } from '../../core/cpu/runtime.ts';
import { kernels } from '../../core/cpu/boundary.ts';
import { readEnv } from '../../core/dispatch/env.ts';
import { tensor } from '../../mod.ts';
import { rng } from '../ops/_helpers.ts';

function guarded(pages = 64) {
  const memory = new WebAssembly.Memory({ initial: 1, maximum: pages, shared: true });
  const allocator = new GuardedAllocator(new Allocator({ memory, base: 0, maximumBytes: pages * 65536 }), memory);
  return { memory, allocator, bytes: () => new Uint8Array(memory.buffer) };
}

describe('GuardedAllocator', () => {
  it('hands out 64-byte-aligned blocks of the requested size that can be written in full', () => {
    const { allocator, bytes } = guarded();
    const next = rng(21);
    for (let i = 0; i < 200; i++) {
      const n = Math.floor(next() * 3000);
      const p = allocator.alloc(n);
      assert.equal(p % 64, 0);
      assert.equal(allocator.usableSize(p), n);
      bytes().fill(0x5a, p, p + n);
      allocator.verify('filling whole blocks');
      if (next() < 0.5) allocator.free(p);
    }
  });

  it('catches a changed byte anywhere in the guards on either side, naming where it was found', () => {
    const { allocator, bytes } = guarded();
    for (const n of [0, 1, 3, 10, 63, 64, 100, 4097]) {
      const p = allocator.alloc(n);
      const q = allocator.alloc(7); // a neighbour
      for (const offset of [-64, -33, -1, n, n + 1, n + 2, n + 3, n + 40]) {
        const b = bytes(), old = b[p + offset];
        b[p + offset] = old ^ 0x10;
        assert.throws(
          () => allocator.verify('kernel demo_kernel'),
          (e: Error) =>
            e instanceof GuardViolationError &&
            e.message.includes('(detected after kernel demo_kernel)') &&
            e.message.includes(`byte ${offset} of the ${n}-byte block at ${p}`) &&
            e.message.includes(offset < 0 ? 'before its start' : 'past its end'),
          `n=${n} offset=${offset}`,
        );
        b[p + offset] = old;
      }
      allocator.verify('restored');
      allocator.free(q);
      allocator.free(p);
    }
  });

  it('catches a guard copied from a neighbour (the pattern depends on the address)', () => {
    const { allocator, bytes } = guarded();
    const a = allocator.alloc(100), b = allocator.alloc(100);
    const mem = bytes();
    const saved = mem.slice(b + 100, b + 164);
    mem.copyWithin(b + 100, a + 100, a + 164); // b's trailing guard overwritten with a's
    assert.throws(() => allocator.verify('copy'), GuardViolationError);
    mem.set(saved, b + 100);
    allocator.verify('restored');
  });

  it('verifies a block when it is freed, and reports the caller’s request when memory runs out', () => {
    const { allocator, bytes } = guarded(4);
    const p = allocator.alloc(32);
    bytes()[p + 32] = 0;
    assert.throws(() => allocator.free(p), /detected after free\): byte 32 of the 32-byte block/);
    assert.throws(
      () => allocator.alloc(1 << 20),
      (e: Error) => e instanceof RangeError && /tried to allocate 1\.00 MiB \(1048576 bytes\)/.test(e.message),
    );
    assert.throws(() => allocator.alloc(-1), RangeError);
    assert.throws(() => allocator.free(12345), /not a live allocation/);
  });
});

describe('checked mode of the CPU runtime', () => {
  it('is on for the test suite (npm test sets SWITCHYARD_CHECKED=1)', () => {
    if (readEnv(CHECKED_ENV_VAR) !== '1') return; // running a file by hand without the variable
    assert.equal(isCpuChecked(), true);
  });

  it('names the kernel that wrote past the block it was given', () => {
    if (!isCpuChecked()) return;
    const t = tensor(new Float32Array([1, 2, 3]));
    const bytes = new Uint8Array(cpuRuntime().memory.buffer);
    const end = t.storage.ptr + 12;
    const saved = bytes.slice(end, end + 4);
    // A raw kernel call with a count one too large: exactly what the boundary exists to prevent.
    assert.throws(
      () => kernels().fill_contig(t.dtype.scalarType, t.storage.ptr, 7, 4),
      (e: Error) => e instanceof GuardViolationError && /detected after kernel fill_contig/.test(e.message),
    );
    new Uint8Array(cpuRuntime().memory.buffer).set(saved, end);
    verifyCpuGuards('restored');
    assert.deepEqual(t.toArray(), [7, 7, 7]);
    t.dispose();
  });
});
