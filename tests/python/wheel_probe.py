"""wheel_probe.py MODE -- run by test_wheel.py in a fresh interpreter whose marlin_gen is an
installed wheel (no MGEN_LIBRARY, working directory outside the source tree); prints one JSON
object on its last line:
  package, version: marlin_gen.__file__ and __version__
  library: the path marlin_gen.load() loaded libmgen.so from; torch_before: whether PyTorch
    was imported by then
  mapped: the libmgen.so files this process maps (/proc/self/maps)
  cudart_before, cudart: the libcudart files mapped after loading libmgen (before PyTorch) and
    at the end, each "path" once per distinct file (device and inode)
  worst: the GEMM's worst |error| / bound (GPU modes)
MODE: load (CPU: import and load only); mgen-first (GPU: load libmgen, then import torch, then
quantize and GEMM); torch-first (GPU: import torch first, then the same).
The GEMM: u4b8 g128 FP16 weights quantized on the GPU (mgen_quantize), then c = a @ W^T, against
an FP64 reference over the weights dequantized by mgen.h's rule (s = fp16(2 max|w| / 15),
q = clamp(rint(w / s) + 8, 0, 15)), within tests/gpu/gemm_formats.c's bound
|c - ref| <= 2u |ref| + (2u + K 2^-22) sum_k |a_k w_k| (u = 2^-11)."""
import json
import os
import sys


def mapped(pred):
    """The files this process maps whose base name passes pred: {(dev, inode): path}."""
    out = {}
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6 and pred(os.path.basename(parts[5].strip())):
                out[(parts[3], parts[4])] = parts[5].strip()
    return out


def cudart():
    return sorted(mapped(lambda name: name.startswith("libcudart.so")).values())


def gemm(marlin_gen, torch):
    torch.manual_seed(0)
    n, k, m, group = 256, 512, 16, 128
    dev = torch.device("cuda")
    w = (torch.randn(n, k, device=dev) * 0.05).half()
    a = torch.randn(m, k, device=dev).half()
    ctx = marlin_gen.Context()
    desc, qb, sb = ctx.describe_weights(n, k, act="f16", wfmt="u4b8", group=group)
    q, s = (torch.empty(b, dtype=torch.uint8, device=dev) for b in (qb, sb))
    stream = torch.cuda.current_stream().cuda_stream
    wt = ctx.quantize(w, desc, q, s, stream=stream)
    c = torch.empty(m, n, dtype=torch.half, device=dev)
    ctx.gemm(a, wt, c, stream=stream)
    torch.cuda.synchronize()
    # mgen.h's GROUP rule, in FP32 as the library computes it
    wg = w.float().reshape(n, k // group, group)
    scale = (wg.abs().amax(dim=2, keepdim=True) / 7.5).half().float()  # 2 max / 15, as prepare.cu
    scale = torch.where(scale == 0, torch.ones_like(scale), scale)
    codes = torch.clamp(torch.round(wg / scale) + 8, 0, 15)
    w_exact = ((codes - 8) * scale).reshape(n, k).double()
    a64 = a.double()
    ref = a64 @ w_exact.t()
    u = 2.0**-11
    bound = 2 * u * ref.abs() + (2 * u + k * 2.0**-22) * (a64.abs() @ w_exact.abs().t())
    err = (c.double() - ref).abs()
    if not bool(torch.isfinite(c.float()).all()):
        return float("inf")
    return float((err / bound).max())


def main():
    mode = sys.argv[1]
    if mode not in ("load", "mgen-first", "torch-first"):
        sys.exit(f"wheel_probe.py: unknown mode {mode!r}")
    torch = None
    if mode == "torch-first":
        import torch
    import marlin_gen

    lib = marlin_gen.load()
    out = {"package": marlin_gen.__file__, "version": marlin_gen.__version__,
           "library": lib._name, "torch_before": "torch" in sys.modules,
           "mapped": sorted(mapped(lambda name: name.startswith("libmgen.so")).values()),
           "cudart_before": cudart()}
    if mode != "load":
        if torch is None:
            import torch
        out["worst"] = gemm(marlin_gen, torch)
    out["cudart"] = cudart()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
