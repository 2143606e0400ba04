/**
 * A third-party backend written only against Switchyard's public API: a pure-TypeScript device `mydev` whose
 * memory is a set of JavaScript byte arrays. It registers
 *
 * - its storage hooks (`registerBackend`): allocate, free, and a host view of a block;
 * - kernels at `DispatchKey.PrivateUse1` for `empty.memory_format`, `copy_` and `_to_copy` (the factory and the
 *   copies to and from the CPU), and `add.Tensor`, `mul.Tensor`, `sum` and `mm` computed in JavaScript over its
 *   own storage (float32 and float64; other cases go to the fallback);
 * - a boxed fallback at `PrivateUse1` for every other operator: it copies `mydev` arguments to the CPU, runs the
 *   operator there, and copies results (and written arguments) back.
 *
 * Autograd needs nothing: `mydev` tensors carry `AutogradPrivateUse1`, whose kernels come from the `Autograd`
 * alias like every backend's.
 *
 * Run: `deno run -A examples/custom_backend.ts` or `bun examples/custom_backend.ts`.
 *
 * @module
 */
import {
  broadcastShapes,
  type Device,
  DispatchKey,
  type DType,
  empty,
  getDefaultDtype,
  IValue,
  Library,
  type OperatorHandle,
  registerBackend,
  RuntimeError,
  type Stack,
  Storage,
  Tensor,
  toDevice,
} from '../mod.ts';

// ---- the device's memory: one byte array per block ----
const blocks = new Map<number, Uint8Array>();
let nextPtr = 1;

/** The `mydev` device (PrivateUse1, renamed). */
export const mydev: Device = registerBackend('mydev', {
  allocate(nbytes: number): number {
    const ptr = nextPtr++;
    blocks.set(ptr, new Uint8Array(nbytes));
    return ptr;
  },
  free(ptr: number): void {
    blocks.delete(ptr);
  },
  bytes(ptr: number): Uint8Array {
    const block = blocks.get(ptr);
    if (block === undefined) throw new RuntimeError(`mydev: no block at ${ptr}`);
    return block;
  },
});

/** Blocks the backend holds now (for tests: freed tensors give their blocks back). */
export function liveBlocks(): number {
  return blocks.size;
}

// ---- helpers over the backend's storage ----
const onMydev = (t: Tensor) => t.device.equals(mydev);

/** Calls `fn(i, offset)` for the i-th element (row-major) at element `offset` of a strided tensor. */
function forEachOffset(
  shape: readonly number[],
  strides: readonly number[],
  start: number,
  fn: (i: number, off: number) => void,
) {
  const n = shape.reduce((a, b) => a * b, 1);
  const index = shape.map(() => 0);
  let off = start;
  for (let i = 0; i < n; i++) {
    fn(i, off);
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++index[d] < shape[d]) {
        off += strides[d];
        break;
      }
      off -= strides[d] * (shape[d] - 1);
      index[d] = 0;
    }
  }
}

function floats(t: Tensor): Float32Array | Float64Array | undefined {
  const bytes = t.storage.bytes();
  if (t.dtype.name === 'float32') return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 2);
  if (t.dtype.name === 'float64') return new Float64Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 3);
  return undefined;
}

function emptyMydev(shape: readonly number[], dtype: DType): Tensor {
  for (const s of shape) {
    if (!Number.isSafeInteger(s) || s < 0) {
      throw new RuntimeError(`Trying to create tensor with negative dimension ${s}: [${shape.join(', ')}]`);
    }
  }
  const storage = Storage.allocate(mydev, shape.reduce((a, b) => a * b, 1) * dtype.itemSize);
  return new Tensor({ storage, shape, dtype });
}

/** A new contiguous CPU tensor with a `mydev` tensor's elements (a byte copy, any dtype). */
function toHost(t: Tensor): Tensor {
  const out = empty(t.shape, { dtype: t.dtype });
  const item = t.dtype.itemSize, src = t.storage.bytes(), dst = out.storage.bytes();
  forEachOffset(t.shape, t.stride(), t.storageOffset, (i, off) => {
    dst.set(src.subarray(off * item, off * item + item), i * item);
  });
  return out;
}

