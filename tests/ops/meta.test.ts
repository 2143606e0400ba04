// Meta parity of the elementwise operators: for every declared elementwise operator and overload, calling it on
// Meta tensors gives the shape and dtype the CPU kernel gives for the same shapes, dtypes and scalars, and the same
// errors (broadcasting, promotion-dependent checks, in-place rules, argument checks). The exceptions are the
// errors PyTorch raises inside CPU kernels only: a dtype the kernel does not take (`"exp_vml_cpu" not implemented
// for 'Half'`), integer division by zero and bound overflow, which depend on the kernel or on the data; Meta
// tensors have neither, so there the Meta call succeeds, as it does in PyTorch.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  type DType,
  empty,
  memoryStats,
  NotImplementedError,
  ones,
  registerOperators,
  scope,
  type Tensor,
} from '../../mod.ts';
import { ELEMENTWISE_OPS } from '../../core/ops/decl_elementwise.ts';
import { ALL_DTYPES } from './_helpers.ts';

type Name = DType['name'];
type Spec = readonly [Name, readonly number[]];
type Arg = { readonly tensor: Spec } | { readonly value: unknown };

const T = (dtype: Name, shape: readonly number[]): Arg => ({ tensor: [dtype, shape] });
const V = (value: unknown): Arg => ({ value });

// Operand pairs: every dtype with broadcasting, mixed dtypes, 0-d and size-0 operands, and shapes that do not
// broadcast, or do not fit an in-place self.
const PAIRS: ReadonlyArray<readonly [Arg, Arg]> = [
  ...(ALL_DTYPES as readonly Name[]).map((d) => [T(d, [3, 1]), T(d, [4])] as const),
  ...(ALL_DTYPES as readonly Name[]).map((d) => [T(d, [2, 3]), T(d, [2, 3])] as const),
  [T('int32', [2, 3]), T('float32', [3])],
  [T('uint8', [2]), T('int8', [2])],
  [T('float16', [2]), T('float64', [])],
  [T('int64', []), T('float32', [])],
  [T('bool', [0, 3]), T('bool', [3])],
  [T('int16', [2, 3]), T('bool', [])],
  [T('float32', [2, 3]), T('float32', [4])],
  [T('float32', [3]), T('float32', [2, 3])],
];
const SCALARS = [2, 2.5, true, -1].map(V);
const ALPHAS = [1, 2, 0.5, true].map(V);
const STRINGS: Record<string, readonly unknown[]> = {
  rounding_mode: [null, 'trunc', 'floor', 'round'],
  approximate: ['none', 'tanh', 'fast'],
};

/** Argument lists for an operator, from its schema's argument names and types. */
function argumentLists(op: string): Arg[][] {
  const schema = registerOperators()[op as keyof ReturnType<typeof registerOperators>].schema!;
  const sig = schema.arguments.map((a) => `${a.name}:${printType(a.type)}`).join(',');
  const lists: Arg[][] = [];
  const tensors = PAIRS.flatMap(([a, b]) => [a, b]);
  switch (sig) {
    case 'self:Tensor,other:Tensor,alpha:Scalar':
      for (const [a, b] of PAIRS) for (const alpha of ALPHAS) lists.push([a, b, alpha]);
      break;
    case 'self:Tensor,other:Scalar,alpha:Scalar':
      for (const a of tensors) for (const s of SCALARS) for (const alpha of ALPHAS) lists.push([a, s, alpha]);
      break;
    case 'self:Tensor,other:Tensor':
    case 'self:Tensor,exponent:Tensor':
      for (const [a, b] of PAIRS) lists.push([a, b]);
      break;
    case 'self:Tensor,other:Scalar':
    case 'self:Tensor,exponent:Scalar':
      for (const a of tensors) for (const s of SCALARS) lists.push([a, s]);
      break;
    case 'self:Scalar,exponent:Tensor':
      for (const a of tensors) for (const s of [...SCALARS, V(1)]) lists.push([s, a]);
      break;
    case 'self:Tensor,other:Tensor,rounding_mode:str?':
      for (const [a, b] of PAIRS) for (const m of STRINGS.rounding_mode) lists.push([a, b, V(m)]);
      break;
    case 'self:Tensor,other:Scalar,rounding_mode:str?':
      for (const a of tensors) for (const s of SCALARS) for (const m of STRINGS.rounding_mode) lists.push([a, s, V(m)]);
      break;
    case 'self:Tensor':
      for (const a of tensors) lists.push([a]);
      break;
    case 'self:Tensor,value:Scalar':
      for (const a of tensors) for (const v of SCALARS) lists.push([a, v]);
      break;
    case 'self:Tensor,approximate:str':
      for (const a of tensors) for (const m of STRINGS.approximate) lists.push([a, V(m)]);
      break;
    case 'condition:Tensor,self:Tensor,other:Tensor':
      for (const c of [T('bool', [3, 1]), T('int64', [3, 1]), T('bool', [])]) {
        for (const [a, b] of PAIRS) lists.push([c, a, b]);
      }
      break;
    case 'condition:Tensor,self:Tensor,other:Scalar':
      for (const c of [T('bool', [2, 1]), T('uint8', [2, 1])]) for (const a of tensors) lists.push([c, a, SCALARS[1]]);
      break;
    case 'self:Tensor,min:Scalar?,max:Scalar?':
      for (const a of tensors) {
        for (const [lo, hi] of [[-1, 2.5], [null, true], [0.5, null], [null, null], [false, true], [0, 1000]]) {
          lists.push([a, V(lo), V(hi)]);
        }
      }
      break;
    case 'self:Tensor,min:Scalar':
    case 'self:Tensor,max:Scalar':
      for (const a of tensors) for (const b of [-1, 2.5, true, NaN, 1000].map(V)) lists.push([a, b]);
      break;
    case 'self:Tensor,min:Tensor?,max:Tensor?':
      for (const [a, b] of PAIRS) {
        for (const [lo, hi] of [[b, b], [b, V(null)], [V(null), b], [V(null), V(null)]]) lists.push([a, lo, hi]);
      }
      break;
    default:
      throw new Error(`No argument lists for ${op} (${sig}): teach the Meta parity test its signature`);
  }
  return lists;
}

