// The program module the tests in this folder run in attached workers (proxy mode): each export is a step a
// test asks a worker to take.
import {
  arange,
  crossEntropy,
  Dispatcher,
  DispatchKey,
  full,
  isGradEnabled,
  keep,
  Library,
  localKeys,
  manualSeed,
  nn,
  optim,
  rand,
  randn,
  scope,
  type Tensor,
  tensor,
} from '../../mod.ts';
import { sharedRuntime } from '../../core/workers/shared_runtime.ts';
import { registerShared } from '../../core/workers/shared_ops.ts';
import { definedKernel } from '../../core/workers/defined_kernels.ts';
import { KernelFunction } from '../../core/dispatch/kernel_function.ts';
import { handleInternal } from '../../core/dispatch/operator_handle.ts';
import { ROW_ENTRIES, ROW_GENERATION } from '../../core/dispatch/table_store.ts';
import { dispatchTableIndexForKey } from '../../core/dispatch/dispatch_key_set.ts';

export function double(x: Tensor): Tensor {
  return x.mul(2);
}

export function scaleInPlace(x: Tensor, f: number): number {
  x.mul_(f);
  return x.version;
}

/** Writes `value` through a view of rows [1, 3) of `x`. */
export function fillRowsThroughView(x: Tensor, value: number): number {
  using v = x.narrow(0, 1, 2);
  v.fill_(value);
  return x.version;
}

export function values(x: Tensor): number[] {
  return Array.from(x.contiguous().toArray() as number[], Number);
}

/** A tensor made here and handed over (its storage belongs to this agent). */
export function makeRange(n: number): Tensor {
  return arange(n, { dtype: 'float32' });
}

let kept: Tensor | undefined;
/** Keeps a view of `x` past the call (the caller may dispose of its own tensor meanwhile). */
export function keepView(x: Tensor): void {
  kept = keep(x.view(x.shape as number[]));
}
export function keptSum(): number {
  return kept!.sum().item() as number;
}
export function dropKept(): void {
  kept?.dispose();
  kept = undefined;
}

/**
 * Allocates and frees tensors of random sizes (small classes and blocks over 1 MiB), each filled with a
 * value unique to this agent and round, and checks every live one before freeing it: a block handed to two
 * agents at once would show another agent's value.
 */
export function allocStress(seed: number, rounds: number): number {
  let s = seed >>> 0;
  const rand = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const live: Array<[Tensor, number]> = [];
  let checked = 0;
  for (let r = 0; r < rounds; r++) {
    const big = rand() < 0.15;
    const n = big ? 262144 + Math.floor(rand() * 400000) : 1 + Math.floor(rand() * 3000);
    const value = seed * 100000 + r;
    live.push([full([n], value, { dtype: 'float64' }), value]);
    if (live.length > 12 || rand() < 0.4) {
      const [t, v] = live.splice(Math.floor(rand() * live.length), 1)[0];
      const bad = t.ne(v).sum().item();
      if (bad !== 0) throw new Error(`Block of agent ${sharedRuntime().agent} was overwritten (${bad} elements)`);
      checked++;
      t.dispose();
    }
  }
  for (const [t] of live) t.dispose();
  return checked;
}

/** A tensor of `bytes` bytes, which grows the shared memory. */
export function bigTensor(bytes: number): Tensor {
  return full([bytes / 4], 3, { dtype: 'float32' });
}

/** Runs an operator whose kernel throws after allocating. */
export function kernelThrows(): void {
  using lib = new Library('wprog', 'FRAGMENT');
  const op = lib.define('wprog::explode(Tensor x) -> Tensor');
  lib.impl('explode', (_hi: number, _lo: number, x: Tensor) => {
    const scratch = x.add(1); // made inside the kernel, then the kernel fails
    scratch.dispose();
    throw new RangeError('explode: the kernel failed on purpose');
  }, DispatchKey.CPU);
  using x = tensor([1, 2]);
  op.call(x);
}

/** Takes the shared lock and never gives it back (a worker that dies inside a locked section). */
export function holdLockForever(flag: Int32Array): void {
  const { cb, agent } = sharedRuntime();
  cb.lock(agent);
  Atomics.store(flag, 0, 1);
  for (;;) Atomics.wait(flag, 1, 0, 50);
}

/**
 * Keeps a block of its own, takes the shared lock, and ends its own worker: `close()` in a web worker,
 * `process.exit()` in a Node `worker_threads` one (which has no `close`).
 */
export function closeSelf(): void {
  keep(full([50000], 1, { dtype: 'float32' }));
  const { cb, agent } = sharedRuntime();
  cb.lock(agent);
  const g = globalThis as { close?: () => void; process?: { exit(code: number): void } };
  if (typeof g.close === 'function') g.close();
  else g.process!.exit(0);
}

/**
 * Takes the dispatch tables' lock and leaves the row of aten::add.Tensor mid-write (odd generation), as a
 * worker killed while publishing a row would; then waits forever.
 */
