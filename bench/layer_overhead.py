"""layer_overhead.py -- host time per eager call of marlin_gen.torch.Linear against the C API
called through ctypes with everything prepared, the layer under torch.compile, the generic
torch.ops.marlin_gen.gemm (which describes the weights on every call) and torch's own F.linear,
and on sm_90 the W4A8 layer (activations "e4m3": two launches a call), on a tiny layer (N =
K = 256, GPTQ g128, FP16) at M = 1, where the host's time is the whole cost of a decode step.

Host time: the GPU is held busy first (torch.cuda._sleep), so N calls only enqueue, and the
loop's wall time over N is what the host spends per call (allocation, checks, the C call and
its launch), the kernel excluded; median of REPS rounds. Then "eager minus kernel": 10000
calls between two synchronizations, less the kernel's own time (replays of a CUDA graph of
100 calls), and a graph replay's host time per captured layer call (the graph path's
overhead). Three "floor" rows time what any eager layer that launches a kernel and
allocates its output pays on this host: one launch from Python (torch.cuda._sleep(0)), one
torch.empty of the output, one nn.Module call of a forward that returns its input; their sum
is printed beside Linear's time. Target (issue #53): Linear's host time <= 5 us per call;
`--check` exits 1 above it.
Run: MGEN_LIBRARY=build/runtime/libmgen.so python3 bench/layer_overhead.py [--check]"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "runtime",
                                "python"))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import marlin_gen.torch_ops  # noqa: E402
from marlin_gen.torch import Linear  # noqa: E402
from marlin_gen.layers import _raw_stream  # noqa: E402

N = K = 256
G = 128
CALLS, REPS = 200, 25
TARGET_US = 5.0
dev = torch.device("cuda")
torch.manual_seed(0)


def gptq_tensors():
    codes = torch.randint(0, 16, (N, K), dtype=torch.int64)
    qweight = torch.zeros(K // 8, N, dtype=torch.int64)
    for b in range(8):
        qweight |= codes.t()[b::8] << (4 * b)
    qweight = torch.where(qweight >= 2**31, qweight - 2**32, qweight).to(torch.int32)
    scales = (torch.rand(K // G, N) * 0.02 + 0.001).half()
    return qweight.to(dev), scales.to(dev)


def host_us(fn):
    """Median host microseconds per fn() while the GPU is busy (launches only enqueue)."""
    samples = []
    for _ in range(REPS):
        torch.cuda.synchronize()
        torch.cuda._sleep(50_000_000)  # ~25 ms of GPU time: longer than CALLS host calls
        t0 = time.perf_counter()
        for _ in range(CALLS):
            fn()
        samples.append((time.perf_counter() - t0) / CALLS * 1e6)
    torch.cuda.synchronize()
    return statistics.median(samples)


def main():
    qweight, scales = gptq_tensors()
    layer = Linear.from_gptq(qweight, None, scales, group_size=G)
    biased = Linear.from_gptq(qweight, None, scales, group_size=G,
                              bias=torch.randn(N, device=dev).half())
    x = torch.randn(1, K, device=dev).half()
    out = torch.empty(1, N, device=dev).half()
    dense = torch.randn(N, K, device=dev).half()
    gemm, ctx, desc_ref = layer._gemm, layer._ctx_ptr, layer._desc_ref
    act, xp, op_p = layer._act, x.data_ptr(), out.data_ptr()
    op = torch.ops.marlin_gen.gemm
    compiled = torch.compile(layer, fullgraph=True)  # marlin_gen::linear in the graph
    passthrough = torch.nn.Identity()  # nn.Module's call by itself

    def c_api():
        gemm(ctx, act, 1, xp, desc_ref, op_p, _raw_stream(0))

    cases = (("C API through ctypes (prepared)", c_api),
             ("Linear.forward(x, out=)", lambda: layer.forward(x, out)),
             ("Linear.forward(x)", lambda: layer.forward(x)),
             ("Linear(x)  [nn.Module call]", lambda: layer(x)),
             ("Linear(x) with bias", lambda: biased(x)),
             ("torch.compile(Linear)(x)", lambda: compiled(x)),
             ("torch.ops.marlin_gen.gemm", lambda: op(x, layer.q, layer.scales, N, K, G, "u4b8",
                                                      "group")),
             ("F.linear, dense FP16 (torch's own)", lambda: F.linear(x, dense)),
             # the floor under any eager layer that launches a kernel and allocates its output
             ("floor: one launch (torch.cuda._sleep(0))", lambda: torch.cuda._sleep(0)),
             ("floor: torch.empty of the output", lambda: torch.empty((1, N), dtype=torch.half,
                                                                       device=dev)),
             ("floor: nn.Module call, empty forward", lambda: passthrough(x)))
    if torch.cuda.get_device_capability(dev)[0] == 9:  # the W4A8 kernels' family (sm_90a)
        a8 = Linear.from_gptq(qweight, None, scales, group_size=G, activations="e4m3")
        cases += (("Linear(x), W4A8 [quantize + GEMM]", lambda: a8(x)),)
    for _, fn in cases:  # warm up: workspaces, allocator, op registration
        fn()
    torch.cuda.synchronize()
    results = {}
    print(f"host us per call, M=1 N={N} K={K} g{G} fp16, median of {REPS} x {CALLS} calls "
          "(GPU busy):")
    for name, fn in cases:
        results[name] = host_us(fn)
        print(f"  {name:38s} {results[name]:7.2f}")

    # eager minus kernel: 10000 calls between two synchronizations
    graph = torch.cuda.CUDAGraph()
    static_x = x.clone()
    layer(static_x)
    with torch.cuda.graph(graph):
        for _ in range(100):
            y = layer(static_x)
    graph.replay()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(20):
        graph.replay()
    host_replay = (time.perf_counter() - t0) / 20
    torch.cuda.synchronize()
    kernel_us = (time.perf_counter() - t0) / 2000 * 1e6
    t0 = time.perf_counter()
    for _ in range(10000):
        y = layer(x)
    torch.cuda.synchronize()
    eager_us = (time.perf_counter() - t0) / 10000 * 1e6
    del y
    print(f"10000 eager Linear(x) calls: {eager_us:.2f} us per call; the kernel alone (graph "
          f"replay): {kernel_us:.2f} us; eager minus kernel: {eager_us - kernel_us:.2f} us")
    print(f"CUDA graph: host time per replay of 100 layer calls {host_replay * 1e6:.1f} us "
          f"({host_replay * 1e6 / 100:.3f} us per layer call)")
    total = results["Linear(x)  [nn.Module call]"]
    c_api = results["C API through ctypes (prepared)"]
    verdict = "within" if total <= TARGET_US else "OVER"
    print(f"Linear(x) host time {total:.2f} us per call: {verdict} the {TARGET_US} us target; "
          f"the C call through ctypes (its launch included) {c_api:.2f} us of it, the layer's "
          f"own Python {total - c_api:.2f} us")
    floor = sum(v for k, v in results.items() if k.startswith("floor:"))
    print(f"the floor of an eager layer call on this host (one launch, one output allocation, "
          f"one nn.Module call): {floor:.2f} us; Linear(x) over it: {total - floor:.2f} us")
    if "--check" in sys.argv and total > TARGET_US:
        sys.exit(1)


if __name__ == "__main__":
    if not torch.cuda.is_available():
        print("SKIPPED: no CUDA device")
        sys.exit(77)
    main()
