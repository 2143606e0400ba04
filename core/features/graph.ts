/**
 * An FX-like graph of aten operator calls: placeholders (the inputs), constants (`get_attr`: tensors the captured
 * function used but did not receive), `call_function` nodes (an operator with its positional and keyword
 * arguments and the shapes and dtypes of its results) and one output. `print()` gives it as code, `run()`
 * replays it on any device, `toJSON()`/`Graph.fromJSON()` round-trip it, and `eliminateDeadCode()` /
 * `eliminateCommonSubexpressions()` are the example passes. Graphs are made by `trace()` / `makeFx()`
 * (`tracer.ts`).
 *
 * @module
 */
import { AUTOGRAD_DISPATCH_KEYSET } from '../dispatch/dispatch_key_set.ts';
import { Dispatcher } from '../dispatch/dispatcher.ts';
import { RuntimeError, ValueError } from '../dispatch/errors.ts';
import type { FunctionSchema } from '../dispatch/function_schema.ts';
import { withExcludedKeys } from '../dispatch/local_dispatch_key_set.ts';
import type { OperatorHandle } from '../dispatch/operator_handle.ts';
import { tensor } from '../ops/creation.ts';
import { aten } from '../ops/aten_call.ts';
import { registerOperators } from '../ops/registry.ts';
import { Device, type DeviceLike, toDevice } from '../tensor/device.ts';
import { type DType, type DTypeName, toDType } from '../tensor/dtype.ts';
import { FloatScalar } from '../tensor/float_scalar.ts';
import { Tensor } from '../tensor/tensor.ts';

/**
 * A use of a node's value (element `index` of a node with several results).
 *
 * @example
 * ```ts
 * import { ValueRef } from './graph.ts';
 * String(new ValueRef('max', 1)); // 'max[1]'
 * ```
 */
export class ValueRef {
  /** The node's name. */
  readonly node: string;
  /** The result index, for nodes returning several values (a tuple or a list). */
  readonly index: number | undefined;
  /** A reference to `node` (or its result `index`). */
  constructor(node: string, index?: number) {
    this.node = node;
    this.index = index;
  }
  /** `name` or `name[index]`. */
  toString(): string {
    return this.index === undefined ? this.node : `${this.node}[${this.index}]`;
  }
}

/** Shape and dtype of a tensor value. */
export interface TensorMeta {
  /** Sizes. */
  readonly shape: readonly number[];
  /** dtype name. */
  readonly dtype: DTypeName;
}

/** What a node produces: a tensor's meta, a list of them, or null for non-tensor values. */
export type NodeMeta = TensorMeta | ReadonlyArray<TensorMeta | null> | null;

/** The kinds of node, FX's opcodes. */
export type NodeOp = 'placeholder' | 'get_attr' | 'call_function' | 'output';

/** One node of a {@linkcode Graph}. */
export interface GraphNode {
  /** Unique name (`mm`, `mm_1`, `arg0`). */
  readonly name: string;
  /** The opcode. */
  readonly op: NodeOp;
  /** The operator (`aten::mm`) of a call, the constant's name for get_attr, the input name for a placeholder. */
  readonly target: string;
  /** Positional arguments; ValueRefs point at other nodes. The output node's single arg is its value. */
  readonly args: readonly unknown[];
  /** Keyword-only arguments. */
  readonly kwargs: Readonly<Record<string, unknown>>;
  /** Shapes and dtypes of the results. */
  readonly meta: NodeMeta;
}

const SHORT_DTYPES: Readonly<Record<string, string>> = {
  bool: 'b8',
  uint8: 'u8',
  int8: 'i8',
  int16: 'i16',
  int32: 'i32',
  int64: 'i64',
  float16: 'f16',
  bfloat16: 'bf16',
  float32: 'f32',
  float64: 'f64',
};

