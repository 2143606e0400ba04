/**
 * Per-operator unboxed call stubs: the dispatcher's hot path.
 *
 * Note [Generated call stubs]
 * An unboxed call must (1) OR the keyset words of the tensor arguments, (2) add the agent's include set,
 * remove its exclude set and mask out fallthrough keys, (3) find the table slot with two `Math.clz32`, and
 * (4) call the kernel with the keyset words and the arguments, all without allocating. A generic function
 * over `...args` allocates an array per call and makes every call site megamorphic. So each operator gets
 * its own small function, generated from its schema once at registration: fixed parameters, the dispatch
 * arguments read by position (a `Tensor[]` argument gets a loop), and the table row's base offset baked in
 * as a constant. Each operator's kernel call site then sees one kernel and the engine can inline it.
 * Operators without a schema (impl before def) use the generic closure below until their def arrives.
 *
 * Note [Validated call stubs]
 * While a table store is not shared (Note [Shared table store] in shared_tables.ts), its agent is the only
 * writer of its rows and a stub reads the mask word and the slot's kernel id directly. Once it is shared, a
 * row may be rewritten by another agent between those two reads, and a call could combine one version's
 * fallthrough mask with another version's kernel id: a kernel that neither version selects. The stubs built
 * for a shared store (`validated`) read the row's GENERATION word with `Atomics.load` before and after the
 * two reads and retry while it is odd or has changed, so every call runs the kernel one published version of
 * the row selects. The dispatcher rebuilds its stubs when its store becomes shared, so an agent that never
 * shares keeps the plain stubs. `redispatch` reads a single word (the keyset is given) and needs no check.
 *
 * @module
 */
import { FUNCTIONALITY_MASKS, FUNCTIONALITY_OFFSETS } from './dispatch_key_set.ts';
import type { FunctionSchema } from './function_schema.ts';
import { isDispatchKeySource } from './ivalue.ts';
import type { UnboxedKernel } from './kernel_function.ts';
import { localKeys } from './local_dispatch_key_set.ts';
import { ROW_ENTRIES, ROW_GENERATION, ROW_NFT_HI, ROW_PER_BACKEND, ROW_PER_BACKEND_FLAG } from './table_store.ts';

/** Everything a stub closes over. */
export interface StubContext {
  /** The chunk words of the operator's table row. */
  readonly words: Int32Array;
  /** The row's first word. */
  readonly base: number;
  /** Unboxed kernel functions by kernel id (undefined: boxed-only, fallthrough or missing). */
  readonly unboxed: ReadonlyArray<UnboxedKernel | undefined>;
  /** Handles ids without an unboxed function: boxes the arguments or reports the error. */
  readonly slow: (id: number, hi: number, lo: number, args: unknown[]) => unknown;
  /** When set, called before the kernel with the label and keyset; returns after the kernel. */
  readonly trace?: { enter(label: string, hi: number, lo: number): void; exit(): void };
  /** Read the row under its seqlock (a shared store: Note [Validated call stubs]). */
  readonly validated?: boolean;
}

/** A generated unboxed entry point. */
// deno-lint-ignore no-explicit-any
export type CallStub = (...args: any[]) => any;

/** The arguments the dispatcher reads keys from, by position. */
export interface DispatchArgument {
  readonly index: number;
  readonly isList: boolean;
}

/** The dispatch arguments of a schema: Tensor, Tensor?, Tensor[], Tensor?[] and Generator arguments. */
export function dispatchArguments(schema: FunctionSchema): DispatchArgument[] {
  return schema.dispatchArgumentIndices.map((index) => {
    const type = schema.arguments[index].type;
    const inner = type.kind === 'Optional' ? type.elem : type;
    return { index, isList: inner.kind === 'List' };
  });
}

// Note [Stubs without code generation]
// The call stubs are compiled with `new Function`, one per operator, so that each is a fixed-arity function the
// engines inline. A page whose Content-Security-Policy forbids 'unsafe-eval' makes `new Function` throw: there
// every stub is a closure over the schema's dispatch-argument positions instead (same keys, same tables, same
// results, some nanoseconds slower). `canGenerateCode()` probes once.

