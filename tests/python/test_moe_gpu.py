"""test_moe_gpu.py -- marlin_gen.torch's Experts and fused_moe on the GPU, against a float64
reference on the CPU built from the checkpoint tensors (layer_checkpoints.py writes them and
reads the weights back without marlin_gen's code):
- GPTQ int4 g128 FP16 experts, "silu" ([gate | up] halves), vLLM's fused-MoE cases (m, n, k, e,
  topk) (1, 128, 256, 5, 2), (133, 256, 256, 5, 2), (64, 1024, 2048, 12, 3) and every token to
  one expert; the last also with 4-way expert parallelism (expert maps: each GPU's part
  against the reference over its experts, the parts' sum against the whole);
- expert biases (added by the GEMMs: mgen_weights.d_bias; the down GEMM's before the router
  weight) on the largest case and its expert parallelism (rows by local index), in the graph,
  compile and A-sorted checks, through Context.moe_gemm's bias=, and from a misaligned view;
- gpt-oss MXFP4 BF16 experts with biases, "swigluoai" (interleaved gate/up, clamps), from the
  stacked tensors (Experts.from_mxfp4) and through load_linear_layers + Experts.from_linears;
- int64 ids and ids outside 0..E-1 (their pairs add nothing), m = 1 and 100;
- decode: at M = 1 each GEMM on an unsorted route where Context.moe_unsorted_pays says so (the
  routes fused_moe takes recorded), with biases, a 2-way expert map's part, and in a CUDA graph
  replayed on new routing; the vLLM cases on sorted routes too (forced), against the reference;
- determinism (two calls bit-identical), a CUDA graph replayed with new input, torch.compile;
- A permuted into the route's order (Context.moe_permute, moe_gemm a_sorted=True): C bit for
  bit the gathered A's, for both GEMMs, and fused_moe's output with both GEMMs so;
- Experts.quantize's expert e bytes equal Context.quantize of weight[e] alone;
- refusals: mismatched experts, wrong dtype, an unknown activation.
The bound per output: the first GEMM's (test_layer_gpu.py's: 2u|c| + (2u + K 2^-22) sum|x w|,
plus u|c| for a bias: a second rounding, which covers the GEMM's one of c + b), carried
through the activation by its partial derivatives (plus 3u|h|: the activation's roundings,
2u|gate| through dh/dgate), then the second GEMM's bound over |h| and the carried error, times
the router weight, summed over top-k, plus u|out|; all times 2 (a margin, not slack: a pair
sent to a wrong expert or a wrong row is off by O(|out|)).
Exits 77 (skipped) only without PyTorch, safetensors or a GPU.
Run: MGEN_LIBRARY=build/runtime/libmgen.so python3 tests/python/test_moe_gpu.py ROOT"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_env  # noqa: E402

torch = gpu_env.require("safetensors")

import layer_checkpoints as lc  # noqa: E402
import marlin_gen  # noqa: E402
import marlin_gen.moe  # noqa: E402  (its rule patched to test the permuted path)
from marlin_gen.torch import Experts, fused_moe, load_linear_layers  # noqa: E402
from marlin_gen.moe import _block_rows, _route  # noqa: E402

U = {torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}
LIMIT, ALPHA = 7.0, 1.702
torch.manual_seed(0)
dev = torch.device("cuda")
failures = []
checked = 0


def fail(what):
    print(f"FAIL  {what}")
    failures.append(what)


# ---------------------------------------------------------------- the float64 reference
def act_and_partials(c, activation):
    """h, dh/dgate, dh/dup for c [pairs, 2 i] (float64) and the gate/up halves' columns."""
    if activation == "silu":
        i = c.shape[1] // 2
        gi, ui = torch.arange(i), torch.arange(i, 2 * i)
        g, u = c[:, gi], c[:, ui]
        sg = torch.sigmoid(g)
        return g * sg * u, u * (sg + g * sg * (1 - sg)), g * sg, gi, ui
    gi, ui = torch.arange(0, c.shape[1], 2), torch.arange(1, c.shape[1], 2)
    g, u = c[:, gi], c[:, ui]
    gc, uc = g.clamp(max=LIMIT), u.clamp(-LIMIT, LIMIT)
    s = torch.sigmoid(ALPHA * gc)
    glu = gc * s
    dg = torch.where(g < LIMIT, (uc + 1) * (s + ALPHA * gc * s * (1 - s)), torch.zeros_like(g))
    du = torch.where(u.abs() < LIMIT, glu, torch.zeros_like(u))
    return (uc + 1) * glu, dg, du, gi, ui


