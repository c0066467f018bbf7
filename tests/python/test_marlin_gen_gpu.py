"""test_marlin_gen_gpu.py -- the Python package on the GPU with PyTorch: a GPTQ layer built in
the test (random codes and scales, packed as the checkpoint stores them) imported, its GEMM
against torch.matmul on the dequantized weight, the same through torch.ops.marlin_gen.gemm
eagerly, under torch.compile and replayed from a CUDA graph; Context.gemm's bias= (added by
the GEMM: mgen_weights.d_bias); then the same codes through Context.pack, an AutoAWQ layer
through Context.import_awq (u4), NVFP4 and MXFP4 layers through Context.import_fp4, and FP8
activations by Context.quantize_act (and Context.gemm_a8 on sm_90). Exits 77 (skipped) only
without PyTorch or a GPU; a library that does not load (MGEN_LIBRARY, set by CMake) fails.
Run: MGEN_LIBRARY=build/.../libmgen.so python3 tests/python/test_marlin_gen_gpu.py ROOT"""
import math
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

# The checks: every GEMM against an FP64 reference over the exactly dequantized weights (codes
# times scales, computed in float64: exact), under the bound tests/gpu/gemm_formats.c derives
# for the kernels (u the act's unit roundoff, 2^-11 FP16, 2^-8 BF16; abs = sum_k |a_k w_k|):
#   u4b8:  |c - ref| <= 2u |ref| + (2u + K 2^-22) abs
#   fe2m1: |c - ref| <= 2u |ref| + K 2^-22 abs + tiny    (tiny 2^-24 FP16, 2^-132 BF16)
# (the fe2m1 data here have no slack: NVFP4's 16-bit weights are always exact, and the MXFP4 block
# exponents stay within 10 of their column's largest, inside FP16's exact range.) A NaN, an inf or
# an element over its bound fails (with a bias b, the reference is a @ w^T + b and the bound (1 + u)
# B + u |ref|, test_layer_gpu.py's: the GEMM adds b in FP32 before rounding); the worst |error| /
# bound is printed. Several shapes, with odd M. The worst-case bound is wide enough to pass 16-bit
# accumulation, so, as in test_gemm_gpu, the RMS ratio sqrt(sum err^2 / sum scale^2), scale = u
# sqrt(ref^2 + q^2) + tiny with q^2 = sum_k (a_k w_k)^2, must stay within RMS_LIMIT on every GEMM of
# at least RMS_MIN_ELEMS effective outputs (the derivation: tests/gpu/gemm_formats.c's header and
# tests/gpu/ref_gemm.h's gemm_rms_outputs: outputs weigh in by scale^2; a correct
# kernel is about 0.43 at most). Negative controls at the end prove the check fails a 16-bit
# accumulator and a global scale rounded to BF16, which the worst-case bound lets through (a global
# scale rounded to FP16, 0.43u here, is below what a statistical check can resolve: RMS ratio 0.434
# measured, as a correct kernel).
torch.manual_seed(0)
dev = torch.device("cuda")
SHAPES = ((256, 512), (768, 2048))  # (N, K)
MS = (1, 7, 16, 33, 100)
U = {"f16": 2.0**-11, "bf16": 2.0**-8}
TINY = {"f16": 2.0**-24, "bf16": 2.0**-132}
DTYPE = {"f16": torch.half, "bf16": torch.bfloat16}
RMS_LIMIT = 0.6  # test_gemm_gpu.c's GEMM_RMS_LIMIT and GEMM_RMS_MIN_ELEMS
RMS_MIN_ELEMS = 128
stream = torch.cuda.current_stream().cuda_stream
failures = []
checked = 0


