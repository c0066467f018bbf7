"""test_marlin_gen_gpu.py -- the Python package on the GPU with PyTorch: a GPTQ layer built in
the test (random codes and scales, packed as the checkpoint stores them) imported, its GEMM
against torch.matmul on the dequantized weight, the same through torch.ops.marlin_gen.gemm
eagerly, under torch.compile and replayed from a CUDA graph; then the same codes through
Context.pack, and NVFP4 and MXFP4 layers through Context.import_fp4. Exits 77 (skipped) only
without PyTorch or a GPU; a library that does not load (MGEN_LIBRARY, set by CMake) fails.
Run: MGEN_LIBRARY=build/.../libmgen.so python3 tests/python/test_marlin_gen_gpu.py ROOT"""
import os
import sys

sys.path.insert(0, os.path.join(sys.argv[1], "runtime", "python"))
try:
    import torch
except ImportError:
    print("SKIPPED: PyTorch is not installed")
    sys.exit(77)
if not torch.cuda.is_available():
    print("SKIPPED: no CUDA device")
    sys.exit(77)
import marlin_gen  # noqa: E402

try:
    lib = marlin_gen.load()
except marlin_gen.LibraryNotFound as e:
    print(f"FAIL: {e}")
    sys.exit(1)
if os.environ.get("MGEN_LIBRARY") and lib._name != os.environ["MGEN_LIBRARY"]:
    print(f"FAIL: MGEN_LIBRARY={os.environ['MGEN_LIBRARY']} did not load; the package fell back to {lib._name}")
    sys.exit(1)
import marlin_gen.torch_ops  # noqa: E402,F401

torch.manual_seed(0)
N, K, G, M = 256, 512, 128, 16
dev = torch.device("cuda")
codes = torch.randint(0, 16, (N, K), dtype=torch.int32)
scales = (torch.rand(K // G, N) * 0.02 + 0.001).half()
# GPTQ qweight [K/8, N]: code k of column n at bits 4 (k % 8) of row k / 8
qweight = torch.zeros(K // 8, N, dtype=torch.int64)
for b in range(8):
    qweight |= codes.t()[b::8].to(torch.int64) << (4 * b)
qweight = torch.where(qweight >= 2**31, qweight - 2**32, qweight).to(torch.int32)  # as stored
w_dq = (codes.float() - 8) * scales.float().repeat_interleave(G, 0).t()

ctx = marlin_gen.torch_ops.context()
desc, qb, sb = ctx.describe_weights(N, K, act="f16", group=G)
q = torch.empty(qb, dtype=torch.uint8, device=dev)
s = torch.empty(sb, dtype=torch.uint8, device=dev)
wt = ctx.import_gptq(desc, q, s, qweight.to(dev), scales.to(dev), zeros="auto")
a = torch.randn(M, K, device=dev).half()
ref = a.float() @ w_dq.to(dev).t()
c = torch.empty(M, N, dtype=torch.half, device=dev)
ctx.gemm(a, wt, c, stream=torch.cuda.current_stream().cuda_stream)
failures = []


def close(name, got):
    err = (got.float() - ref).abs().max().item()
    bound = 2e-3 * ref.abs().max().item() + 1e-2
    print(f"{name}: max error {err:.3g} (bound {bound:.3g})")
    if not err <= bound:
        failures.append(name)


close("Context.gemm", c)
op = torch.ops.marlin_gen.gemm
close("torch.ops.marlin_gen.gemm", op(a, q, s, N, K, G, "u4b8", "group"))
compiled = torch.compile(lambda x: op(x, q, s, N, K, G, "u4b8", "group"), fullgraph=True)
close("torch.compile", compiled(a))
static_a = a.clone()
graph = torch.cuda.CUDAGraph()
op(static_a, q, s, N, K, G, "u4b8", "group")  # first call on this stream: its workspace
with torch.cuda.graph(graph):
    out = op(static_a, q, s, N, K, G, "u4b8", "group")
out.zero_()
graph.replay()
torch.cuda.synchronize()
close("CUDA graph replay", out)
g_idx = (torch.arange(K, dtype=torch.int32) // G).flip(0).to(dev)  # act order
try:
    ctx.import_gptq(desc, q, s, qweight.to(dev), scales.to(dev), g_idx=g_idx)
    failures.append("act-order g_idx accepted")
except marlin_gen.MgenError as e:
    print(f"refused as expected: {e}")
    if e.status != -5 or "act-order" not in e.message:
        failures.append("act-order g_idx: wrong status or message")


def check(name, wt, w_ref, act=torch.half):
    """wt's GEMM against a @ w_ref^T (w_ref: the dequantized n x k weight, FP32)."""
    x = torch.randn(M, w_ref.shape[1], device=dev).to(act)
    want = x.float() @ w_ref.to(dev).t()
    got = torch.empty(M, w_ref.shape[0], dtype=act, device=dev)
    ctx.gemm(x, wt, got, stream=torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    err = (got.float() - want).abs().max().item()
    bound = 1e-2 * want.abs().max().item() + 1e-2
    print(f"{name}: max error {err:.3g} (bound {bound:.3g})")
    if not err <= bound:
        failures.append(name)


desc, qb, sb = ctx.describe_weights(N, K, act="f16", group=G)
q2 = torch.empty(qb, dtype=torch.uint8, device=dev)
s2 = torch.empty(sb, dtype=torch.uint8, device=dev)
check("Context.pack", ctx.pack(desc, q2, s2, codes.to(torch.uint8).to(dev), scales.to(dev)), w_dq)

# FP4: E2M1 codes, two per byte, the low nibble the lower k (ModelOpt / OCP MX storage).
E2M1 = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])
fp4 = torch.randint(0, 16, (N, K), dtype=torch.int32)
packed = (fp4[:, 0::2] | (fp4[:, 1::2] << 4)).to(torch.uint8)
for scheme, group in (("nvfp4", 16), ("mxfp4", 32)):
    if scheme == "nvfp4":  # E4M3 block scales (as uint8 bits) and the FP32 global scale
        block = (torch.rand(N, K // group) * 2 + 0.25).to(torch.float8_e4m3fn)
        bits, global_scale = block.view(torch.uint8), 0.01
        per = block.float() * global_scale
    else:  # E8M0: 2^(e - 127)
        bits = torch.randint(120, 130, (N, K // group), dtype=torch.uint8)
        global_scale, per = 1.0, torch.pow(2.0, bits.float() - 127)
    w_ref = E2M1[fp4] * per.repeat_interleave(group, 1)
    for act in ("f16", "bf16"):
        desc, qb, sb = ctx.describe_weights(N, K, act=act, wfmt="fe2m1", group=group)
        q3 = torch.empty(qb, dtype=torch.uint8, device=dev)
        s3 = torch.empty(sb, dtype=torch.uint8, device=dev)
        wt = ctx.import_fp4(desc, q3, s3, packed.to(dev), bits.to(dev), global_scale)
        check(f"Context.import_fp4 {scheme} {act}", wt, w_ref,
              torch.half if act == "f16" else torch.bfloat16)
print("FAIL: " + ", ".join(failures) if failures else "PASS")
sys.exit(1 if failures else 0)