let codegen: boolean | undefined;

/**
 * Whether `new Function` works here (false under a Content-Security-Policy without 'unsafe-eval'); probed once.
 *
 * @example
 * ```ts
 * import { canGenerateCode } from './call_stub.ts';
 * canGenerateCode(); // true in Deno, Bun and Node
 * ```
 */
export function canGenerateCode(): boolean {
  if (codegen === undefined) {
    try {
      codegen = new Function('return 1')() === 1;
    } catch {
      codegen = false;
    }
  }
  return codegen;
}

/**
 * For tests: makes the stubs built from now on closures (`false`), compiled code (`true`), or probes again
 * (`undefined`). Stubs already built keep their form.
 *
 * @example
 * ```ts
 * import { setCodeGeneration } from './call_stub.ts';
 * setCodeGeneration(false); // as under a CSP without 'unsafe-eval'
 * setCodeGeneration(undefined);
 * ```
 */
export function setCodeGeneration(allowed: boolean | undefined): void {
  codegen = allowed;
}

const SHARED = ['T', 'R', 'O', 'M', 'L', 'U', 'S', 'TR', 'RS', 'SH'];

function sharedValues(ctx: StubContext): unknown[] {
  return [
    ctx.words,
    ctx.base,
    FUNCTIONALITY_OFFSETS,
    FUNCTIONALITY_MASKS,
    localKeys,
    ctx.unboxed,
    ctx.slow,
    ctx.trace,
    readSlot,
    settled,
  ];
}

function lookupAndCall(params: string, label: string, traced: boolean, looked = false): string {
  const call = `const u = U[id];\n` +
    `return u !== undefined ? u(h, l${params}) : S(id, h, l, [${params.slice(2)}]);\n`;
  const lookup = looked ? '' : `const f = 32 - Math.clz32(h);\n` +
    `const id = T[R + ${ROW_ENTRIES} + O[f] + (32 - Math.clz32((l & M[f]) >>> 1))];\n`;
  if (!traced) return lookup + call;
  return lookup + `TR.enter(${JSON.stringify(label)}, h, l);\ntry {\n${call}} finally {\n  TR.exit();\n}\n`;
}

function maskAndLocalKeys(): string {
  // Per-backend masks are indexed by the arguments' highest backend (before the include set is added),
  // exactly as PyTorch indexes `nonFallthroughKeysPerBackend_` with the argument keyset's backend index.
  return `const m = T[R + ${ROW_PER_BACKEND_FLAG}] === 0 ? T[R + ${ROW_NFT_HI}] : ` +
    `T[R + ${ROW_PER_BACKEND} + 2 * (32 - Math.clz32(l >>> 1))];\n` +
    `h = (h | L.includedHi) & ~L.excludedHi & m;\n` +
    `l |= L.includedLo;\n`;
}

/**
 * The mask, local keys and slot read of a validated stub (Note [Validated call stubs]); leaves `h`, `l`, `id`.
 * Straight-line code for the usual case (the row did not change under the reads); a retry loop in a helper
 * otherwise, so that the stub stays small and loop-free for the engines to inline.
 */
function validatedLookup(): string {
  return `const a = l, h0 = h | L.includedHi;\nl |= L.includedLo;\n` +
    `const g = Atomics.load(T, R + ${ROW_GENERATION});\n` +
    `const m = T[R + ${ROW_PER_BACKEND_FLAG}] === 0 ? T[R + ${ROW_NFT_HI}] : ` +
    `T[R + ${ROW_PER_BACKEND} + 2 * (32 - Math.clz32(a >>> 1))];\n` +
    `h = h0 & ~L.excludedHi & m;\n` +
    `const f = 32 - Math.clz32(h);\n` +
    `let id = T[R + ${ROW_ENTRIES} + O[f] + (32 - Math.clz32((l & M[f]) >>> 1))];\n` +
    `if ((g & 1) !== 0 || Atomics.load(T, R + ${ROW_GENERATION}) !== g) {\n` +
    `id = RS(T, R, h0, a);\nh = SH.hi;\n}\n`;
}

