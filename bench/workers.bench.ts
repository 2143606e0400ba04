/**
 * Intra-op threads: the same kernels on one thread and on every core the runtime reports, in one run: a 1024 x
 * 1024 float32 matmul, a [256, 1024] @ [1024, 1024] one (where packing B is a larger share of the work: row panels
 * share one packed B, Note [Shared packed B] in kernels_as/matmul.ts), a 16M-element float32 add and sum, and one SGD step of the 784-256-10 MLP (batch 64) of
 * bench/training.bench.ts. Each benchmark sets its thread count in its set-up and waits there for the workers,
 * so no timed call starts one.
 *
 * Run: `deno run -A bench/workers.bench.ts` or `bun bench/workers.bench.ts`.
 *
 * @module
 */
import { add, empty, getNumThreads, manualSeed, matmul, randn, scope, setNumThreads, sum, tensor } from '../mod.ts';
import { CrossEntropyLoss, Linear, ReLU, Sequential } from '../core/nn/mod.ts';
import { SGD } from '../core/optim/mod.ts';
import { startCpuThreads } from '../core/cpu/parallel.ts';
import { bench, type BenchFigure, do_not_optimize, group, runAndReport, smokeSize, summary } from './_report.ts';

const cores = getNumThreads();
const COUNTS = cores > 1 ? [1, cores] : [1];
const threadsLabel = (n: number) => `${n} thread${n === 1 ? '' : 's'}`;

/** Sets the thread count and starts (and waits for) its workers: bench set-up, not timed. */
function useThreads(n: number): void {
  setNumThreads(n);
  startCpuThreads();
}

manualSeed(0);
const N = smokeSize(1024, 600);
const ma = randn([N, N]), mb = randn([N, N]);
const BIG = smokeSize(1 << 24, 1 << 19);
const xa = randn([BIG]), xb = randn([BIG]);

const MATMUL = `matmul ${N}x${N} float32`;
const SHORT = N / 4;
const sa = randn([SHORT, N]);
const MATMUL_SHORT = `matmul [${SHORT}, ${N}] @ [${N}, ${N}] float32`;
const ADD = 'add 16M float32';
const SUM = 'sum 16M float32';
const STEP = 'SGD step, MLP 784-256-10, batch 64';

group(MATMUL, () => {
  summary(() => {
    for (const n of COUNTS) {
      bench(`${MATMUL}, ${threadsLabel(n)}`, function* () {
        useThreads(n);
        yield () => matmul(ma, mb).dispose();
      });
    }
  });
});

group(MATMUL_SHORT, () => {
  summary(() => {
    for (const n of COUNTS) {
      bench(`${MATMUL_SHORT}, ${threadsLabel(n)}`, function* () {
        useThreads(n);
        yield () => matmul(sa, mb).dispose();
      });
    }
  });
});

group(ADD, () => {
  summary(() => {
    for (const n of COUNTS) {
      bench(`${ADD}, ${threadsLabel(n)}`, function* () {
        useThreads(n);
        yield () => add(xa, xb).dispose();
      });
    }
  });
});

group(SUM, () => {
  summary(() => {
    for (const n of COUNTS) {
      bench(`${SUM}, ${threadsLabel(n)}`, function* () {
        useThreads(n);
        yield () => {
          const s = sum(xa);
          do_not_optimize(s);
          s.dispose();
        };
      });
    }
  });
});

/** The model of bench/training.bench.ts on seeded data, and one step of it. */
function trainingStep(): () => number {
  manualSeed(0);
  const model = new Sequential(new Linear(784, 256), new ReLU(), new Linear(256, 10));
  const lossFunction = new CrossEntropyLoss();
  const optimizer = new SGD(model.parameters(), { lr: 0.01 });
  const x = empty([64, 784], { dtype: 'float32' });
  const bytes = x.storage.bytes();
  const values = new Float32Array(bytes.buffer, bytes.byteOffset, 64 * 784);
  for (let i = 0; i < values.length; i++) values[i] = ((i * 2654435761) >>> 0) / 4294967296;
  const y = tensor(Array.from({ length: 64 }, (_, i) => (i * 7) % 10));
  return () =>
    scope(() => {
      const loss = lossFunction.call(model.call(x), y);
      loss.backward();
      optimizer.step();
      optimizer.zeroGrad();
      return loss.item() as number;
    });
}

group(STEP, () => {
  summary(() => {
    for (const n of COUNTS) {
      bench(`${STEP}, ${threadsLabel(n)}`, function* () {
        useThreads(n);
        const step = trainingStep();
        yield () => do_not_optimize(step());
      });
    }
  });
});

function derive(figures: Map<string, BenchFigure>): Record<string, unknown> {
  const p50 = (name: string) => figures.get(name)?.p50_ns;
  const out: Record<string, unknown> = { threads: COUNTS };
  for (const n of COUNTS) {
    const t = threadsLabel(n);
    const mm = p50(`${MATMUL}, ${t}`), ad = p50(`${ADD}, ${t}`), sm = p50(`${SUM}, ${t}`);
    if (mm !== undefined) out[`matmul GFLOP/s, ${t}`] = +((2 * N * N * N) / mm).toFixed(1);
    const short = p50(`${MATMUL_SHORT}, ${t}`);
    if (short !== undefined) out[`matmul [${SHORT}, ${N}] GFLOP/s, ${t}`] = +((2 * SHORT * N * N) / short).toFixed(1);
    if (ad !== undefined) out[`add GB/s, ${t}`] = +((3 * 4 * BIG) / ad).toFixed(1);
    if (sm !== undefined) out[`sum GB/s, ${t}`] = +((4 * BIG) / sm).toFixed(1);
  }
  const many = COUNTS[COUNTS.length - 1];
  if (many > 1) {
    for (const name of [MATMUL, MATMUL_SHORT, ADD, SUM, STEP]) {
      const one = p50(`${name}, 1 thread`), more = p50(`${name}, ${threadsLabel(many)}`);
      if (one !== undefined && more !== undefined) out[`speed-up ${name}, ${many} threads`] = +(one / more).toFixed(2);
    }
  }
  return out;
}

await runAndReport('workers', derive);
setNumThreads(1);