function printType(t: { kind: string; elem?: unknown }): string {
  return t.kind === 'Optional' ? `${printType(t.elem as { kind: string })}?` : t.kind;
}

function materialize(arg: Arg, device: 'cpu' | 'meta'): unknown {
  if ('value' in arg) return arg.value;
  const [dtype, shape] = arg.tensor;
  // CPU data are ones, so integer divisions never divide by zero; Meta tensors have no data.
  return device === 'cpu' ? ones([...shape], { dtype }) : empty([...shape], { dtype, device: 'meta' });
}

type Outcome = { readonly tensor: Tensor } | { readonly error: Error };

function attempt(op: string, args: unknown[]): Outcome {
  try {
    return { tensor: registerOperators()[op as keyof ReturnType<typeof registerOperators>].call(...args) as Tensor };
  } catch (e) {
    return { error: e as Error };
  }
}

/** Errors that PyTorch raises inside CPU kernels only (dtype dispatch, data-dependent checks). */
function kernelOnly(e: Error): boolean {
  return e instanceof NotImplementedError || e.message === 'ZeroDivisionError' ||
    e.message.startsWith('value cannot be converted to type');
}

const describeArgs = (args: Arg[]) =>
  args.map((a) => ('value' in a ? JSON.stringify(a.value) : `${a.tensor[0]}[${a.tensor[1]}]`)).join(', ');

describe('Meta parity of the elementwise operators', () => {
  for (const op of Object.keys(ELEMENTWISE_OPS)) {
    it(`${op}: Meta gives the CPU result's shape and dtype, and the same errors`, () => {
      const base = memoryStats().liveTensors;
      let compared = 0;
      scope(() => {
        for (const args of argumentLists(op)) {
          const what = `${op}(${describeArgs(args)})`;
          const cpu = attempt(op, args.map((a) => materialize(a, 'cpu')));
          const meta = attempt(op, args.map((a) => materialize(a, 'meta')));
          if ('error' in cpu && kernelOnly(cpu.error)) {
            assert.ok('tensor' in meta, `${what}: Meta should not raise ${cpu.error.message}`);
            continue;
          }
          if ('error' in cpu) {
            assert.ok('error' in meta, `${what}: CPU raised "${cpu.error.message}", Meta did not`);
            assert.equal(meta.error.message, cpu.error.message, what);
            assert.equal(meta.error.constructor, cpu.error.constructor, what);
            continue;
          }
          if ('error' in meta) assert.fail(`${what}: Meta raised "${meta.error.message}", CPU did not`);
          assert.equal(meta.tensor.device.type, 'meta', what);
          assert.deepEqual([...meta.tensor.shape], [...cpu.tensor.shape], `${what}: shape`);
          assert.equal(meta.tensor.dtype, cpu.tensor.dtype, `${what}: dtype`);
          compared++;
        }
      });
      assert.ok(compared > 0, `${op}: no successful call was compared`);
      assert.equal(memoryStats().liveTensors, base, 'leaked tensors');
    });
  }
});