// The keyset a validated lookup settled on (readSlot returns the id).
const settled = { hi: 0 };

/** The validated lookup with retries: the slot's kernel id; the final keyset word in `settled.hi`. */
function readSlot(T: Int32Array, R: number, h: number, l: number): number {
  const h0 = h | localKeys.includedHi, lo = l | localKeys.includedLo;
  for (;;) {
    const g = Atomics.load(T, R + ROW_GENERATION);
    const m = T[R + ROW_PER_BACKEND_FLAG] === 0
      ? T[R + ROW_NFT_HI]
      : T[R + ROW_PER_BACKEND + 2 * (32 - Math.clz32(l >>> 1))];
    const hi = h0 & ~localKeys.excludedHi & m;
    const f = 32 - Math.clz32(hi);
    const id = T[R + ROW_ENTRIES + FUNCTIONALITY_OFFSETS[f] + (32 - Math.clz32((lo & FUNCTIONALITY_MASKS[f]) >>> 1))];
    if ((g & 1) === 0 && Atomics.load(T, R + ROW_GENERATION) === g) {
      settled.hi = hi;
      return id;
    }
  }
}

/**
 * Builds the `call` stub of an operator with a schema.
 *
 * @example
 * ```ts
 * // Inside the dispatcher: op.call = makeCallStub(ctx, schema, traced);
 * ```
 */
export function makeCallStub(ctx: StubContext, schema: FunctionSchema, traced: boolean): CallStub {
  if (!canGenerateCode()) return makeClosureCall(ctx, dispatchArguments(schema), traced);
  const n = schema.arguments.length;
  const params = Array.from({ length: n }, (_, i) => `a${i}`);
  let extract = 'let h = 0, l = 0;\n';
  for (const arg of dispatchArguments(schema)) {
    const a = `a${arg.index}`;
    extract += arg.isList
      ? `if (${a} != null) for (let i = 0; i < ${a}.length; i++) { const t = ${a}[i]; ` +
        `if (t != null) { h |= t.keySetHi; l |= t.keySetLo; } }\n`
      : `if (${a} != null) { h |= ${a}.keySetHi; l |= ${a}.keySetLo; }\n`;
  }
  const rest = params.map((p) => `, ${p}`).join('');
  const body = ctx.validated
    ? `return function call(${params.join(', ')}) {\n${extract}${validatedLookup()}` +
      `${lookupAndCall(rest, '[call]', traced, true)}};`
    : `return function call(${params.join(', ')}) {\n${extract}${maskAndLocalKeys()}` +
      `${lookupAndCall(rest, '[call]', traced)}};`;
  return new Function(...SHARED, body)(...sharedValues(ctx)) as CallStub;
}

/**
 * Builds the `redispatch` stub: `(ksHi, ksLo, ...args)`, a pure table lookup with the keyset as given (no
 * local keys, no fallthrough mask), as PyTorch's `Dispatcher::redispatch`.
 */
export function makeRedispatchStub(ctx: StubContext, arity: number, traced: boolean): CallStub {
  if (!canGenerateCode()) return makeGenericRedispatch(ctx, traced);
  const params = Array.from({ length: arity }, (_, i) => `a${i}`);
  const rest = params.map((p) => `, ${p}`).join('');
  const body = `return function redispatch(h, l${rest}) {\nh |= 0; l |= 0;\n` +
    `${lookupAndCall(rest, '[redispatch]', traced)}};`;
  return new Function(...SHARED, body)(...sharedValues(ctx)) as CallStub;
}