export function holdTableRowForever(flag: Int32Array): void {
  const store = Dispatcher.singleton().tableStore;
  store.registry!.locked(() => {
    const { words, base } = store.ref(store.registry!.rowOf('aten::add.Tensor'));
    Atomics.add(words, base, 1);
    Atomics.store(flag, 0, 1);
    for (;;) Atomics.wait(flag, 1, 0, 50);
  });
}

/**
 * Publishes a row of wtest::probe2 slowly, as a writer descheduled mid-write would: registers kernel wtest.j3
 * at CPU here without publishing, then, holding the tables' lock, opens the row's seqlock (flag[0] = 1), writes
 * the new kernel ids, keeps the write open for `holdMs`, and closes it (flag[1] = 1).
 */
export function publishSlowly(flag: Int32Array, holdMs: number): void {
  const d = Dispatcher.singleton(), store = d.tableStore, registry = store.registry!;
  const { words, base, row } = store.ref(registry.rowOf('wtest::probe2'));
  store.quiet = true; // the row was adopted from the main agent: this registration does not publish it
  try {
    slowPublication = d.registerImpl(
      'wtest::probe2',
      DispatchKey.CPU,
      KernelFunction.fromUnboxed(definedKernel('wtest.j3')!),
      {
        debug: 'wtest.j3',
        kernelName: 'wtest.j3',
      },
    );
  } finally {
    store.quiet = false;
  }
  const ids = store.readRow(row).ids;
  ids[dispatchTableIndexForKey(DispatchKey.CPU)] = registry.kernelId('wtest.j3');
  registry.locked(() => {
    Atomics.add(words, base + ROW_GENERATION, 1); // odd: mid-write
    Atomics.store(flag, 0, 1);
    words.set(ids, base + ROW_ENTRIES);
    spinMicroseconds(holdMs * 1000);
    Atomics.store(flag, 1, 1);
    Atomics.add(words, base + ROW_GENERATION, 1); // even: complete
  });
}

let slowPublication: { dispose(): void } | undefined;

/** Removes the registration publishSlowly made. */
export function dropSlowPublication(): void {
  slowPublication?.dispose();
  slowPublication = undefined;
}

/** Allocates and frees without end (a worker terminated in the middle of an operation). */
export function churnForever(flag: Int32Array): void {
  for (let i = 0;; i++) {
    scope(() => {
      const a = full([100000 + (i % 7) * 50000], i, { dtype: 'float64' });
      a.add(1).mul(2).sum();
    });
    if (i === 3) Atomics.store(flag, 0, 1);
    Atomics.add(flag, 1, 1);
  }
}

/** This agent's per-agent dispatch state. */
export function agentState(): { gradEnabled: boolean; excludedHi: number } {
  return { gradEnabled: isGradEnabled(), excludedHi: localKeys.excludedHi };
}

// ---- proxy mode: a model and a training loop living in the worker ----

let model: nn.Sequential | undefined;

/** Builds a small MLP here; the caller gets a handle to it. */
export function makeModel(seed: number): nn.Sequential {
  manualSeed(seed);
  model = new nn.Sequential(new nn.Linear(4, 16), new nn.ReLU(), new nn.Linear(16, 3));
  return model;
}

/** Trains the model for `steps` steps on (x, y) and returns the last loss (a scalar tensor). */
export function train(x: Tensor, y: Tensor, steps: number): Tensor {
  const opt = new optim.Adam(model!.parameters(), { lr: 1e-2 });
  let last = 0;
  for (let i = 0; i < steps; i++) {
    last = scope(() => {
      const loss = crossEntropy(model!.forward(x), y);
      opt.zeroGrad();
      loss.backward();
      opt.step();
      return loss.item() as number;
    });
  }
  return tensor([last], { dtype: 'float32' });
}

/** Random data made here. */
export function data(n: number): { x: Tensor; y: Tensor } {
  manualSeed(1);
  const x = randn([n, 4]);
  const y = tensor(Array.from({ length: n }, (_, i) => i % 3));
  return { x, y };
}

// ---- shared dispatch stress ----

function spinMicroseconds(us: number): void {
  const end = performance.now() + us / 1000;
  while (performance.now() < end) { /* spin */ }
}

/**
 * Registers and deregisters kernels in the shared slot of wtest::probe until `epochs[1]` is set: round i
 * registers kernel k(i % 4), then bumps `epochs[0]` to 2i + 1, removes it, then bumps it to 2i + 2. Sets
 * `epochs[2]` once running. Returns the rounds done.
 */
export function registerLoop(epochs: Int32Array): number {
  Atomics.store(epochs, 2, 1);
  let i = 0;
  for (; Atomics.load(epochs, 1) === 0; i++) {
    const reg = registerShared('wtest::probe', DispatchKey.CPU, `wtest.k${i % 4}`);
    Atomics.add(epochs, 0, 1);
    spinMicroseconds(50); // registered long enough for the dispatching agents to see it
    reg.dispose();
    Atomics.add(epochs, 0, 1);
    spinMicroseconds(50);
  }
  return i;
}

