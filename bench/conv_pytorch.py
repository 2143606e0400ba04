# PyTorch 1.13's figures for bench/conv.bench.ts's convolution, measured by hand (not part of `npm run bench`):
#   /usr/bin/python3 bench/conv_pytorch.py            # torch.set_num_threads(1), then PyTorch's default
# The same 3x3 convolution (batch 32, 64 -> 64 channels, 32x32, padding 1, float32): the forward under no_grad,
# the input gradient as conv_transpose2d under no_grad, and forward + backward (input and weight gradients).
# Median of 9 calls after 2 warm-ups, in milliseconds.
import statistics
import time

import torch
import torch.nn.functional as F

default_threads = torch.get_num_threads()
torch.manual_seed(0)
x = torch.randn(32, 64, 32, 32)
w = torch.randn(64, 64, 3, 3) * 0.05
dy = torch.randn(32, 64, 32, 32)
xg = x.clone().requires_grad_()
wg = w.clone().requires_grad_()


def median_ms(f, n=9):
    f()
    f()
    times = []
    for _ in range(n):
        start = time.perf_counter()
        f()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def forward():
    with torch.no_grad():
        F.conv2d(x, w, None, 1, 1)


def input_gradient():
    with torch.no_grad():
        F.conv_transpose2d(dy, w, None, 1, 1)


def forward_backward():
    F.conv2d(xg, wg, None, 1, 1).backward(dy)
    xg.grad = None
    wg.grad = None


for threads in sorted({1, default_threads}):
    torch.set_num_threads(threads)
    print(
        f"torch {torch.__version__}, {threads} thread(s): forward {median_ms(forward):.1f} ms, "
        f"input gradient {median_ms(input_gradient):.1f} ms, forward + backward {median_ms(forward_backward):.1f} ms"
    )
