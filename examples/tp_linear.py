"""tp_linear.py -- a tensor-parallel MLP block with marlin-gen's layers, one process per GPU:
Llama-3-70B's (hidden 8192, intermediate 28672; --hidden/--inter for others) at TP = the
world size, as engines split it:
  gate_up  column-parallel: rank r holds rows r of gate and of up (N / TP each), so
           SiLU(gate) * up needs nothing from the other ranks;
  down     row-parallel: rank r holds columns r (K / TP) of down; the ranks' partial outputs
           are summed by torch.distributed.all_reduce over NCCL.
Every rank makes the same dense FP16 weights (one seed, on its GPU), quantizes its slices with
marlin_gen.torch.Linear.quantize (u4b8 g128: groups lie inside a slice, so the slices' codes are
the whole layer's), and runs the block on the same input. --check: rank 0 also runs the block
unsplit on its GPU (the single-GPU reference: the same codes, the sum over K in one piece) and
every M's output must match it within the all-reduce's extra FP16 roundings (see check()).
Then, per M: each rank's GEMM times (CUDA events, median) beside cuBLAS FP16 on the same dense
slices (F.linear), and the block's time with the all-reduce; rank 0 prints the slowest rank's.
  torchrun --nproc-per-node N examples/tp_linear.py [--tokens 1,16,128] [--check] [--reps 50]
(or python3 -m torch.distributed.run ...; N = 1 runs the same code on one GPU). Needs PyTorch
with NCCL, CUDA GPUs and libmgen.so (MGEN_LIBRARY, or installed with the package). Exits 1
where a check fails."""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "runtime",
                                "python"))  # the package from this source tree, if not installed
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from marlin_gen.torch import Linear  # noqa: E402

GROUP = 128


def dense_weights(hidden, inter, dev):
    """The whole block's FP16 weights, the same on every rank: gate_up [2 inter, hidden] (gate
    rows, then up rows) and down [hidden, inter], ~N(0, 1/fan_in)."""
    g = torch.Generator(device=dev).manual_seed(1234)
    gate_up = (torch.randn(2 * inter, hidden, generator=g, device=dev) / hidden**0.5).half()
    down = (torch.randn(hidden, inter, generator=g, device=dev) / inter**0.5).half()
    return gate_up, down


def slices(gate_up, down, inter, rank, tp):
    """Rank r's gate_up rows ([gate_r; up_r]) and down columns."""
    part = inter // tp
    rows = slice(rank * part, (rank + 1) * part)
    gu = torch.cat([gate_up[:inter][rows], gate_up[inter:][rows]]).contiguous()
    return gu, down[:, rows].contiguous()


def block(gate_up, down, x, group=None):
    """SiLU(gate) * up through the rank's layers (or dense weights: F.linear), then down; the
    all-reduce when a process group is given."""
    h = gate_up(x) if callable(gate_up) else F.linear(x, gate_up)
    gate, up = h.chunk(2, dim=-1)
    y = down(F.silu(gate) * up) if callable(down) else F.linear(F.silu(gate) * up, down)
    if group is not None:
        dist.all_reduce(y, group=group)
    return y


def check(y, ref, tp):
    """y (TP ranks' partials, each rounded to FP16 and summed by the all-reduce in FP16)
    against ref (the same codes, the sum over K in one piece). They differ by roundings only:
    the partials' and the all-reduce's (TP + 1 of u = 2^-11 relative, per element), and the
    intermediate h = SiLU(gate) * up where the two runs' kernels (other N, other tiles) round
    differently (u |h|, carried through down). A wrong slice, a gate/up mix-up or a missing
    all-reduce is off by O(1). Returns (RMS |y - ref| / RMS |ref|, max |y - ref| / max |ref|)
    and their limits: 4 (TP + 1) u and 16 (TP + 1) u."""
    u = 2.0**-11
    d, r = y.double() - ref.double(), ref.double()
    ratios = ((d.pow(2).mean() / r.pow(2).mean()).sqrt().item(),
              d.abs().max().item() / r.abs().max().item())
    return ratios, (4 * (tp + 1) * u, 16 * (tp + 1) * u)


