"""PyTorch baseline for Switchyard's benchmark tables, run by hand (CI has no PyTorch).

Measures, with one thread and with every core, what bench/tensor_ops.bench.ts and bench/training.bench.ts measure:
a 1-element float32 add with its result freed, add and sum of 16M float32, float32 matmul 256 and 1024 (plain and
with a transposed first operand), one SGD step of the MLP 784-256-10 (batch 64, ReLU, cross-entropy), and the autograd
overhead of one recorded op on 1-element tensors. The load average at the start is recorded: the machine is shared,
so compare runs made at a low load. Medians of repeated timings (time.perf_counter_ns). Writes
bench/results/pytorch.json, which bench/figures.ts puts beside Switchyard's figures.

Run (Debian 12: apt install python3-torch libopenblas0-pthread):
    /usr/bin/python3 bench/pytorch/baseline.py
The JSON records the PyTorch version, the BLAS library the process loaded and the thread counts.
"""

import datetime
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

import torch


def blas_library():
    """The BLAS shared object this process mapped (Debian's torch links the generic libblas alternative)."""
    with open('/proc/self/maps') as maps:
        for line in maps:
            if 'blas' in line and '.so' in line:
                return os.path.realpath(line.split()[-1])
    return None


def median_ns(fn, *, min_time=0.5, min_runs=5, inner=1):
    """Median time per call of fn over runs of `inner` calls each, after a warm-up."""
    for _ in range(3):
        fn()
    samples = []
    start = time.perf_counter()
    while len(samples) < min_runs or time.perf_counter() - start < min_time:
        t0 = time.perf_counter_ns()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter_ns() - t0) / inner)
        if len(samples) > 10_000:
            break
    return statistics.median(samples)


def measure(threads):
    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(0)
    out = {}

    a1, b1 = torch.rand(1, generator=g), torch.rand(1, generator=g)
    out['add_1_element_ns'] = median_ns(lambda: torch.add(a1, b1), inner=1000)

    n = 1 << 24
    x, y = torch.rand(n, generator=g), torch.rand(n, generator=g)
    z = torch.empty(n)
    add_ns = median_ns(lambda: torch.add(x, y))
    add_out_ns = median_ns(lambda: torch.add(x, y, out=z))
    sum_ns = median_ns(lambda: torch.sum(x))
    # A new 64 MiB result per call: glibc returns such blocks to the system when freed, so every call page-faults
    # its output in; `out=` writes into one preallocated tensor instead.
    out['add_16M_gbps'] = 3 * 4 * n / add_ns
    out['add_16M_out_gbps'] = 3 * 4 * n / add_out_ns
    out['sum_16M_gbps'] = 4 * n / sum_ns

    out['matmul_gflops'] = {}
    for size in (256, 1024):
        a, b = torch.rand(size, size, generator=g), torch.rand(size, size, generator=g)
        at = a.t()
        plain = median_ns(lambda: torch.mm(a, b))
        transposed = median_ns(lambda: torch.mm(at, b))
        out['matmul_gflops'][str(size)] = {'plain': 2 * size**3 / plain, 'a_transposed': 2 * size**3 / transposed}

    w1 = (torch.rand(784, 256, generator=g) - 0.5) * 0.1
    w2 = (torch.rand(256, 10, generator=g) - 0.5) * 0.1
    w1.requires_grad_(True)
    w2.requires_grad_(True)
    bias1 = torch.zeros(256, requires_grad=True)
    bias2 = torch.zeros(10, requires_grad=True)
    params = [w1, bias1, w2, bias2]
    opt = torch.optim.SGD(params, lr=0.01)
    xb = torch.rand(64, 784, generator=g)
    yb = torch.randint(0, 10, (64,), generator=g)

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(torch.relu(xb @ w1 + bias1) @ w2 + bias2, yb)
        loss.backward()
        opt.step()

    out['sgd_step_ms'] = median_ns(step) / 1e6

    r1 = torch.rand(1, generator=g).requires_grad_(True)
    r2 = torch.rand(1, generator=g).requires_grad_(True)
    recorded = median_ns(lambda: torch.add(r1, r2), inner=1000)
    with torch.no_grad():
        unrecorded = median_ns(lambda: torch.add(r1, r2), inner=1000)
    out['autograd_overhead_ns'] = recorded - unrecorded
    return out


def measure_in_subprocess(threads):
    """measure(threads) in a fresh interpreter whose BLAS and OpenMP pools have that many threads: OpenBLAS keeps its
    own pthreads, which torch.set_num_threads does not limit, so the limit must be in the environment at start."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, __file__, '--measure', str(threads)], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == '--measure':
        print(json.dumps(measure(int(sys.argv[2]))))
        return
    cores = os.cpu_count() or 1
    result = {
        'suite': 'pytorch',
        'date': datetime.datetime.now(datetime.timezone.utc).isoformat(),
        'torch': torch.__version__,
        'blas': blas_library(),
        'cores': cores,
        'load_average': os.getloadavg(),
        'one_thread': measure_in_subprocess(1),
        'all_threads': measure_in_subprocess(cores),
    }
    path = pathlib.Path(__file__).resolve().parent.parent / 'results' / 'pytorch.json'
    path.write_text(json.dumps(result, indent=2) + '\n')
    print(json.dumps(result, indent=2))


if __name__ == '__main__':
    main()