def verdict(got, a, w_exact, act, wfmt, bias=None):
    """got (M x N, act) against a @ w_exact^T (+ bias) in float64: (worst |error|/bound, RMS
    ratio or None where too few outputs, the problems found: [] if none)."""
    k = a.shape[1]
    a64, w64 = a.double(), w_exact.to(dev).double()
    ref = a64 @ w64.t()
    abs_sum = a64.abs() @ w64.abs().t()
    sq_sum = (a64 * a64) @ (w64 * w64).t()
    u = U[act]
    tiny = 0.0 if wfmt == "u4b8" else TINY[act]
    if wfmt == "u4b8":
        bound = 2 * u * ref.abs() + (2 * u + k * 2.0**-22) * abs_sum
    else:
        bound = 2 * u * ref.abs() + k * 2.0**-22 * abs_sum + tiny
    if bias is not None:
        ref = ref + bias.double()
        bound = (1 + u) * bound + u * ref.abs()
    err = (got.double() - ref).abs()
    problems = []
    if not bool(torch.isfinite(got.float()).all()):
        problems.append("NaN/inf")
    ratio = (err / bound).max().item()
    if not ratio <= 1.0:
        bad = (err > bound).nonzero()[:1].tolist()
        problems.append(f"max |error|/bound {ratio:.3g}"
                        f"{f', first over at (row, col) {bad[0]}' if bad else ''}")
    rms = None
    weight = (u * (ref * ref + sq_sum).sqrt() + tiny) ** 2
    # The outputs the ratio weighs (ref_gemm.h's gemm_rms_outputs): (sum w)^2 / sum w^2.
    w_sum, w_sq = weight.sum().item(), (weight * weight).sum().item()
    outputs = w_sum * w_sum / w_sq if w_sq > 0 else 0.0
    if outputs >= RMS_MIN_ELEMS:
        rms = math.sqrt((err * err).sum().item() / w_sum)
        if not rms <= RMS_LIMIT:
            problems.append(f"RMS error {rms:.3g} x its scale (limit {RMS_LIMIT})")
    return ratio, rms, problems


def within(name, got, a, w_exact, act, wfmt, bias=None):
    """got within the format's bounds (verdict); a failure is recorded."""
    global checked
    ratio, rms, problems = verdict(got, a, w_exact, act, wfmt, bias)
    checked += 1
    shape = f"M={a.shape[0]} N={w_exact.shape[0]} K={a.shape[1]}"
    print(f"{name}: {shape}: max |error|/bound {ratio:.3g}"
          f"{f', RMS ratio {rms:.3g}' if rms is not None else ''}")
    if problems:
        failures.append(f"{name} {shape}: {'; '.join(problems)}")


def gemm(wt, a, bias=None):
    c = torch.empty(a.shape[0], wt.n, dtype=a.dtype, device=dev)
    ctx.gemm(a, wt, c, stream=stream, bias=bias)
    torch.cuda.synchronize()
    return c