/**
 * The registration loop of `registerLoop`, through the dispatcher and the shared table store: round i
 * registers kernel wtest.j(i % 4) for wtest::probe2 at CPU (over its CompositeExplicitAutograd base) and
 * publishes the row, then removes it.
 */
export function registerImplLoop(epochs: Int32Array): number {
  const d = Dispatcher.singleton();
  Atomics.store(epochs, 2, 1);
  let i = 0;
  for (; Atomics.load(epochs, 1) === 0; i++) {
    const name = `wtest.j${i % 4}`;
    const kernel = KernelFunction.fromUnboxed(definedKernel(name)!);
    const reg = d.registerImpl('wtest::probe2', DispatchKey.CPU, kernel, { debug: name, kernelName: name });
    Atomics.add(epochs, 0, 1);
    spinMicroseconds(50);
    reg.dispose();
    Atomics.add(epochs, 0, 1);
    spinMicroseconds(50);
  }
  return i;
}

/** Registers, here, a CPU kernel for wtest::probe2 that no other agent can load; `release` removes it. */
let unloadable: { dispose(): void } | undefined;
export function registerUnloadable(release: boolean): void {
  if (release) return void unloadable?.dispose();
  unloadable = Dispatcher.singleton().registerImpl(
    'wtest::probe2',
    DispatchKey.CPU,
    KernelFunction.fromUnboxed(() => 42),
    { debug: 'only in this worker', kernelName: 'wtest.only_in_worker' },
  );
}

/** This agent's own computation of the kernel id at `key`'s table slot for each operator (its registrations). */
export function computedIds(names: string[], key: DispatchKey): number[] {
  return names.map((name) => {
    const d = Dispatcher.singleton();
    const { entry } = handleInternal(d.findOp(name)!) as {
      entry: { computeRow(ctx: Dispatcher): { ids: Int32Array } };
    };
    return entry.computeRow(d).ids[dispatchTableIndexForKey(key)];
  });
}

/** Calls wtest::probe2 here. */
export function callProbe2(): number {
  using x = tensor([0], { dtype: 'float32' });
  return Dispatcher.singleton().findSchemaOrThrow('wtest::probe2').call(x) as number;
}

/** The global kernel id of a stable kernel name and the shared row of an operator, as this agent sees them. */
export function sharedIds(kernel: string, op: string): { id: number; row: number } {
  const registry = Dispatcher.singleton().tableStore.registry!;
  return { id: registry.kernelId(kernel), row: registry.rowOf(op) };
}

/** The operators whose call stubs do not read the shared row of their name (none, once attached). */
export function unsharedRows(): string[] {
  const d = Dispatcher.singleton(), store = d.tableStore;
  return d.operatorNames().filter((name) => {
    const { row } = handleInternal(d.findOp(name)!) as { row: { row: number; words: Int32Array } };
    const shared = store.registry!.rowOf(name);
    return row.row !== shared || row.words.buffer !== store.ref(shared).words.buffer;
  });
}

/**
 * Calls wtest::probe for `ms` milliseconds; for every call that ran kernel k_j checks that some round i with
 * i % 4 === j had it registered while the call ran (epoch 2i + 1 lies in the call's [before, after] epochs,
 * or the write of round i happened during epoch 2i, inside the window). Returns counts and the violations.
 */
export function probeLoop(
  epochs: Int32Array,
  ms: number,
  opName = 'wtest::probe',
): { calls: number; hits: number; violations: string[] } {
  const op = Dispatcher.singleton().findSchemaOrThrow(opName);
  using x = tensor([0], { dtype: 'float32' });
  const violations: string[] = [];
  let calls = 0, hits = 0;
  const end = Date.now() + ms;
  while (Date.now() < end) {
    for (let k = 0; k < 200; k++) {
      const before = Atomics.load(epochs, 0);
      const j = op.call(x) as number;
      const after = Atomics.load(epochs, 0);
      calls++;
      if (j < 0) continue;
      hits++;
      // Round i is registered during epochs 2i (after its write) and 2i + 1 (until its removal).
      let ok = false;
      for (let e = before; e <= after + 1 && !ok; e++) {
        const i = e >> 1;
        if (i % 4 === j && e >= 2 * i && e <= 2 * i + 1 && 2 * i <= after && 2 * i + 1 >= before) ok = true;
      }
      if (!ok && violations.length < 5) violations.push(`kernel k${j} ran during epochs [${before}, ${after}]`);
    }
  }
  return { calls, hits, violations };
}

/** Whether this agent's dispatcher knows the operator. */
export function hasOperator(name: string): boolean {
  return Dispatcher.singleton().findSchema(name) !== undefined;
}

/** Draws `n` float32 uniform values from the default generator. */
export function randValues(n: number): number[] {
  using t = rand([n]);
  return Array.from(t.toArray() as number[], Number);
}

/** Seeds the default generator here. */
export function seed(s: number): void {
  manualSeed(s);
}