/** Writes a contiguous CPU tensor's elements into a `mydev` tensor of the same shape and dtype. */
function fromHost(self: Tensor, host: Tensor): void {
  const item = self.dtype.itemSize, dst = self.storage.bytes();
  const src = host.storage.bytes().subarray(host.storageOffset * item);
  forEachOffset(self.shape, self.stride(), self.storageOffset, (i, off) => {
    dst.set(src.subarray(i * item, i * item + item), off * item);
  });
}

// ---- kernels at PrivateUse1 ----
function emptyKernel(_hi: number, _lo: number, size: readonly number[], dtype: DType | null): Tensor {
  return emptyMydev(size, dtype ?? getDefaultDtype());
}

function copyKernel(_hi: number, _lo: number, self: Tensor, src: Tensor): Tensor {
  if (self.numel === 0 || self === src) return self;
  const owned: Tensor[] = [];
  const keep = (t: Tensor, from: Tensor) => (t !== from && owned.push(t), t);
  try {
    let staged = onMydev(src) ? keep(toHost(src), src) : src;
    staged = keep(staged.expand(self.shape), staged);
    if (staged.dtype !== self.dtype) staged = keep(staged.to({ dtype: self.dtype }), staged);
    staged = keep(staged.contiguous(), staged);
    if (onMydev(self)) fromHost(self, staged);
    else self.copy_(staged);
  } finally {
    for (const t of owned) t.dispose();
  }
  return self;
}

function toCopyKernel(
  _hi: number,
  _lo: number,
  self: Tensor,
  dtype: DType | null,
  _layout: unknown,
  device: Device | null,
): Tensor {
  const target = device ?? self.device;
  const outDtype = dtype ?? self.dtype;
  if (target.equals(mydev)) return copyKernel(0, 0, emptyMydev(self.shape, outDtype), self);
  const host = toHost(self);
  if (target.type === 'cpu' && outDtype === self.dtype) return host;
  try {
    return host.to({ dtype: outDtype, device: target });
  } finally {
    host.dispose();
  }
}

type Binary = (a: number, b: number, alpha: number) => number;
function binaryKernel(opName: string, f: Binary) {
  return (_hi: number, _lo: number, self: Tensor, other: Tensor, alpha: number = 1): Tensor => {
    const a = floats(self), b = floats(other);
    if (a === undefined || b === undefined || self.dtype !== other.dtype || !onMydev(self) || !onMydev(other)) {
      return viaCpu(opName, [self, other], alpha === 1 ? [] : [alpha]);
    }
    const shape = broadcastShapes(self.shape, other.shape);
    const x = self.expand(shape), y = other.expand(shape);
    const out = emptyMydev(shape, self.dtype), o = floats(out)!;
    const xo: number[] = [];
    forEachOffset(shape, x.stride(), x.storageOffset, (i, off) => void (xo[i] = off));
    forEachOffset(shape, y.stride(), y.storageOffset, (i, off) => void (o[i] = f(a[xo[i]], b[off], alpha)));
    if (x !== self) x.dispose(); // the broadcast views, not the operands
    if (y !== other) y.dispose();
    return out;
  };
}

function sumKernel(_hi: number, _lo: number, self: Tensor, dtype: DType | null): Tensor {
  const a = floats(self);
  if (a === undefined || dtype !== null) return viaCpu('sum', [self], [], dtype === null ? {} : { dtype });
  let acc = 0;
  forEachOffset(self.shape, self.stride(), self.storageOffset, (_i, off) => void (acc += a[off]));
  const out = emptyMydev([], self.dtype);
  floats(out)![0] = acc;
  return out;
}

function mmKernel(_hi: number, _lo: number, self: Tensor, mat2: Tensor): Tensor {
  const a = floats(self), b = floats(mat2);
  if (a === undefined || b === undefined || self.dtype !== mat2.dtype || self.dim() !== 2 || mat2.dim() !== 2) {
    return viaCpu('mm', [self, mat2]);
  }
  const [m, k] = self.shape, [k2, n] = mat2.shape;
  if (k !== k2) {
    throw new RuntimeError(`mat1 and mat2 shapes cannot be multiplied (${m}x${k} and ${k2}x${n})`);
  }
  const [sa0, sa1] = self.stride(), [sb0, sb1] = mat2.stride();
  const oa = self.storageOffset, ob = mat2.storageOffset;
  const out = emptyMydev([m, n], self.dtype), o = floats(out)!;
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let acc = 0;
      for (let p = 0; p < k; p++) acc += a[oa + i * sa0 + p * sa1] * b[ob + p * sb0 + j * sb1];
      o[i * n + j] = acc;
    }
  }
  return out;
}