def reference(x, w13, b13, w2, b2, weights, ids, activation, experts, local=None):
    """(out, bound) in float64: w13[e] [2i, k], w2[e] [n, i] float64 per global expert e; only
    experts in `local` (all: None) contribute."""
    dt = x.dtype
    u = U[dt]
    x64 = x.cpu().double()
    ids, weights = ids.cpu().long(), weights.cpu().double()
    m, topk = ids.shape
    n = w2[0].shape[0]
    out = torch.zeros(m, n, dtype=torch.float64)
    bound = torch.zeros(m, n, dtype=torch.float64)
    abs13, abs2 = {}, {}  # |W| per expert, made once
    for t in range(m):
        for j in range(topk):
            e = int(ids[t, j])
            if not 0 <= e < experts or (local is not None and e not in local):
                continue
            if e not in abs13:
                abs13[e], abs2[e] = w13[e].abs().t(), w2[e].abs().t()
            xe = x64[t:t + 1]
            c1 = xe @ w13[e].t()
            e1 = 2 * u * c1.abs() + (2 * u + xe.shape[1] * 2.0**-22) * (xe.abs() @ abs13[e])
            if b13 is not None:
                c1 = c1 + b13[e]
                e1 = e1 + u * c1.abs()
            h, dg, du, gi, ui = act_and_partials(c1, activation)
            # the carried error, the activation's own roundings (3u|h|) and the rounding of
            # its argument's products (2u|g| through dh/dg: sigmoid(1.702 g) at large -g)
            eh = dg.abs() * (e1[:, gi] + 2 * u * c1[:, gi].abs()) + du.abs() * e1[:, ui] \
                + 3 * u * h.abs()
            c2 = h @ w2[e].t()
            e2 = 2 * u * c2.abs() + (2 * u + h.shape[1] * 2.0**-22) * (h.abs() @ abs2[e]) \
                + eh @ abs2[e]
            if b2 is not None:
                c2 = c2 + b2[e]
                e2 = e2 + u * c2.abs()
            wt = weights[t, j]
            out[t] += wt * c2[0]
            bound[t] += abs(wt) * (e2[0] + u * c2[0].abs())
    bound += u * out.abs()
    return out, 2 * bound


def compare(name, got, ref_bound):
    global checked
    ref, bound = ref_bound
    got64 = got.cpu().double()
    problems = []
    if got.shape != ref.shape:
        problems.append(f"shape {list(got.shape)}, expected {list(ref.shape)}")
    elif not bool(torch.isfinite(got64).all()):
        problems.append("NaN/inf")
    else:
        ratio = ((got64 - ref).abs() / bound.clamp(min=1e-30)).max().item()
        print(f"{name}: max |error|/bound {ratio:.3g}")
        if not ratio <= 1.0:
            problems.append(f"max |error|/bound {ratio:.3g}")
    checked += 1
    if problems:
        fail(f"{name}: {'; '.join(problems)}")


# ---------------------------------------------------------------- experts from checkpoints
def gptq_experts(tmp, name, e, n, k, dt, bias=False):
    """E GPTQ g128 layers (with a bias each, where `bias`) saved as a checkpoint and loaded as
    Linears: (Experts of them, the float64 weights read back, the Linears, the float64 biases
    read back or None)."""
    act = "f16" if dt == torch.float16 else "bf16"
    tensors = {}
    for i in range(e):
        tensors.update(lc.gptq(f"experts.{i}", n, k, 128, act, True, bias))
    cfg = {"quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128,
                                   "desc_act": False, "sym": True,
                                   "checkpoint_format": "gptq"},
           "torch_dtype": "float16" if dt == torch.float16 else "bfloat16"}
    path = os.path.join(tmp, name)
    lc.write(path, tensors, cfg)
    want = lc.dequantize(path, cfg)
    layers = load_linear_layers(path)
    linears = [layers[f"experts.{i}"] for i in range(e)]
    biases = [want[f"experts.{i}"][1] for i in range(e)] if bias else None
    return (Experts.from_linears(linears), [want[f"experts.{i}"][0] for i in range(e)], linears,
            biases)


