import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Allocator, type AllocatorMemory } from '../../core/cpu/allocator.ts';

const PAGE = 65536;
const MiB = 1 << 20;

function sharedMemory(maximumPages: number, initialPages = 1): WebAssembly.Memory {
  return new WebAssembly.Memory({ initial: initialPages, maximum: maximumPages, shared: true });
}

/** A memory that counts grow calls. */
function countingMemory(maximumPages: number): AllocatorMemory & { grows: number } {
  const memory = sharedMemory(maximumPages);
  return {
    grows: 0,
    get buffer() {
      return memory.buffer;
    },
    grow(pages: number) {
      this.grows++;
      return memory.grow(pages);
    },
  };
}

/** Tracks live blocks; checks alignment, bounds, disjointness and stats after every step. */
class Checker {
  readonly live = new Map<number, number>();
  readonly allocator: Allocator;
  readonly memory: AllocatorMemory;
  readonly base: number;

  constructor(memory: AllocatorMemory, base: number, maximumBytes: number) {
    this.memory = memory;
    this.base = base;
    this.allocator = new Allocator({ memory, base, maximumBytes });
  }

  alloc(nbytes: number): number {
    const ptr = this.allocator.alloc(nbytes);
    const size = this.allocator.usableSize(ptr);
    assert.equal(ptr % 64, 0, `pointer ${ptr} is not 64-byte aligned`);
    assert.ok(size >= Math.max(nbytes, 1), `block of ${size} bytes for a request of ${nbytes}`);
    assert.ok(ptr >= this.base && ptr + size <= this.memory.buffer.byteLength, `block ${ptr}+${size} out of bounds`);
    assert.ok(!this.live.has(ptr), `pointer ${ptr} handed out twice`);
    this.live.set(ptr, size);
    // Stamp both ends so that a block overlapping another one shows up when it is freed.
    const bytes = new Uint32Array(this.memory.buffer);
    bytes[ptr / 4] = ptr;
    bytes[(ptr + size) / 4 - 1] = ptr;
    return ptr;
  }

  free(ptr: number): void {
    const size = this.live.get(ptr)!;
    const bytes = new Uint32Array(this.memory.buffer);
    assert.equal(bytes[ptr / 4], ptr, `block ${ptr} was overwritten`);
    assert.equal(bytes[(ptr + size) / 4 - 1], ptr, `block ${ptr} was overwritten`);
    this.allocator.free(ptr);
    this.live.delete(ptr);
  }

  verify(): void {
    const blocks = [...this.live].sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < blocks.length; i++) {
      assert.ok(
        blocks[i - 1][0] + blocks[i - 1][1] <= blocks[i][0],
        `blocks ${blocks[i - 1]} and ${blocks[i]} overlap`,
      );
    }
    const stats = this.allocator.stats();
    const inUse = blocks.reduce((sum, [, size]) => sum + size, 0);
    assert.equal(stats.liveAllocations, blocks.length);
    assert.equal(stats.bytesInUse, inUse);
    assert.ok(stats.peakBytesInUse >= inUse);
    assert.ok(stats.bytesReserved >= inUse);
    assert.ok(this.base + stats.bytesReserved <= this.memory.buffer.byteLength);
  }
}