function metaText(meta: NodeMeta): string {
  if (meta === null) return '';
  if (Array.isArray(meta)) return `[${meta.map((m) => metaText(m)).join(', ')}]`;
  const m = meta as TensorMeta;
  return `${SHORT_DTYPES[m.dtype] ?? m.dtype}[${m.shape.join(', ')}]`;
}

/**
 * The shape and dtype of a value, a list of values, or null.
 *
 * @example
 * ```ts
 * import { metaOf, randn } from '../../mod.ts';
 * metaOf(randn(2, 3)); // { shape: [2, 3], dtype: 'float32' }
 * ```
 */
export function metaOf(value: unknown): NodeMeta {
  if (Tensor.isTensor(value)) return { shape: value.shape.slice(), dtype: value.dtype.name };
  if (Array.isArray(value)) return value.map((v) => (Tensor.isTensor(v) ? metaOf(v) as TensorMeta : null));
  return null;
}

function argText(v: unknown): string {
  if (v instanceof ValueRef) return v.toString();
  if (Array.isArray(v)) return `[${v.map(argText).join(', ')}]`;
  if (v === null || v === undefined) return 'null';
  if (v instanceof FloatScalar) return `floatScalar(${v.toString()})`;
  if (v instanceof Device) return `'${String(v)}'`;
  if (typeof v === 'object' && 'itemSize' in (v as object)) return `'${(v as DType).name}'`;
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'bigint') return `${v}n`;
  return String(v);
}

/**
 * Whether an operator's schema writes one of its arguments (`Tensor(a!)`).
 *
 * @example
 * ```ts
 * import { isMutating, parseSchema } from '../../mod.ts';
 * isMutating(parseSchema('aten::relu_(Tensor(a!) self) -> Tensor(a!)')); // true
 * ```
 */
export function isMutating(schema: FunctionSchema | undefined): boolean {
  return schema?.arguments.some((a) => a.aliasInfo?.isWrite === true) ?? false;
}

const NONDETERMINISTIC =
  /^aten::(rand|randn|randint|randperm|bernoulli|dropout|normal|uniform|multinomial|native_dropout)/;

/**
 * Whether calling the operator twice with equal arguments may give different results (random operators).
 *
 * @example
 * ```ts
 * import { isNondeterministic } from './graph.ts';
 * isNondeterministic('aten::randn'); // true
 * ```
 */
export function isNondeterministic(target: string): boolean {
  return NONDETERMINISTIC.test(target);
}

/** Options of {@linkcode Graph.run}. */
export interface RunOptions {
  /** Device of the replay: constants and recorded `device` arguments move there (default: the first input's). */
  readonly device?: DeviceLike;
  /**
   * Run below autograd (default: whether the graph was captured after autograd, so a replayed training step
   * does not record autograd history again; a pre-autograd graph replays through autograd).
   */
  readonly belowAutograd?: boolean;
}

function findOperator(target: string): OperatorHandle {
  registerOperators();
  const dot = target.indexOf('.', target.indexOf('::') + 2);
  const name = dot < 0 ? target : target.slice(0, dot);
  const overload = dot < 0 ? '' : target.slice(dot + 1);
  const op = Dispatcher.singleton().findSchema(name, overload);
  if (op === undefined) throw new RuntimeError(`Graph: unknown operator ${target}`);
  return op;
}

/**
 * A captured operator graph.
 *
 * @example
 * ```ts
 * import { randn, trace } from '../../mod.ts';
 * const g = trace((x, w) => x.mm(w).relu(), [randn(8, 16), randn(16, 4)]);
 * console.log(g.print());
 * const [y] = g.run([randn(8, 16), randn(16, 4)]);
 * ```
 */
export class Graph {
  /** The nodes in execution order; the last is the output. */
  readonly nodes: GraphNode[] = [];
  /** The constant tensors by get_attr name. */
  readonly constants: Map<string, Tensor> = new Map();
  /** Whether the graph holds what ran below autograd (decompositions and backward included). */
  readonly postAutograd: boolean;
  /** Whether the captured function returned one value (run gives it unwrapped) rather than a list. */
  singleOutput = false;
  readonly #names = new Map<string, number>();
  #compiled: { replay: (inputs: readonly unknown[]) => unknown; device: string } | undefined;