def routing(m, e, topk, skew=False):
    if skew:  # every token to expert 0 first, the rest random
        ids = torch.stack([torch.cat([torch.zeros(1, dtype=torch.long),
                                      1 + torch.randperm(e - 1)[:topk - 1]]) for _ in range(m)])
    else:
        ids = torch.stack([torch.randperm(e)[:topk] for _ in range(m)])
    w = torch.rand(m, topk) + 0.1
    return ids.to(torch.int32).to(dev), (w / w.sum(1, keepdim=True)).to(dev)


tmp = tempfile.mkdtemp(prefix="mgen_moe_")

# vLLM's fused-MoE cases on GPTQ FP16 experts, silu; the last with expert biases (the GEMMs
# add them, the down GEMM's before the router weight), through expert parallelism too
for m, n, k, e, topk in ((1, 128, 256, 5, 2), (133, 256, 256, 5, 2), (64, 1024, 2048, 12, 3)):
    biased = m == 64
    w13, w13_64, l13, b13_64 = gptq_experts(tmp, f"w13_{n}_{k}_{e}", e, 2 * n, k, torch.float16,
                                            biased)
    w2, w2_64, l2, b2_64 = gptq_experts(tmp, f"w2_{n}_{k}_{e}", e, k, n, torch.float16, biased)
    for skew in (False, True):
        x = (torch.randn(m, k, device=dev) * 0.5).half()
        ids, wts = routing(m, e, topk, skew)
        y = fused_moe(x, w13, w2, wts, ids)
        compare(f"gptq f16 m={m} n={n} k={k} e={e} topk={topk}{' one expert' if skew else ''}"
                f"{' with biases' if biased else ''}",
                y, reference(x, w13_64, b13_64, w2_64, b2_64, wts, ids, "silu", e))
        if fused_moe(x, w13, w2, wts, ids).ne(y).any():
            fail(f"m={m} n={n} k={k}: two calls differ (not bit-identical)")
        # the same layer on sorted routes (at decode sizes fused_moe takes unsorted ones:
        # moe._plan), then with A permuted into their order for both GEMMs (the rule,
        # moe._a_sorted, sends only wide layers with many rows per expert there): bit for bit
        plan, rule = marlin_gen.moe._plan, marlin_gen.moe._a_sorted
        marlin_gen.moe._plan = lambda c, w, i, ex, lo, **_: (False, _block_rows(c, w, i, ex, lo))
        try:
            marlin_gen.moe._a_sorted = lambda *args: False
            y_sorted = fused_moe(x, w13, w2, wts, ids)
            if y_sorted.ne(y).any():
                compare(f"m={m} n={n} k={k}: sorted routes", y_sorted,
                        reference(x, w13_64, b13_64, w2_64, b2_64, wts, ids, "silu", e))
            marlin_gen.moe._a_sorted = lambda *args: True
            if fused_moe(x, w13, w2, wts, ids).ne(y_sorted).any():
                fail(f"m={m} n={n} k={k}: A permuted into the route's order gives another out")
        finally:
            marlin_gen.moe._plan, marlin_gen.moe._a_sorted = plan, rule
    if m == 64:  # 4-way expert parallelism: the parts of the sum, one per GPU's experts
        parts = []
        for rank in range(4):
            mine = list(range(rank * e // 4, (rank + 1) * e // 4))
            emap = torch.full((e,), -1, dtype=torch.int32)
            emap[mine] = torch.arange(len(mine), dtype=torch.int32)
            sub13 = Experts.from_linears(l13[i] for i in mine)  # this GPU's experts only
            sub2 = Experts.from_linears(l2[i] for i in mine)
            part = fused_moe(x, sub13, sub2, wts, ids, expert_map=emap.to(dev),
                             global_num_experts=e)
            compare(f"expert parallel rank {rank} (experts {mine[0]}..{mine[-1]}), biases "
                    "by local index", part,
                    reference(x, w13_64, b13_64, w2_64, b2_64, wts, ids, "silu", e, set(mine)))
            parts.append(part.double())
        ref, bound = reference(x, w13_64, b13_64, w2_64, b2_64, wts, ids, "silu", e)
        compare("expert parallel: the 4 parts' sum", sum(parts).to(torch.float16),
                (ref, 4 * bound))

# int64 ids, ids outside 0..E-1 (pairs routed nowhere), m = 1 and 100
e, n, k, topk = 6, 256, 256, 2
w13, w13_64, _, _ = gptq_experts(tmp, "w13_ids", e, 2 * n, k, torch.float16)
w2, w2_64, _, _ = gptq_experts(tmp, "w2_ids", e, k, n, torch.float16)
for m in (1, 100):
    x = (torch.randn(m, k, device=dev) * 0.5).half()
    ids, wts = routing(m, e, topk)
    ids = ids.long()
    ids[0, 1] = e  # outside: adds nothing
    if m > 1:
        ids[m - 1, 0] = -1
    compare(f"int64 ids with ids outside 0..{e - 1}, m={m}", fused_moe(x, w13, w2, wts, ids),
            reference(x, w13_64, None, w2_64, None, wts, ids, "silu", e))

# gpt-oss-like MXFP4 BF16 with biases, swigluoai: hidden 320, intermediate 192, 8 experts, top-4
e, hidden, inter, topk = 8, 320, 192, 4
t13 = lc.mxfp4("experts.gate_up_proj", 2 * inter, hidden, "bf16", e, True)
t2 = lc.mxfp4("experts.down_proj", hidden, inter, "bf16", e, True)
cfg = {"quantization_config": {"quant_method": "mxfp4"}, "torch_dtype": "bfloat16"}
path = os.path.join(tmp, "mxfp4")
lc.write(path, {**t13, **t2}, cfg)
want = lc.dequantize(path, cfg)
w13_64 = [want[f"experts.gate_up_proj.{i}"][0] for i in range(e)]
b13 = [want[f"experts.gate_up_proj.{i}"][1].double() for i in range(e)]
w2_64 = [want[f"experts.down_proj.{i}"][0] for i in range(e)]
b2 = [want[f"experts.down_proj.{i}"][1].double() for i in range(e)]
stacked13 = Experts.from_mxfp4(t13["experts.gate_up_proj_blocks"].to(dev),
                               t13["experts.gate_up_proj_scales"].to(dev),
                               t13["experts.gate_up_proj_bias"].to(dev), dtype=torch.bfloat16)
stacked2 = Experts.from_mxfp4(t2["experts.down_proj_blocks"].to(dev),
                              t2["experts.down_proj_scales"].to(dev),
                              t2["experts.down_proj_bias"].to(dev), dtype=torch.bfloat16)
layers = load_linear_layers(path)
loaded13 = Experts.from_linears(layers[f"experts.gate_up_proj.{i}"] for i in range(e))
loaded2 = Experts.from_linears(layers[f"experts.down_proj.{i}"] for i in range(e))
for m in (1, 37):
    x = (torch.randn(m, hidden, device=dev) * 0.1).to(torch.bfloat16)  # gates mostly < 7
    ids, wts = routing(m, e, topk)
    ref = reference(x, w13_64, b13, w2_64, b2, wts, ids, "swigluoai", e)
    y = fused_moe(x, stacked13, stacked2, wts, ids, activation="swigluoai")
    compare(f"mxfp4 bf16 swigluoai with biases (from_mxfp4) m={m}", y, ref)
    y2 = fused_moe(x, loaded13, loaded2, wts, ids, activation="swigluoai")
    compare(f"mxfp4 bf16 swigluoai with biases (load_linear_layers) m={m}", y2, ref)
    if y2.ne(y).any():
        fail(f"mxfp4 m={m}: the stacked and the loaded experts differ")

# A CUDA graph replayed with new input, and torch.compile, of experts with biases
e, n, k, topk, m = 5, 256, 256, 2, 17
w13, w13_64, l13, b13_64 = gptq_experts(tmp, "w13_graph", e, 2 * n, k, torch.float16, True)
w2, w2_64, l2, b2_64 = gptq_experts(tmp, "w2_graph", e, k, n, torch.float16, True)
x = (torch.randn(m, k, device=dev) * 0.5).half()
ids, wts = routing(m, e, topk)
fused_moe(x, w13, w2, wts, ids)  # this stream's workspace
sx, sids, swts = x.clone(), ids.clone(), wts.clone()
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    sy = fused_moe(sx, w13, w2, swts, sids)
x2 = (torch.randn(m, k, device=dev) * 0.5).half()
ids2, wts2 = routing(m, e, topk)
sx.copy_(x2)
sids.copy_(ids2)
swts.copy_(wts2)
sy.zero_()
graph.replay()
torch.cuda.synchronize()
compare("CUDA graph replay, new input and routing", sy,
        reference(x2, w13_64, b13_64, w2_64, b2_64, wts2, ids2, "silu", e))
try:
    compiled = torch.compile(lambda a, w, i: fused_moe(a, w13, w2, w, i), fullgraph=True)
    compare("torch.compile", compiled(x, wts, ids),
            reference(x, w13_64, b13_64, w2_64, b2_64, wts, ids, "silu", e))
except Exception as ex:  # noqa: BLE001  (any failure of the compiled path is the finding)
    fail(f"torch.compile: {type(ex).__name__}: {ex}")

# Decode: at M = 1 a GEMM runs on an unsorted route where the library says it pays
# (Context.moe_unsorted_pays: no route kernel, every pair a block of its own): fused_moe with
# expert biases against the reference, the routes it took recorded (unsorted where the library
# said so for both GEMMs, as it must at M = 1; sorted where only one would pay); a 2-way expert
# map's part (pairs of the other GPU's experts add nothing); and the layer captured in a CUDA
# graph and replayed on new input and routing (the unsorted GEMMs read the ids on the device)
eu, nu, ku, topku = 8, 256, 256, 3
u13, u13_64, ul13, ub13 = gptq_experts(tmp, "w13_unsorted", eu, 2 * nu, ku, torch.float16, True)
u2, u2_64, ul2, ub2 = gptq_experts(tmp, "w2_unsorted", eu, ku, nu, torch.float16, True)
pays = [w._ctx.moe_unsorted_pays(w._act, 1, topku, eu, w._wt, eu)[0] for w in (u13, u2)]
print(f"M = 1: unsorted pays for (gate_up, down): {pays}")
if not all(pays):
    fail("M = 1: moe_unsorted_pays says a GEMM loses unsorted (no expert is read twice at M = 1):"
         " the unsorted layer untested")
taken, route_fn = [], marlin_gen.moe._route


def recording_route(*args, **kwargs):
    r = route_fn(*args, **kwargs)
    taken.append(r.unsorted)
    return r


def took(what):
    """The routes fused_moe made since the last call against pays: unsorted where both GEMMs
    pay (one route saved), else sorted (one or two routes: both alike)."""
    want = [pays[0] and pays[1]]
    got = list(taken)
    taken.clear()
    if len(got) == 2 and got[0] == got[1]:
        got = got[:1]  # both GEMMs' routes alike (other block rows)
    if got != want:
        fail(f"{what}: routes unsorted {got}, moe_unsorted_pays says {want}")


marlin_gen.moe._route = recording_route
try:
    xu = (torch.randn(1, ku, device=dev) * 0.5).half()
    idsu, wtsu = routing(1, eu, topku)
    yu = fused_moe(xu, u13, u2, wtsu, idsu)
    took("M = 1")
    compare("unsorted routes, M = 1, with biases", yu,
            reference(xu, u13_64, ub13, u2_64, ub2, wtsu, idsu, "silu", eu))
    if fused_moe(xu, u13, u2, wtsu, idsu).ne(yu).any():
        fail("unsorted routes, M = 1: two calls differ (not bit-identical)")
    mineu = list(range(eu // 2, eu))
    emapu = torch.full((eu,), -1, dtype=torch.int32)
    emapu[mineu] = torch.arange(len(mineu), dtype=torch.int32)
    subu13 = Experts.from_linears(ul13[i] for i in mineu)
    subu2 = Experts.from_linears(ul2[i] for i in mineu)
    sub_pays = [w._ctx.moe_unsorted_pays(w._act, 1, topku, eu, w._wt, len(mineu))[0]
                for w in (subu13, subu2)]
    partu = fused_moe(xu, subu13, subu2, wtsu, idsu, expert_map=emapu.to(dev),
                      global_num_experts=eu)
    compare(f"unsorted routes (pays {sub_pays}), M = 1, experts {mineu[0]}..{mineu[-1]} of a "
            "2-way map", partu,
            reference(xu, u13_64, ub13, u2_64, ub2, wtsu, idsu, "silu", eu, set(mineu)))
    taken.clear()
    sxu, sidsu, swtsu = xu.clone(), idsu.clone(), wtsu.clone()
    graphu = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graphu):
        syu = fused_moe(sxu, u13, u2, swtsu, sidsu)
    took("M = 1 in a CUDA graph's capture")
    xu2 = (torch.randn(1, ku, device=dev) * 0.5).half()
    idsu2, wtsu2 = routing(1, eu, topku)
    sxu.copy_(xu2)
    sidsu.copy_(idsu2)
    swtsu.copy_(wtsu2)
    syu.zero_()
    graphu.replay()
    torch.cuda.synchronize()
    compare("unsorted routes, M = 1: CUDA graph replay, new input and routing", syu,
            reference(xu2, u13_64, ub13, u2_64, ub2, wtsu2, idsu2, "silu", eu))
    # where only one GEMM would pay, the route runs anyway: both GEMMs on sorted routes
    ctx_cls, pays_fn = type(u2._ctx), type(u2._ctx).moe_unsorted_pays
    ctx_cls.moe_unsorted_pays = lambda self, act, m, topk, ne, wt, local=None: (
        (False, pays_fn(self, act, m, topk, ne, wt, local)[1]) if wt is u2._wt
        else pays_fn(self, act, m, topk, ne, wt, local))
    try:
        taken.clear()
        ym = fused_moe(xu, u13, u2, wtsu, idsu)
        got = sorted(set(taken))
        if got != [False]:
            fail(f"M = 1, only gate_up paying: routes unsorted {taken}, want sorted only")
        compare("M = 1, only gate_up paying: sorted routes", ym,
                reference(xu, u13_64, ub13, u2_64, ub2, wtsu, idsu, "silu", eu))
    finally:
        ctx_cls.moe_unsorted_pays = pays_fn
finally:
    marlin_gen.moe._route = route_fn

# A permuted into the route's order (Context.moe_permute; moe_gemm with a_sorted=True): C bit
# for bit what the gathered A gives (the same tiles over the same values), both GEMMs, with the
# experts' biases; and moe_gemm's bias= over a description without one: the same C as the
# Experts' own description holding it
def sorted_check(w, a, a_per_pair, topk_weights, ids, what):
    global checked
    ctx, stream = w._ctx, torch.cuda.current_stream().cuda_stream
    rows = _block_rows(ctx, w, ids, w.experts, w.experts)
    r = _route(ctx, rows, ids, w.experts, w.experts, None, stream)
    pairs = ids.numel()
    c_gather = a.new_full((pairs, w.n), float("nan"))
    c_sorted = a.new_full((pairs, w.n), float("nan"))
    ctx.moe_gemm(r, a, w._wt, c_gather, a_per_pair, topk_weights, stream)
    a_s = a.new_full((r.rows, a.shape[1]), float("nan"))  # rows past num_padded stay NaN
    ctx.moe_permute(r, a, a_per_pair, a_s, stream)
    ctx.moe_gemm(r, a_s, w._wt, c_sorted, a_per_pair, topk_weights, stream, a_sorted=True)
    torch.cuda.synchronize()
    if not torch.equal(c_gather.view(torch.int16), c_sorted.view(torch.int16)):
        fail(f"{what}: A sorted gives another C than A gathered")
    if c_gather.isnan().any():
        fail(f"{what}: rows of C not written")
    checked += 1
    if w.bias is None:
        return
    plain = marlin_gen.QuantizedWeight(type(w._wt.desc).from_buffer_copy(w._wt.desc), w.q,
                                       w.scales)
    plain.desc.d_bias = None
    c_arg = a.new_full((pairs, w.n), float("nan"))
    ctx.moe_gemm(r, a, plain, c_arg, a_per_pair, topk_weights, stream, bias=w.bias)
    torch.cuda.synchronize()
    if not torch.equal(c_gather.view(torch.int16), c_arg.view(torch.int16)):
        fail(f"{what}: moe_gemm's bias= gives another C than the Experts' description")
    checked += 1


for m in (1, 17, 300):
    ids_s, wts_s = routing(m, e, topk, skew=m == 300)
    x_s = (torch.randn(m, k, device=dev) * 0.5).half()
    h_s = (torch.randn(m * topk, n, device=dev) * 0.5).half()
    sorted_check(w13, x_s, False, None, ids_s, f"A sorted, gate_up m={m}")
    sorted_check(w2, h_s, True, wts_s.float().contiguous(), ids_s, f"A sorted, down m={m}")

# The Experts' description holds its own bias (from_linears copies a Linear's description,
# which holds that Linear's); a bias handed over as a view 2 bytes into a bigger tensor (the
# kernels read it 16 bytes at a time) is copied aligned once: fused_moe bit for bit the same
big = torch.zeros(w13.bias.numel() + 8, dtype=torch.float16, device=dev)
view = big[1:1 + w13.bias.numel()].view(w13.bias.shape)
view.copy_(w13.bias)
w13v = Experts.from_linears(l13, bias=view)
for what, w in (("stacked", w13), ("from a misaligned view", w13v)):
    if w._desc.d_bias != w.bias.data_ptr() or w.bias.data_ptr() % 16:
        fail(f"Experts bias {what}: at {w.bias.data_ptr():#x}, the description's "
             f"{w._desc.d_bias}")
if view.data_ptr() % 16 == 0:
    fail("the misaligned view is aligned: the case tests no copy")
if fused_moe(x, w13v, w2, wts, ids).ne(fused_moe(x, w13, w2, wts, ids)).any():
    fail("Experts bias from a misaligned view: another output than the aligned one's")
checked += 1

# Experts.quantize: expert e's bytes are what Context.quantize makes of weight[e] alone
wd = (torch.randn(3, 128, 256) * 0.05).half().to(dev)
qe = Experts.quantize(wd, "u4b8", 128)
ctx = qe._ctx
desc, qb, sb = ctx.describe_weights(128, 256, act="f16", wfmt="u4b8", group=128)
for i in range(3):
    q1 = torch.empty(qb, dtype=torch.uint8, device=dev)
    s1 = torch.empty(sb, dtype=torch.uint8, device=dev)
    ctx.quantize(wd[i].contiguous(), desc, q1, s1)
    if qe.q[i * qb:(i + 1) * qb].ne(q1).any() or qe.scales[i * sb:(i + 1) * sb].ne(s1).any():
        fail(f"Experts.quantize: expert {i}'s bytes differ from Context.quantize of it alone")
checked += 1


# Refusals
def refused(what, fn, needle):
    try:
        fn()
    except marlin_gen.ArgumentError as ex:
        if needle not in str(ex):
            fail(f"{what}: refused, but the message lacks {needle!r}: {ex}")
        else:
            print(f"refused as expected: {what}: {ex}")
        return
    except Exception as ex:  # noqa: BLE001
        fail(f"{what}: {type(ex).__name__} instead of ArgumentError: {ex}")
        return
    fail(f"{what}: accepted")


refused("bf16 input to f16 experts", lambda: fused_moe(x.bfloat16(), w13, w2, wts, ids),
        "expected torch.float16")
refused("an unknown activation", lambda: fused_moe(x, w13, w2, wts, ids, activation="gelu"),
        "activation")
refused("w13 and w2 swapped", lambda: fused_moe(x, w2, w13, wts, ids), "expected w13")
refused("topk_weights of another shape", lambda: fused_moe(x, w13, w2, wts[:, :1], ids),
        "topk_weights")
refused("global_num_experts without a map",
        lambda: fused_moe(x, w13, w2, wts, ids, global_num_experts=e + 1), "expert_map")

if checked < 20:
    fail(f"only {checked} checks ran")
if failures:
    print(f"test_moe_gpu: {len(failures)} failure(s):\n  " + "\n  ".join(failures))
    sys.exit(1)
print(f"test_moe_gpu: {checked} checks passed")