/** The `call` of an operator without a schema: scans every argument (and arrays) for keyset words. */
export function makeGenericCall(ctx: StubContext, traced: boolean): CallStub {
  const { words: T, base: R, unboxed: U, slow: S, trace, validated } = ctx;
  return (...args: unknown[]) => {
    let h = 0, l = 0;
    for (const a of args) {
      if (isDispatchKeySource(a)) {
        h |= a.keySetHi;
        l |= a.keySetLo;
      } else if (Array.isArray(a)) {
        for (const t of a) {
          if (isDispatchKeySource(t)) {
            h |= t.keySetHi;
            l |= t.keySetLo;
          }
        }
      }
    }
    if (validated) {
      const id = readSlot(T, R, h, l);
      return genericCall(U, S, traced ? trace : undefined, '[call]', id, settled.hi, l | localKeys.includedLo, args);
    }
    const m = T[R + ROW_PER_BACKEND_FLAG] === 0
      ? T[R + ROW_NFT_HI]
      : T[R + ROW_PER_BACKEND + 2 * (32 - Math.clz32(l >>> 1))];
    h = (h | localKeys.includedHi) & ~localKeys.excludedHi & m;
    l |= localKeys.includedLo;
    return genericLookup(T, R, U, S, traced ? trace : undefined, '[call]', h, l, args);
  };
}

/** The `call` stub as a closure (Note [Stubs without code generation]): keys from the dispatch arguments only. */
function makeClosureCall(ctx: StubContext, dispatchArgs: readonly DispatchArgument[], traced: boolean): CallStub {
  const { words: T, base: R, unboxed: U, slow: S, trace, validated } = ctx;
  return (...args: unknown[]) => {
    let h = 0, l = 0;
    for (const { index, isList } of dispatchArgs) {
      const a = args[index] as { keySetHi: number; keySetLo: number } | ArrayLike<unknown> | null | undefined;
      if (a == null) continue;
      if (isList) {
        const list = a as ArrayLike<{ keySetHi: number; keySetLo: number } | null | undefined>;
        for (let i = 0; i < list.length; i++) {
          const t = list[i];
          if (t != null) {
            h |= t.keySetHi;
            l |= t.keySetLo;
          }
        }
      } else {
        h |= (a as { keySetHi: number }).keySetHi;
        l |= (a as { keySetLo: number }).keySetLo;
      }
    }
    if (validated) {
      const id = readSlot(T, R, h, l);
      return genericCall(U, S, traced ? trace : undefined, '[call]', id, settled.hi, l | localKeys.includedLo, args);
    }
    const m = T[R + ROW_PER_BACKEND_FLAG] === 0
      ? T[R + ROW_NFT_HI]
      : T[R + ROW_PER_BACKEND + 2 * (32 - Math.clz32(l >>> 1))];
    h = (h | localKeys.includedHi) & ~localKeys.excludedHi & m;
    l |= localKeys.includedLo;
    return genericLookup(T, R, U, S, traced ? trace : undefined, '[call]', h, l, args);
  };
}

/** The `redispatch` of an operator without a schema. */
export function makeGenericRedispatch(ctx: StubContext, traced: boolean): CallStub {
  const { words: T, base: R, unboxed: U, slow: S, trace } = ctx;
  return (h: number, l: number, ...args: unknown[]) =>
    genericLookup(T, R, U, S, traced ? trace : undefined, '[redispatch]', h | 0, l | 0, args);
}

function genericLookup(
  T: Int32Array,
  R: number,
  U: ReadonlyArray<UnboxedKernel | undefined>,
  S: StubContext['slow'],
  trace: StubContext['trace'],
  label: string,
  h: number,
  l: number,
  args: unknown[],
): unknown {
  const f = 32 - Math.clz32(h);
  const id = T[R + ROW_ENTRIES + FUNCTIONALITY_OFFSETS[f] + (32 - Math.clz32((l & FUNCTIONALITY_MASKS[f]) >>> 1))];
  return genericCall(U, S, trace, label, id, h, l, args);
}

function genericCall(
  U: ReadonlyArray<UnboxedKernel | undefined>,
  S: StubContext['slow'],
  trace: StubContext['trace'],
  label: string,
  id: number,
  h: number,
  l: number,
  args: unknown[],
): unknown {
  const u = U[id];
  trace?.enter(label, h, l);
  try {
    return u !== undefined ? u(h, l, ...args) : S(id, h, l, args);
  } finally {
    trace?.exit();
  }
}