  /** An empty graph; `trace()` fills one. */
  constructor(options: { postAutograd?: boolean } = {}) {
    this.postAutograd = options.postAutograd ?? true;
  }

  /** A fresh node name from a base (`mm`, `mm_1`, ...), as FX names nodes. */
  freshName(base: string): string {
    const clean = base.replace(/[^A-Za-z0-9_]/g, '_').replace(/^(\d)/, '_$1') || 'v';
    const n = this.#names.get(clean) ?? 0;
    this.#names.set(clean, n + 1);
    return n === 0 ? clean : `${clean}_${n}`;
  }

  /** Appends a node (names must be unique). */
  addNode(node: GraphNode): GraphNode {
    if (this.nodes.some((n) => n.name === node.name)) throw new ValueError(`Graph: duplicate node name ${node.name}`);
    this.#names.set(node.name, Math.max(this.#names.get(node.name) ?? 0, 1));
    this.nodes.push(node);
    this.#compiled = undefined;
    return node;
  }

  /** The placeholder nodes, in input order. */
  get placeholders(): GraphNode[] {
    return this.nodes.filter((n) => n.op === 'placeholder');
  }

  /** The output node. */
  get output(): GraphNode {
    const out = this.nodes[this.nodes.length - 1];
    if (out === undefined || out.op !== 'output') throw new RuntimeError('Graph: the graph has no output node');
    return out;
  }

  /** The call_function nodes. */
  get calls(): GraphNode[] {
    return this.nodes.filter((n) => n.op === 'call_function');
  }