def gptq_layer(n, k, g, act):
    """Random codes and scales of the act (either sign), the GPTQ qweight, the exact weight."""
    codes = torch.randint(0, 16, (n, k), dtype=torch.int32)
    sign = torch.randint(0, 2, (k // g, n)).float() * 2 - 1
    scales = ((torch.rand(k // g, n) * 0.02 + 0.001) * sign).to(DTYPE[act])
    # GPTQ qweight [K/8, N]: code k of column n at bits 4 (k % 8) of row k / 8
    qweight = torch.zeros(k // 8, n, dtype=torch.int64)
    for b in range(8):
        qweight |= codes.t()[b::8].to(torch.int64) << (4 * b)
    qweight = torch.where(qweight >= 2**31, qweight - 2**32, qweight).to(torch.int32)  # as stored
    w_exact = (codes.double() - 8) * scales.double().repeat_interleave(g, 0).t()
    return codes, scales, qweight, w_exact


ctx = marlin_gen.torch_ops.context()
G = 128
for N, K in SHAPES:
    codes, scales, qweight, w_dq = gptq_layer(N, K, G, "f16")
    gdesc, qb, sb = ctx.describe_weights(N, K, act="f16", group=G)
    q = torch.empty(qb, dtype=torch.uint8, device=dev)
    s = torch.empty(sb, dtype=torch.uint8, device=dev)
    wt = ctx.import_gptq(gdesc, q, s, qweight.to(dev), scales.to(dev), zeros="auto")
    for M in MS:
        a = torch.randn(M, K, device=dev).half()
        within("Context.import_gptq + Context.gemm", gemm(wt, a), a, w_dq, "f16", "u4b8")
    # bias=: for that call only (the weights' description keeps none)
    bias = (torch.randn(N, device=dev) * 0.5).half()
    for M in (1, 33):
        a = torch.randn(M, K, device=dev).half()
        within("Context.gemm bias=", gemm(wt, a, bias), a, w_dq, "f16", "u4b8", bias)
    if wt.desc.d_bias is not None:
        failures.append("Context.gemm's bias= stayed in the weights' description")
    for act in ("f16", "bf16"):
        scales_act = scales.to(DTYPE[act])
        w_act = (codes.double() - 8) * scales_act.double().repeat_interleave(G, 0).t()
        desc, qb, sb = ctx.describe_weights(N, K, act=act, group=G)
        q2 = torch.empty(qb, dtype=torch.uint8, device=dev)
        s2 = torch.empty(sb, dtype=torch.uint8, device=dev)
        wt2 = ctx.pack(desc, q2, s2, codes.to(torch.uint8).to(dev), scales_act.to(dev))
        for M in MS:
            a = torch.randn(M, K, device=dev).to(DTYPE[act])
            within(f"Context.pack {act}", gemm(wt2, a), a, w_act, act, "u4b8")
        bias = (torch.randn(N, device=dev) * 0.5).to(DTYPE[act])
        within(f"Context.pack {act} bias=", gemm(wt2, a, bias), a, w_act, act, "u4b8", bias)

# The torch op eagerly, under torch.compile and from a CUDA graph, on the last shape's weights.
M = 33
a = torch.randn(M, K, device=dev).half()
op = torch.ops.marlin_gen.gemm
within("torch.ops.marlin_gen.gemm", op(a, q, s, N, K, G, "u4b8", "group"), a, w_dq, "f16", "u4b8")
compiled = torch.compile(lambda x: op(x, q, s, N, K, G, "u4b8", "group"), fullgraph=True)
within("torch.compile", compiled(a), a, w_dq, "f16", "u4b8")
static_a = a.clone()
graph = torch.cuda.CUDAGraph()
op(static_a, q, s, N, K, G, "u4b8", "group")  # first call on this stream: its workspace
with torch.cuda.graph(graph):
    out = op(static_a, q, s, N, K, G, "u4b8", "group")
out.zero_()
graph.replay()
torch.cuda.synchronize()
within("CUDA graph replay", out, a, w_dq, "f16", "u4b8")
g_idx = (torch.arange(K, dtype=torch.int32) // G).flip(0).to(dev)  # act order
try:
    ctx.import_gptq(gdesc, q, s, qweight.to(dev), scales.to(dev), g_idx=g_idx)
    failures.append("act-order g_idx accepted")
except marlin_gen.MgenError as e:
    print(f"refused as expected: {e}")
    if e.status != -5 or "act-order" not in e.message:
        failures.append("act-order g_idx: wrong status or message")

# AutoAWQ (version "gemm") into u4: qweight [K, N/8] and qzeros [K/G, N/8] packed along N in
# AutoAWQ's nibble order (nibble i holds column offset AWQ_ORDER[i]), zero points 0..15,
# w = (q - z) * s; the u4 kernels dequantize q - z exactly and round the scale once (u4b8's bound).
AWQ_ORDER = (0, 2, 4, 6, 1, 3, 5, 7)


def awq_pack(vals):
    """[rows, N] values 0..15 -> int32 [rows, N/8] as AutoAWQ stores them."""
    out = torch.zeros(vals.shape[0], vals.shape[1] // 8, dtype=torch.int64)
    for i, o in enumerate(AWQ_ORDER):
        out |= vals[:, o::8].to(torch.int64) << (4 * i)
    return torch.where(out >= 2**31, out - 2**32, out).to(torch.int32)


N, K = 256, 512
codes = torch.randint(0, 16, (K, N), dtype=torch.int32)  # [K, N] as AWQ's qweight rows
zeros = torch.randint(0, 16, (K // G, N), dtype=torch.int32)
zeros[0, :16] = torch.arange(16, dtype=torch.int32)  # every zero point
scales = (torch.rand(K // G, N) * 0.02 + 0.001).half()
w_awq = ((codes.double() - zeros.double().repeat_interleave(G, 0))
         * scales.double().repeat_interleave(G, 0)).t()
adesc, qb, sb = ctx.describe_weights(N, K, act="f16", wfmt="u4", group=G)
qa = torch.empty(qb, dtype=torch.uint8, device=dev)
sa = torch.empty(sb, dtype=torch.uint8, device=dev)
wta = ctx.import_awq(adesc, qa, sa, awq_pack(codes).to(dev), awq_pack(zeros).to(dev),
                     scales.to(dev))
for M in (1, 7, 33):
    a = torch.randn(M, K, device=dev).half()
    within("Context.import_awq + Context.gemm", gemm(wta, a), a, w_awq, "f16", "u4b8")

# FP4: E2M1 codes, two per byte, the low nibble the lower k (ModelOpt / OCP MX storage).
NV_GLOBAL = 0.01  # NVFP4's global scale (FP32; BF16 rounds it by 2u of FP16: a control below)
E2M1 = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6],
                    dtype=torch.float64)
for N, K in SHAPES:
    fp4 = torch.randint(0, 16, (N, K), dtype=torch.int32)
    packed = (fp4[:, 0::2] | (fp4[:, 1::2] << 4)).to(torch.uint8)
    for scheme, group in (("nvfp4", 16), ("mxfp4", 32)):
        if scheme == "nvfp4":  # E4M3 block scales (as uint8 bits) and the FP32 global scale
            block = (torch.rand(N, K // group) * 2 + 0.25).to(torch.float8_e4m3fn)
            bits = block.view(torch.uint8)
            global_scale = NV_GLOBAL
            # value = e2m1 * e4m3 * fp32(global): the library reads the global scale as FP32
            per = block.double() * torch.tensor(global_scale, dtype=torch.float32).double()
        else:  # E8M0: 2^(e - 127)
            bits = torch.randint(120, 130, (N, K // group), dtype=torch.uint8)
            global_scale, per = 1.0, torch.pow(2.0, bits.double() - 127)
        w_exact = E2M1[fp4] * per.repeat_interleave(group, 1)
        for act in ("f16", "bf16"):
            desc, qb, sb = ctx.describe_weights(N, K, act=act, wfmt="fe2m1", group=group)
            q3 = torch.empty(qb, dtype=torch.uint8, device=dev)
            s3 = torch.empty(sb, dtype=torch.uint8, device=dev)
            wt = ctx.import_fp4(desc, q3, s3, packed.to(dev), bits.to(dev), global_scale)
            for M in MS:
                a = torch.randn(M, K, device=dev).to(DTYPE[act])
                within(f"Context.import_fp4 {scheme} {act}", gemm(wt, a), a, w_exact, act,
                       "fe2m1")
# Context.quantize_act (mgen_quantize_act): FP8 E4M3 codes and row scales against the rule
# computed in torch (scale = amax / 448 in float32, codes = torch's float32 -> float8_e4m3fn
# cast of x / scale: nearest-even; |x / scale| <= 448, so its lack of saturation never shows).
# Both divisions are tensor by tensor: torch divides a CUDA tensor by a Python number as a
# multiplication by its rounded reciprocal, which is not the correctly rounded quotient the
# rule names (it moved 26 of 40 scales by an ulp on an H200).
for act, mq in (("f16", 7), ("bf16", 33)):
    x = torch.randn(mq, 2880, device=dev).to(DTYPE[act]) * torch.logspace(-3, 2, mq, device=dev
                                                                           ).to(DTYPE[act])[:, None]
    x[0] = 0  # a row of zeros: scale 1, every code 0
    q8 = torch.full((mq, 2880), 0xA5, dtype=torch.uint8, device=dev)
    sc = torch.full((mq,), float("nan"), device=dev)
    ctx.quantize_act(x, q8, sc, stream=stream)
    torch.cuda.synchronize()
    amax = x.float().abs().amax(1)
    want_s = torch.where(amax > 0, amax / torch.full_like(amax, 448.0), torch.ones_like(amax))
    want_q = (x.float() / want_s[:, None]).to(torch.float8_e4m3fn).view(torch.uint8)
    if not torch.equal(sc, want_s) or not torch.equal(q8, want_q):
        failures.append(f"quantize_act {act}: {int((sc != want_s).sum())} scales and "
                        f"{int((q8 != want_q).sum())} codes differ from the rule")
    checked += 1
try:
    ctx.quantize_act(x, q8[:, :16], sc, stream=stream)
    failures.append("quantize_act accepted q of another shape")
except marlin_gen.ArgumentError:
    pass

# Context.gemm_a8 (mgen_gemm_a8, sm_90): u4b8 packed into the e4m3 layout times quantize_act's
# E4M3 codes and row scales (and one per-tensor scale), with and without bias=, against float64
# of exactly those: the products are exact, the FP8 MMA sums each 128-deep stage to ~13 bits
# (test_w4a8_gpu's header), hence 2^-9 of the terms' magnitudes beside the output's rounding.
if torch.cuda.get_device_capability(dev)[0] == 9:
    for act in ("f16", "bf16"):
        codes, scales, _, _ = gptq_layer(256, 1024, 128, act)
        w_act = (codes.double() - 8) * scales.double().repeat_interleave(128, 0).t()
        desc, qb, sb = ctx.describe_weights(256, 1024, act=act, group=128, layout="e4m3")
        q2 = torch.empty(qb, dtype=torch.uint8, device=dev)
        s2 = torch.empty(sb, dtype=torch.uint8, device=dev)
        wt8 = ctx.pack(desc, q2, s2, codes.to(torch.uint8).to(dev), scales.to(dev))
        for M, per_tensor in ((1, False), (33, False), (33, True)):
            x = torch.randn(M, 1024, device=dev).to(DTYPE[act])
            q8 = torch.empty(M, 1024, dtype=torch.uint8, device=dev)
            sc = torch.empty(M, device=dev)
            ctx.quantize_act(x, q8, sc, stream=stream)
            if per_tensor:
                sc = sc[:1].clone()
            c8 = torch.full((M, 256), float("nan"), dtype=DTYPE[act], device=dev)
            ctx.gemm_a8(q8, sc, wt8, c8, stream=stream)
            torch.cuda.synchronize()
            a64 = q8.view(torch.float8_e4m3fn).double() * sc.double()[:, None].expand(M, 1)
            w64 = w_act.to(dev)
            ref, mag = a64 @ w64.t(), a64.abs() @ w64.abs().t()
            bound = 2 * U[act] * ref.abs() + 2.0**-9 * mag
            err = (c8.double() - ref).abs()
            checked += 1
            if not bool(torch.isfinite(c8.float()).all()) or not bool((err <= bound).all()):
                failures.append(f"Context.gemm_a8 {act} M={M} per_tensor={per_tensor}: max "
                                f"|error|/bound {(err / bound).max().item():.3g}")
            print(f"Context.gemm_a8 {act} M={M} per_tensor={per_tensor}: max |error|/bound "
                  f"{(err / bound).max().item():.3g}")
            # bias= (c's type), added in FP32 before the rounding (the bias bound of verdict)
            bias = (torch.randn(256, device=dev) * 0.5).to(DTYPE[act])
            c8b = torch.full((M, 256), float("nan"), dtype=DTYPE[act], device=dev)
            ctx.gemm_a8(q8, sc, wt8, c8b, stream=stream, bias=bias)
            torch.cuda.synchronize()
            ref_b = ref + bias.double()
            ratio_b = ((c8b.double() - ref_b).abs() /
                       ((1 + U[act]) * bound + U[act] * ref_b.abs())).max().item()
            checked += 1
            print(f"Context.gemm_a8 {act} M={M} per_tensor={per_tensor} bias=: max "
                  f"|error|/bound {ratio_b:.3g}")
            if not ratio_b <= 1.0:  # NaN too
                failures.append(f"Context.gemm_a8 {act} M={M} per_tensor={per_tensor} bias=: "
                                f"max |error|/bound {ratio_b:.3g}")
            # The torch ops (torch_ops.quantize_act, gemm_a8, on torch's current stream): the
            # same codes, scales and output, bit for bit.
            q_op, s_op = marlin_gen.torch_ops.quantize_act(x)
            c_op = marlin_gen.torch_ops.gemm_a8(q_op, s_op[:1].clone() if per_tensor else s_op,
                                                q2, s2, 256, 1024, 128, "u4b8", "group",
                                                DTYPE[act])
            torch.cuda.synchronize()
            checked += 1
            if q_op.dtype != torch.float8_e4m3fn or not torch.equal(q_op.view(torch.uint8), q8) \
                    or not torch.equal(c_op, c8):
                failures.append(f"torch_ops.gemm_a8 {act} M={M} per_tensor={per_tensor}: not "
                                "Context.gemm_a8's codes and output")

# Negative controls: outputs with defects that a kernel or a binding could have, computed here
# in torch on the last FP4 shape; the checks above must fail each (a check that cannot fail
# proves nothing). The worst-case bound alone passes both (printed).
def accumulate_16bit(a, w_exact, act):
    """a @ w^T with the weights rounded to the act and the running sum rounded to the act
    after each k16 step, as an MMA chain with a 16-bit accumulator over the whole K."""
    w = w_exact.to(dev).to(DTYPE[act]).float()
    acc = torch.zeros(a.shape[0], w.shape[0], device=dev)
    for k0 in range(0, a.shape[1], 16):
        acc = (acc + a[:, k0:k0 + 16].float() @ w[:, k0:k0 + 16].t()).to(DTYPE[act]).float()
    return acc.to(DTYPE[act])


a = torch.randn(33, K, device=dev).half()
global_bf16 = torch.tensor(NV_GLOBAL, dtype=torch.bfloat16).double()  # passed as BF16
w_global_bf16 = E2M1[fp4] * (block.double() * global_bf16).repeat_interleave(16, 1)
w_nvfp4 = E2M1[fp4] * (block.double() * torch.tensor(NV_GLOBAL, dtype=torch.float32).double()
                       ).repeat_interleave(16, 1)
controls = (("16-bit accumulation", accumulate_16bit(a, w_nvfp4, "f16"), w_nvfp4),
            ("NVFP4 global scale rounded to BF16",
             (a.double() @ w_global_bf16.to(dev).t()).half(), w_nvfp4))
for what, got, w_exact in controls:
    ratio, rms, problems = verdict(got, a, w_exact, "f16", "fe2m1")
    print(f"negative control '{what}': max |error|/bound {ratio:.3g}, RMS ratio {rms:.3g}: "
          f"{'failed, as it must' if problems else 'PASSED'}")
    if not problems:
        failures.append(f"negative control '{what}' passed the checks: they cannot see it")
if checked < 50:
    failures.append(f"only {checked} GEMMs checked")
print("FAIL: " + "; ".join(failures) if failures else f"PASS ({checked} GEMMs checked)")
sys.exit(1 if failures else 0)