/** An operator the kernels above do not cover, on the CPU through the public functions, copied back. */
function viaCpu(name: string, tensors: Tensor[], rest: unknown[] = [], options?: object): Tensor {
  const hosts = tensors.map((t) => (onMydev(t) ? toHost(t) : t));
  try {
    const method = (hosts[0] as unknown as Record<string, (...args: unknown[]) => Tensor>)[name];
    const args: unknown[] = [...hosts.slice(1), ...rest];
    if (name === 'add' && rest.length > 0) args.splice(1, 1, { alpha: rest[0] });
    if (options !== undefined) args.push(options);
    const result = method.apply(hosts[0], args);
    try {
      return result.to(mydev);
    } finally {
      result.dispose();
    }
  } finally {
    hosts.forEach((h, i) => h !== tensors[i] && h.dispose());
  }
}

// ---- the boxed fallback: every other operator runs on the CPU ----
/**
 * Runs `op` on the CPU: `mydev` tensors in the arguments are copied to the CPU and `mydev` devices become the
 * CPU; afterwards the arguments the schema marks as written are copied back, and tensor results move to
 * `mydev` (an in-place result is its `mydev` argument).
 */
export function cpuFallback(op: OperatorHandle, _ks: unknown, stack: Stack): void {
  const schema = op.schema;
  if (schema === undefined) throw new RuntimeError(`mydev fallback: ${op.name} has no schema`);
  const n = schema.arguments.length;
  const args = stack.splice(stack.length - n, n);
  const copies = new Map<Tensor, Tensor>(); // CPU copy -> mydev original
  const written: Array<[Tensor, Tensor]> = [];
  const toCpu = (v: IValue, isWrite: boolean): IValue => {
    if (v.isTensor()) {
      const t = v.toTensor<Tensor>();
      if (!onMydev(t)) return v;
      const host = toHost(t);
      copies.set(host, t);
      if (isWrite) written.push([t, host]);
      return IValue.tensor(host);
    }
    if (v.isList()) return IValue.list(v.toList().map((item) => toCpu(item, isWrite)));
    if (v.tag === 'Device' && (v.payload as Device).equals(mydev)) return new IValue('Device', toDevice('cpu'));
    return v;
  };
  const cpuStack: Stack = args.map((v, i) => toCpu(v, schema.arguments[i].aliasInfo?.isWrite === true));
  try {
    op.callBoxed(cpuStack);
    for (const [target, host] of written) target.copy_(host);
    const back = (v: IValue): IValue => {
      if (v.isTensor()) {
        const t = v.toTensor<Tensor>();
        const original = copies.get(t);
        if (original !== undefined) return IValue.tensor(original);
        const moved = t.to(mydev);
        t.dispose();
        return IValue.tensor(moved);
      }
      if (v.isList()) return IValue.list(v.toList().map(back));
      return v;
    };
    for (const v of cpuStack) stack.push(back(v));
  } finally {
    for (const host of copies.keys()) host.dispose();
  }
}

const impl = new Library('aten', 'IMPL', DispatchKey.PrivateUse1);
const kernels: Record<string, (hi: number, lo: number, ...args: never[]) => unknown> = {
  'empty.memory_format': emptyKernel,
  'copy_': copyKernel,
  '_to_copy': toCopyKernel,
  'add.Tensor': binaryKernel('add', (a, b, alpha) => a + alpha * b),
  'mul.Tensor': binaryKernel('mul', (a, b) => a * b),
  'sum': sumKernel,
  'mm': mmKernel,
};
for (const [name, kernel] of Object.entries(kernels)) {
  impl.impl(name, kernel as (hi: number, lo: number, ...args: unknown[]) => unknown, undefined, {
    debug: `mydev kernel ${name}`,
  });
}
new Library('_', 'IMPL', DispatchKey.PrivateUse1).fallback(cpuFallback, { debug: 'mydev CPU fallback' });

if (import.meta.main) {
  const { ones, tensor } = await import('../mod.ts');
  const x = tensor([[1, 2], [3, 4.5]], { device: 'mydev', requiresGrad: true });
  const w = ones([2, 2], { device: 'mydev' });
  const y = x.mm(w).mul(x).sum();
  y.backward();
  console.log(String(x.grad));
  console.log(String(y.to('cpu')));
}