  /**
   * The graph as readable code, one line per node with the result's dtype and shape (FX's `print_readable`).
   */
  print(): string {
    const inputs = this.placeholders.map((p) => `${p.name} /* ${metaText(p.meta)} */`);
    const lines = [`function forward(${inputs.join(', ')}) {`];
    for (const n of this.nodes) {
      if (n.op === 'get_attr') {
        lines.push(`  const ${n.name} = this.${n.target}; // ${metaText(n.meta)}`);
      } else if (n.op === 'call_function') {
        const args = n.args.map(argText);
        const kw = Object.entries(n.kwargs).map(([k, v]) => `${k}: ${argText(v)}`);
        if (kw.length > 0) args.push(`{ ${kw.join(', ')} }`);
        const meta = metaText(n.meta);
        lines.push(`  const ${n.name} = ${n.target}(${args.join(', ')});${meta === '' ? '' : ` // ${meta}`}`);
      } else if (n.op === 'output') {
        lines.push(`  return ${argText(n.args[0])};`);
      }
    }
    lines.push('}');
    return lines.join('\n');
  }

  /** Same as {@linkcode print}. */
  toString(): string {
    return this.print();
  }

  /**
   * Replays the graph on `inputs` (one per placeholder): the captured operators run again, in order, on the
   * inputs' device. Returns what the captured function returned (one value or a list).
   */
  run(inputs: readonly unknown[], options: RunOptions = {}): unknown {
    if (!Array.isArray(inputs)) {
      throw new TypeError(`Graph.run(): argument 'inputs' must be an array, not ${typeof inputs}`);
    }
    const placeholders = this.placeholders;
    if (inputs.length !== placeholders.length) {
      throw new TypeError(`Graph.run(): expected ${placeholders.length} inputs, got ${inputs.length}`);
    }
    for (let i = 0; i < inputs.length; i++) {
      if (!Tensor.isLive(inputs[i])) {
        throw new TypeError(`Graph.run(): input ${i} (${placeholders[i].name}) must be a live Tensor`);
      }
    }
    const device = options.device === undefined
      ? (inputs[0] as Tensor | undefined)?.device ?? Device.cpu
      : toDevice(options.device);
    const replay = this.#compile(device);
    if (options.belowAutograd ?? this.postAutograd) {
      return withExcludedKeys(AUTOGRAD_DISPATCH_KEYSET, () => replay(inputs));
    }
    return replay(inputs);
  }

  /**
   * Note [Replay as generated code]
   * A replay interpreter pays per node for reading an argument template and spreading it into the call. Like
   * FX's GraphModule, the graph is instead compiled once per device into one straight-line function: a local
   * per node, each operator's `callUnchecked` stub called with fixed arguments (so every call site sees one
   * kernel), literals inlined, and opaque values (dtypes, devices, constants) passed in as closure values.
   * The arguments were checked when they were recorded; `run` checks the inputs.
   */
  #compile(device: Device): (inputs: readonly unknown[]) => unknown {
    const key = String(device);
    if (this.#compiled !== undefined && this.#compiled.device === key) return this.#compiled.replay;
    const closure: unknown[] = [];
    const vars = new Map<string, string>();
    const capture = (v: unknown): string => {
      closure.push(v);
      return `K[${closure.length - 1}]`;
    };
    const expr = (v: unknown, user: string): string => {
      if (v instanceof ValueRef) {
        const name = vars.get(v.node);
        if (name === undefined) throw new RuntimeError(`Graph: ${user} uses ${v.node} before it is defined`);
        return v.index === undefined ? name : `${name}[${v.index}]`;
      }
      if (Array.isArray(v)) return `[${v.map((e) => expr(e, user)).join(', ')}]`;
      if (v === null) return 'null';
      if (v === undefined) return 'undefined';
      if (typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v) && !Object.is(v, -0))) {
        return String(v);
      }
      if (typeof v === 'string') return JSON.stringify(v);
      if (v instanceof Device && v.type !== 'meta' && String(v) !== key) return capture(device);
      return capture(v);
    };
    const lines: string[] = [];
    this.placeholders.forEach((p, i) => {
      vars.set(p.name, `v${vars.size}`);
      lines.push(`const ${vars.get(p.name)} = inputs[${i}];`);
    });
    for (const n of this.nodes) {
      if (n.op === 'get_attr') {
        const c = this.constants.get(n.target);
        if (c === undefined) throw new RuntimeError(`Graph: missing constant ${n.target}`);
        const moved = String(c.device) === key ? c : (c as unknown as { to(d: Device): Tensor }).to(device);
        vars.set(n.name, capture(moved));
      } else if (n.op === 'call_function') {
        const op = findOperator(n.target);
        const schema = op.schema!;
        const args: string[] = [];
        let positional = 0;
        for (const a of schema.arguments) {
          args.push(expr(a.kwargOnly ? n.kwargs[a.name] : n.args[positional++], n.name));
        }
        while (args.length > 0 && args[args.length - 1] === 'undefined') args.pop();
        const local = `v${vars.size}`;
        vars.set(n.name, local);
        lines.push(`const ${local} = ${capture(op.callUnchecked)}(${args.join(', ')});`);
      }
    }
    lines.push(`return ${expr(this.output.args[0], 'output')};`);
    const replay = new Function('K', `return function replay(inputs) {\n${lines.join('\n')}\n};`)(closure) as (
      inputs: readonly unknown[],
    ) => unknown;
    this.#compiled = { replay, device: key };
    return replay;
  }

  /** The names of the nodes that use `name`. */
  usersOf(name: string): string[] {
    const users: string[] = [];
    const uses = (v: unknown): boolean =>
      v instanceof ValueRef ? v.node === name : Array.isArray(v) ? v.some(uses) : false;
    for (const n of this.nodes) {
      if (n.args.some(uses) || Object.values(n.kwargs).some(uses)) users.push(n.name);
    }
    return users;
  }

  /**
   * Removes calls whose results nobody uses, unless they mutate an argument (FX's `eliminate_dead_code`);
   * unused constants go too. Returns the number of nodes removed.
   */
  eliminateDeadCode(): number {
    let removed = 0;
    for (let i = this.nodes.length - 2; i >= 0; i--) {
      const n = this.nodes[i];
      if (n.op !== 'call_function' && n.op !== 'get_attr') continue;
      if (n.op === 'call_function' && isMutating(findOperator(n.target).schema)) continue;
      if (this.usersOf(n.name).length > 0) continue;
      this.nodes.splice(i, 1);
      if (n.op === 'get_attr') this.constants.delete(n.target);
      removed++;
    }
    if (removed > 0) this.#compiled = undefined;
    return removed;
  }

  /**
   * Replaces a call by an earlier call of the same operator on the same arguments (common subexpression
   * elimination). Random and mutating operators are kept, and a value written in place between two calls makes
   * them different. Returns the number of calls replaced (their nodes are removed).
   */
  eliminateCommonSubexpressions(): number {
    const replaced = new Map<string, ValueRef | string>();
    const writes = new Map<string, number>();
    const seen = new Map<string, string>();
    const rename = (v: unknown): unknown => {
      if (v instanceof ValueRef) {
        const to = replaced.get(v.node);
        return to === undefined ? v : new ValueRef(to as string, v.index);
      }
      return Array.isArray(v) ? v.map(rename) : v;
    };
    const keyOf = (v: unknown): string => {
      if (v instanceof ValueRef) {
        return `%${v.node}@${writes.get(v.node) ?? 0}${v.index === undefined ? '' : `[${v.index}]`}`;
      }
      if (Array.isArray(v)) return `[${v.map(keyOf).join(',')}]`;
      if (v instanceof FloatScalar) return `f${v.valueOf()}`;
      if (typeof v === 'number') return Object.is(v, -0) ? '-0' : String(v);
      return `${typeof v}:${argText(v)}`;
    };
    let count = 0;
    const kept: GraphNode[] = [];
    for (const n of this.nodes) {
      const node: GraphNode = {
        ...n,
        args: n.args.map(rename),
        kwargs: Object.fromEntries(Object.entries(n.kwargs).map(([k, v]) => [k, rename(v)])),
      };
      if (node.op === 'call_function') {
        const schema = findOperator(node.target).schema;
        if (isMutating(schema)) {
          // Every argument the operator writes gets a new version: later reads are not the same value.
          schema!.arguments.forEach((a, i) => {
            const v = a.kwargOnly ? node.kwargs[a.name] : node.args[i];
            if (a.aliasInfo?.isWrite === true && v instanceof ValueRef) {
              writes.set(v.node, (writes.get(v.node) ?? 0) + 1);
            }
          });
        } else if (!isNondeterministic(node.target)) {
          const key = `${node.target}(${node.args.map(keyOf).join(',')};${
            Object.entries(node.kwargs).map(([k, v]) => `${k}=${keyOf(v)}`).join(',')
          })`;
          const earlier = seen.get(key);
          if (earlier !== undefined) {
            replaced.set(node.name, earlier);
            count++;
            continue;
          }
          seen.set(key, node.name);
        }
      }
      kept.push(node);
    }
    this.nodes.splice(0, this.nodes.length, ...kept);
    if (count > 0) this.#compiled = undefined;
    return count;
  }

  /** A JSON-ready object: nodes with tagged values, constants with their data. */
  toJSON(): GraphJSON {
    const constants: GraphJSON['constants'] = {};
    for (const [name, t] of this.constants) {
      constants[name] = {
        dtype: t.dtype.name,
        shape: t.shape.slice(),
        device: t.device.type === 'meta' ? 'meta' : undefined,
        data: t.device.type === 'meta' ? undefined : (t.contiguous().cpu().toArray()),
      };
    }
    return {
      format: 'switchyard.graph/1',
      postAutograd: this.postAutograd,
      singleOutput: this.singleOutput,
      nodes: this.nodes.map((n) => ({
        name: n.name,
        op: n.op,
        target: n.target,
        args: n.args.map(encode),
        kwargs: Object.fromEntries(Object.entries(n.kwargs).map(([k, v]) => [k, encode(v)])),
        meta: n.meta,
      })),
      constants,
    };
  }

  /** Rebuilds a graph from {@linkcode toJSON}'s object (or its JSON text). */
  static fromJSON(json: GraphJSON | string): Graph {
    const obj = typeof json === 'string' ? JSON.parse(json) as GraphJSON : json;
    if (obj === null || typeof obj !== 'object' || obj.format !== 'switchyard.graph/1' || !Array.isArray(obj.nodes)) {
      throw new ValueError("Graph.fromJSON(): expected an object with format 'switchyard.graph/1' and nodes");
    }
    const g = new Graph({ postAutograd: obj.postAutograd });
    g.singleOutput = obj.singleOutput === true;
    for (const [name, c] of Object.entries(obj.constants ?? {})) {
      const dtype = toDType(c.dtype);
      let t: Tensor;
      if (c.device === 'meta') {
        registerOperators();
        t = aten('empty', 'memory_format').call(c.shape, dtype, null, Device.meta, null, null) as Tensor;
      } else {
        const data = c.data as unknown[];
        t = (tensor(data as number[], { dtype }) as Tensor).reshape(c.shape);
      }
      g.constants.set(name, t);
    }
    for (const n of obj.nodes) {
      if (n.op === 'call_function') findOperator(n.target);
      g.addNode({
        name: n.name,
        op: n.op,
        target: n.target,
        args: n.args.map(decode),
        kwargs: Object.fromEntries(Object.entries(n.kwargs).map(([k, v]) => [k, decode(v)])),
        meta: n.meta,
      });
    }
    return g;
  }
}