def median_us(fn, reps):
    """Median GPU time of fn() in microseconds: all reps enqueued behind a sleep kernel (so the
    host is ahead of the GPU and launch gaps stay out), each between two events."""
    for _ in range(3):
        fn()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(reps)]
    torch.cuda.synchronize()
    torch.cuda._sleep(20_000_000)
    for start, stop in events:
        start.record()
        fn()
        stop.record()
    torch.cuda.synchronize()
    return statistics.median(start.elapsed_time(stop) * 1000.0 for start, stop in events)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hidden", type=int, default=8192)
    ap.add_argument("--inter", type=int, default=28672)
    ap.add_argument("--tokens", default="1,16,128", help="tokens per step, comma-separated")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--check", action="store_true", help="against the unsplit block on rank 0")
    args = ap.parse_args()
    ms = [int(v) for v in args.tokens.split(",")]
    dist.init_process_group("nccl")
    rank, tp = dist.get_rank(), dist.get_world_size()
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    part = args.inter // tp
    if args.inter % tp or part % GROUP or part % 64:
        sys.exit(f"tp_linear: intermediate {args.inter} / TP {tp} = {args.inter / tp} is not a "
                 f"multiple of {GROUP} (a quantization group) and 64 (the packed layout)")
    gate_up, down = dense_weights(args.hidden, args.inter, dev)
    gu, dn = slices(gate_up, down, args.inter, rank, tp)
    layer_gu, layer_dn = Linear.quantize(gu, "u4b8", GROUP), Linear.quantize(dn, "u4b8", GROUP)
    full = None
    if args.check and rank == 0:
        full = (Linear.quantize(gate_up, "u4b8", GROUP), Linear.quantize(down, "u4b8", GROUP))
    if not args.check:
        del gate_up, down
    failed = 0
    rows = []
    for m in ms:
        g = torch.Generator(device=dev).manual_seed(m)
        x = torch.randn(m, args.hidden, generator=g, device=dev).half()  # the same on all ranks
        y = block(layer_gu, layer_dn, x, dist.group.WORLD)
        if full is not None:
            (rms, worst), (rms_limit, worst_limit) = check(y, block(*full, x), tp)
            ok = rms <= rms_limit and worst <= worst_limit
            failed += not ok
            print(f"check M={m}: TP{tp} against the unsplit block: RMS ratio {rms:.2e} (limit "
                  f"{rms_limit:.2e}), max ratio {worst:.2e} (limit {worst_limit:.2e}) "
                  f"{'ok' if ok else 'FAIL'}", flush=True)
        a = (torch.randn(m, part, generator=g, device=dev) * 0.1).half()  # down's input
        t = torch.tensor([median_us(lambda: layer_gu(x), args.reps),
                          median_us(lambda: layer_dn(a), args.reps),
                          median_us(lambda: F.linear(x, gu), args.reps),
                          median_us(lambda: F.linear(a, dn), args.reps),
                          median_us(lambda: block(layer_gu, layer_dn, x, dist.group.WORLD),
                                    args.reps),
                          median_us(lambda: block(gu, dn, x, dist.group.WORLD), args.reps)],
                         device=dev)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)  # the slowest rank sets the step's time
        rows.append((m, *t.tolist()))
    if rank == 0:
        print(f"TP {tp}, hidden {args.hidden}, intermediate {args.inter}, u4b8 g128 FP16, "
              f"us (median of {args.reps}, slowest rank):")
        print("    M  gate_up  cuBLAS  x     down  cuBLAS  x     block  cuBLAS block  x")
        for m, gu_us, dn_us, gu_ref, dn_ref, blk, blk_ref in rows:
            print(f"{m:5d} {gu_us:8.1f} {gu_ref:7.1f} {gu_ref / gu_us:4.2f} {dn_us:8.1f} "
                  f"{dn_ref:7.1f} {dn_ref / dn_us:4.2f} {blk:9.1f} {blk_ref:12.1f} "
                  f"{blk_ref / blk:4.2f}")
    dist.destroy_process_group()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
