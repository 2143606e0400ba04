/**
 * Autograd engine benchmarks: backward time per node of a chain (`y = y.mul(1.0001)` n times: one node ready at
 * a time) and of a wide graph (`cat` of n separate 1-element products, summed: n nodes ready at once, which a
 * ready list scanned per pop would make quadratic), for n = 1k, 10k and 100k. The per-node figures should be
 * flat across sizes: the engine's counting, scheduling (a binary heap) and freeing are linear. The same two
 * shapes built from pass-through nodes that compute nothing ("engine only") show the engine's own cost apart
 * from the operators' (whose per-tensor cost grows with the number of live tensors the garbage collector sees).
 *
 * Each sample builds a fresh graph outside the timing (mitata's computed parameters) and times `backward()`
 * alone; the previous graph is disposed first, so graphs do not pile up.
 *
 * Run: `deno run -A bench/autograd_engine.bench.ts` or `bun bench/autograd_engine.bench.ts`.
 *
 * @module
 */
import { bench, do_not_optimize, group, runAndReport, smokeSize } from './_report.ts';
import { cat, Node, type Tensor, tensor } from '../mod.ts';
import { autogradStateOf } from '../core/autograd/autograd_meta.ts';

const SIZES = smokeSize([1_000, 10_000, 100_000], [100, 1_000]);
const f32 = { dtype: 'float32' as const };

/** A graph ready for backward: its root, and how to free it. */
interface Graph {
  readonly root: Tensor;
  dispose(): void;
}

/** `x.mul(1.0001)` n times: n MulBackward1 nodes and x's AccumulateGrad. Intermediates live through the graph. */
function chain(n: number): Graph {
  const x = tensor([1], f32).requiresGrad_();
  let y = x.mul(1.0001);
  for (let i = 1; i < n; i++) {
    const next = y.mul(1.0001);
    y.dispose();
    y = next;
  }
  return {
    root: y,
    dispose() {
      y.dispose();
      x.grad?.dispose();
      x.dispose();
    },
  };
}

/** `cat` of n products `x.mul(k)`, summed: SumBackward0, CatBackward0, n MulBackward1 and an AccumulateGrad. */
function wide(n: number): Graph {
  const x = tensor([0.5], f32).requiresGrad_();
  const parts = Array.from({ length: n }, (_, i) => x.mul((i % 7) - 3));
  const joined = cat(parts);
  for (const p of parts) p.dispose();
  const root = joined.sum();
  joined.dispose();
  return {
    root,
    dispose() {
      root.dispose();
      x.grad?.dispose();
      x.dispose();
    },
  };
}

/** A node that hands its gradient on unchanged to each of its inputs: the engine's work and nothing else. */
class PassThrough extends Node {
  name(): string {
    return 'PassThrough';
  }
  apply(grads: Array<Tensor | null>): Array<Tensor | null> {
    return this.nextEdges.map(() => grads[0]);
  }
}

/** A root tensor whose history is `node`. */
function rootOf(node: Node): Graph {
  const root = tensor([1], f32);
  autogradStateOf(root).setHistory(node, 0);
  return { root, dispose: () => root.dispose() };
}

/** n pass-through nodes in a chain. */
function engineChain(n: number): Graph {
  let node = new PassThrough([]);
  for (let i = 1; i < n; i++) node = new PassThrough([{ node, inputNr: 0 }]);
  return rootOf(node);
}

/** One pass-through node with n pass-through inputs. */
function engineWide(n: number): Graph {
  return rootOf(new PassThrough(Array.from({ length: n }, () => ({ node: new PassThrough([]), inputNr: 0 }))));
}

const BUILDERS = { chain, wide, 'chain (engine only)': engineChain, 'wide (engine only)': engineWide } as const;
type Kind = keyof typeof BUILDERS;
/** The nodes backward runs in each graph. */
const NODES: Record<Kind, (n: number) => number> = {
  chain: (n) => n + 1,
  wide: (n) => n + 3,
  'chain (engine only)': (n) => n,
  'wide (engine only)': (n) => n + 1,
};
const benchName = (kind: Kind, n: number) => `backward, ${kind}, ${n} nodes`;

// Warm the engine and the operators up before mitata's first sample (its own warm-up is a few calls).
for (const build of Object.values(BUILDERS)) {
  for (let i = 0; i < 20; i++) {
    const graph = build(1_000);
    graph.root.backward();
    graph.dispose();
  }
}

for (const kind of Object.keys(BUILDERS) as Kind[]) {
  group(`backward per node, ${kind}`, () => {
    for (const n of SIZES) {
      const name = benchName(kind, n);
      let previous: Graph | undefined;
      bench(name, function* () {
        yield {
          [0]() {
            previous?.dispose();
            previous = BUILDERS[kind](n);
            return previous;
          },
          bench(graph: Graph) {
            graph.root.backward();
            do_not_optimize(graph);
          },
        };
      });
    }
  });
}

await runAndReport('autograd_engine', (figures) => {
  const perNode: Record<string, Record<string, number>> = {};
  const rows: Array<Record<string, string | number>> = [];
  for (const kind of Object.keys(BUILDERS) as Kind[]) {
    perNode[kind] = {};
    let first: number | undefined;
    for (const n of SIZES) {
      const name = benchName(kind, n);
      const p50 = figures.get(name)?.p50_ns;
      if (p50 === undefined) continue;
      const ns = p50 / NODES[kind](n);
      first ??= ns;
      perNode[kind][n] = Number(ns.toFixed(1));
      rows.push({
        graph: kind,
        nodes: n,
        'backward p50 (ms)': Number((p50 / 1e6).toFixed(2)),
        'ns per node': Number(ns.toFixed(1)),
        'ratio to 1k': Number((ns / first).toFixed(2)),
      });
    }
  }
  console.table(rows);
  return { ns_per_node_p50: perNode, table: rows };
});