/** The JSON form of a graph. */
export interface GraphJSON {
  /** Format tag and version. */
  readonly format: 'switchyard.graph/1';
  /** Whether the graph was captured after autograd and decompositions (aten level). */
  readonly postAutograd: boolean;
  /** Whether the traced function returned one value rather than a list. */
  readonly singleOutput?: boolean;
  /** The nodes in order, their arguments referring to earlier nodes by name. */
  readonly nodes: ReadonlyArray<{
    readonly name: string;
    readonly op: NodeOp;
    readonly target: string;
    readonly args: unknown[];
    readonly kwargs: Record<string, unknown>;
    readonly meta: NodeMeta;
  }>;
  /** Tensors the graph holds (captured constants), with their data unless they are meta tensors. */
  readonly constants: Record<string, { dtype: DTypeName; shape: number[]; device?: 'meta'; data?: unknown[] }>;
}

function encode(v: unknown): unknown {
  if (v instanceof ValueRef) return v.index === undefined ? { $ref: v.node } : { $ref: v.node, index: v.index };
  if (Array.isArray(v)) return v.map(encode);
  if (v === null || v === undefined || typeof v === 'boolean' || typeof v === 'string') return v ?? null;
  if (typeof v === 'number') return Number.isFinite(v) ? v : { $number: String(v) };
  if (typeof v === 'bigint') return { $bigint: String(v) };
  if (v instanceof FloatScalar) return { $float: encode(v.valueOf()) };
  if (v instanceof Device) return { $device: String(v) };
  if (typeof v === 'object' && 'itemSize' in (v as object) && 'scalarTypeName' in (v as object)) {
    return { $dtype: (v as DType).name };
  }
  throw new TypeError(
    `Graph.toJSON(): cannot export an argument of type ${(v as object).constructor?.name ?? typeof v}`,
  );
}

function decode(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(decode);
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  if ('$ref' in o) return new ValueRef(o.$ref as string, o.index as number | undefined);
  if ('$number' in o) return Number(o.$number);
  if ('$bigint' in o) return BigInt(o.$bigint as string);
  if ('$float' in o) return new FloatScalar(decode(o.$float) as number);
  if ('$device' in o) return toDevice(o.$device as DeviceLike);
  if ('$dtype' in o) return toDType(o.$dtype as DTypeName);
  throw new ValueError(`Graph.fromJSON(): unknown value ${JSON.stringify(v)}`);
}