/** mulberry32: a small seeded PRNG, so failures reproduce. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('Allocator', () => {
  it('returns 64-byte-aligned offsets at or above the base', () => {
    const memory = sharedMemory(64);
    const allocator = new Allocator({ memory, base: 1000, maximumBytes: 64 * PAGE });
    const a = allocator.alloc(1), b = allocator.alloc(100);
    assert.equal(a, 1024);
    assert.equal(b % 64, 0);
    assert.ok(b >= a + 64);
  });

  it('rounds small requests to geometric size classes, large ones to 64 bytes', () => {
    const allocator = new Allocator({ memory: sharedMemory(256), base: 0, maximumBytes: 256 * PAGE });
    const classes: [number, number][] = [
      [1, 64],
      [64, 64],
      [65, 128],
      [200, 256],
      [257, 320],
      [300, 320],
      [513, 640],
      [1000, 1024],
      [5000, 5120],
      [MiB - 1, MiB],
      [MiB, MiB],
      [MiB + 1, MiB + 64],
    ];
    for (const [request, size] of classes) {
      assert.equal(allocator.usableSize(allocator.alloc(request)), size, `${request}`);
    }
  });

  it('gives each zero-byte request its own 64-byte block', () => {
    const allocator = new Allocator({ memory: sharedMemory(64), base: 0, maximumBytes: 64 * PAGE });
    const a = allocator.alloc(0), b = allocator.alloc(0);
    assert.notEqual(a, b);
    assert.equal(allocator.usableSize(a), 64);
    allocator.free(a);
    assert.throws(() => allocator.free(a), /already freed/);
  });

  it('reuses a freed small block of the same class at once', () => {
    const allocator = new Allocator({ memory: sharedMemory(64), base: 0, maximumBytes: 64 * PAGE });
    const a = allocator.alloc(300);
    allocator.free(a);
    assert.equal(allocator.alloc(310), a);
  });

  it('detects double frees and unknown pointers', () => {
    const allocator = new Allocator({ memory: sharedMemory(64), base: 0, maximumBytes: 64 * PAGE });
    const large = allocator.alloc(2 * MiB);
    allocator.free(large);
    const message = new RegExp(`^Error: Invalid free of pointer ${large}: not a live allocation`);
    assert.throws(() => allocator.free(large), message);
    assert.throws(() => allocator.free(12345), /Invalid free of pointer 12345/);
    assert.throws(() => allocator.free(-64), /Invalid free of pointer -64/);
    assert.throws(() => allocator.alloc(-1), /^RangeError: Invalid allocation size -1/);
    assert.throws(() => allocator.alloc(1.5), /Invalid allocation size 1.5/);
    assert.deepEqual(allocator.stats().liveAllocations, 0);
  });

  it('keeps reserved bytes flat over 1000 alloc/free cycles of 64 MB (512 MB maximum)', () => {
    const memory = sharedMemory(8192);
    const allocator = new Allocator({ memory, base: 4096, maximumBytes: 8192 * PAGE });
    const first = allocator.alloc(64 * MiB);
    const small = allocator.alloc(256);
    allocator.free(first);
    allocator.free(small);
    const reserved = allocator.stats().bytesReserved;
    const length = memory.buffer.byteLength;
    for (let i = 0; i < 1000; i++) {
      const output = allocator.alloc(64 * MiB);
      const scalar = allocator.alloc(4 + (i % 7)); // small temporaries in between must not fragment it
      assert.equal(output, first);
      allocator.free(output);
      allocator.free(scalar);
    }
    const stats = allocator.stats();
    assert.equal(stats.bytesReserved, reserved);
    assert.equal(memory.buffer.byteLength, length);
    assert.equal(stats.allocCount, 2002);
    assert.equal(stats.peakBytesInUse, 64 * MiB + 256);
  });

  it('coalesces adjacent free large blocks whatever the order of the frees', () => {
    for (const order of [[0, 1, 2], [2, 1, 0], [1, 0, 2], [0, 2, 1], [2, 0, 1], [1, 2, 0]]) {
      const memory = countingMemory(256);
      const allocator = new Allocator({ memory, base: 0, maximumBytes: 256 * PAGE });
      const blocks = [allocator.alloc(2 * MiB), allocator.alloc(3 * MiB), allocator.alloc(4 * MiB)];
      const fence = allocator.alloc(2 * MiB); // keeps the range from merging into the top
      for (const i of order) allocator.free(blocks[i]);
      const grows = memory.grows;
      assert.equal(allocator.alloc(9 * MiB), blocks[0], `order ${order}`);
      assert.equal(memory.grows, grows);
      allocator.free(fence);
    }
  });

  it('picks the best-fitting free range and splits it', () => {
    const allocator = new Allocator({ memory: sharedMemory(512), base: 0, maximumBytes: 512 * PAGE });
    const [a, , b, , c] = [5, 1.5, 3, 1.5, 4].map((m) => allocator.alloc(m * MiB));
    allocator.alloc(2 * MiB);
    for (const p of [a, b, c]) allocator.free(p);
    assert.equal(allocator.alloc(2.5 * MiB), b); // the 3 MiB hole
    assert.equal(allocator.alloc(4 * MiB), c);
    assert.equal(allocator.alloc(1.5 * MiB), a);
    assert.equal(allocator.alloc(2 * MiB), a + 1.5 * MiB); // the rest of the 5 MiB hole
  });

  it('grows the memory only as needed, up to the maximum, then throws a RangeError naming the request', () => {
    const memory = countingMemory(256); // 16 MiB
    const allocator = new Allocator({ memory, base: 0, maximumBytes: 16 * MiB });
    const blocks = [allocator.alloc(6 * MiB), allocator.alloc(6 * MiB)];
    assert.ok(memory.grows >= 1);
    const before = allocator.stats();
    const length = memory.buffer.byteLength;
    assert.throws(() => allocator.alloc(6 * MiB), {
      name: 'RangeError',
      message: 'Out of memory: tried to allocate 6.00 MiB (6291456 bytes); 12.00 MiB in use, limit 16.00 MiB',
    });
    assert.deepEqual(allocator.stats(), before);
    assert.equal(memory.buffer.byteLength, length);
    // Still fully usable: what fits is allocated, frees work, the freed space is reused.
    const third = allocator.alloc(3 * MiB);
    allocator.free(blocks[0]);
    assert.equal(allocator.alloc(6 * MiB), blocks[0]);
    allocator.free(third);
    assert.throws(
      () => allocator.alloc(2 ** 31),
      /^RangeError: Out of memory: tried to allocate 2\.00 GiB \(2147483648 bytes\)/,
    );
  });

  it('reports the memory refusing to grow as out of memory too', () => {
    const memory = sharedMemory(32); // 2 MiB, below maximumBytes
    const allocator = new Allocator({ memory, base: 0, maximumBytes: 64 * MiB });
    assert.throws(() => allocator.alloc(4 * MiB), /^RangeError: Out of memory: tried to allocate 4\.00 MiB/);
    assert.equal(allocator.stats().allocCount, 0);
    allocator.free(allocator.alloc(1000));
  });

  it('gives small blocks back with emptyCache, and does so by itself before running out', () => {
    const allocator = new Allocator({ memory: sharedMemory(64), base: 0, maximumBytes: 4 * MiB });
    const smalls = Array.from({ length: 16 }, () => allocator.alloc(100_000)); // 128 KiB class: one 2 MiB chunk
    const keep = allocator.alloc(64);
    for (const p of smalls) allocator.free(p);
    assert.equal(allocator.emptyCache(), 0); // the chunk still holds a live block
    allocator.free(keep);
    const big = allocator.alloc(3 * MiB); // needs the chunk's space: emptyCache runs first
    assert.equal(big, 0);
    allocator.free(big);
    assert.equal(allocator.emptyCache(), 0);
  });

  it('resetPeak restarts the peak from the bytes in use', () => {
    const allocator = new Allocator({ memory: sharedMemory(64), base: 0, maximumBytes: 64 * PAGE });
    const a = allocator.alloc(1024);
    allocator.free(allocator.alloc(2 * MiB));
    assert.equal(allocator.stats().peakBytesInUse, 1024 + 2 * MiB);
    allocator.resetPeak();
    assert.equal(allocator.stats().peakBytesInUse, 1024);
    allocator.free(a);
  });

  it('keeps blocks disjoint and stats consistent over seeded random workloads', () => {
    for (const seed of [1, 2, 3]) {
      const random = prng(seed);
      const memory = sharedMemory(2048); // 128 MiB
      const checker = new Checker(memory, 192, 2048 * PAGE);
      for (let step = 0; step < 3000; step++) {
        if (checker.live.size > 0 && random() < 0.45) {
          const ptrs = [...checker.live.keys()];
          checker.free(ptrs[Math.floor(random() * ptrs.length)]);
        } else {
          const r = random();
          const nbytes = r < 0.7
            ? Math.floor(random() * 4096)
            : r < 0.9
            ? Math.floor(random() * 2 * MiB)
            : Math.floor(random() * 12 * MiB);
          try {
            checker.alloc(nbytes);
          } catch (e) {
            assert.ok(e instanceof RangeError && /Out of memory/.test(e.message), String(e));
          }
        }
        if (step % 50 === 0) checker.verify();
      }
      checker.verify();
      for (const ptr of [...checker.live.keys()]) checker.free(ptr);
      checker.verify();
      assert.equal(checker.allocator.stats().bytesInUse, 0);
    }
  });

  it('keeps blocks disjoint for any sequence of allocs and frees (fast-check)', () => {
    const command = fc.oneof(
      fc.record({ alloc: fc.oneof(fc.nat(2048), fc.nat(3 * MiB)) }),
      fc.record({ free: fc.nat() }),
    );
    fc.assert(
      fc.property(fc.array(command, { maxLength: 120 }), (commands) => {
        const memory = sharedMemory(256); // 16 MiB
        const checker = new Checker(memory, 64, 256 * PAGE);
        for (const c of commands) {
          if ('free' in c) {
            const ptrs = [...checker.live.keys()];
            if (ptrs.length > 0) checker.free(ptrs[c.free % ptrs.length]);
          } else {
            try {
              checker.alloc(c.alloc);
            } catch (e) {
              if (!(e instanceof RangeError)) throw e;
            }
          }
          checker.verify();
        }
        for (const ptr of [...checker.live.keys()]) checker.free(ptr);
        // Everything was given back: with the small chunks released the whole arena is one range.
        checker.allocator.emptyCache();
        checker.alloc(16 * MiB - 64);
      }),
      { numRuns: 60 },
    );
  });
});
