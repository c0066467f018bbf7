"""moe.py -- marlin_gen.torch's mixture-of-experts layer parts over libmgen's grouped GEMM
(mgen.h "Mixture of experts"): Experts, one projection's packed 4-bit weights of E experts in
one allocation (each expert n x k, expert e's bytes at e times one expert's), and fused_moe,
the reference MoE layer built on the library's three calls:

  route (top-k ids -> pairs grouped by expert) -> gate_up GEMM -> activation -> down GEMM
  (times the router weights) -> sum over top-k

where the layer takes unsorted routes instead at decode sizes (Context.moe_unsorted_pays: no
route kernel, every pair a block of its own; where both GEMMs pay, as the route they would
save is one), with the activation between the GEMMs in PyTorch: "silu" (SiLU(gate) * up, the
GEMM's output [gate | up] in halves, as Mixtral, DeepSeek and Qwen store w13) or "swigluoai"
(gpt-oss: gate and up interleaved, gate clamped to <= 7, up to [-7, 7],
(up + 1) * gate * sigmoid(1.702 gate)).
Expert biases (gpt-oss) are added by the GEMMs themselves (mgen_weights.d_bias: the Experts'
[experts, n] bias, a pair's expert's row), in FP32 before the output's rounding, and in the
down GEMM before the router weight: (acc + b2[e]) * weight. With an expert map (expert
parallelism) the output is this GPU's partial sum: tokens' pairs routed to other GPUs add
nothing. Under torch.compile fused_moe runs as the custom op marlin_gen::fused_moe (_op.py;
dynamo cannot trace ctypes calls); the op finds its Experts by handle, as marlin_gen::linear
finds its Linear. Every step is on the current stream, none synchronizes with the host, so a
CUDA graph captures the layer; which routes it takes depends on the shapes alone, never on the
ids' values."""
import itertools
import weakref

import torch
import torch.nn.functional as F

from marlin_gen import _op
from marlin_gen.errors import ArgumentError
from marlin_gen.layers import _ACT, _TORCH, Linear, _aligned, _compiling, _moved, _raw_stream

ACTIVATIONS = ("silu", "swigluoai")
SWIGLU_LIMIT, SWIGLU_ALPHA = 7.0, 1.702  # gpt-oss's clamp and sigmoid slope

_experts = weakref.WeakValueDictionary()  # marlin_gen::fused_moe's Experts by handle
_handles = itertools.count()


class Experts(torch.nn.Module):
    """One MoE projection's weights: `experts` experts, each n x k packed 4-bit (u4b8, u4 or
    fe2m1), in the buffers `q` and `scales` (expert e's at e * q_bytes, e * scales_bytes), and
    an optional bias [experts, n] of `dtype` (contiguous and 16-byte aligned: the GEMMs read
    expert e's row at e * n through the description; change it in place, as Linear's). Build
    it with from_linears (any format Linear reads), from_mxfp4 (gpt-oss's stacked tensors) or
    quantize (dense weights)."""

    def __init__(self, ctx, desc, q, scales, experts, bias, act, wfmt, scheme):
        super().__init__()
        self.experts, self.n, self.k = experts, desc.n, desc.k
        self.wfmt, self.scheme, self.group = wfmt, scheme, desc.group
        self.dtype = _TORCH[act]
        self.register_buffer("q", q, persistent=False)
        self.register_buffer("scales", scales, persistent=False)
        if bias is not None:
            if not isinstance(bias, torch.Tensor) or tuple(bias.shape) != (experts, desc.n) \
                    or not bias.is_floating_point():
                raise ArgumentError(f"bias: expected a float tensor [{experts}, {desc.n}]")
            bias = _aligned(bias.detach().to(device=q.device, dtype=self.dtype))
        self.register_buffer("bias", bias, persistent=False)
        self._ctx, self._desc, self._act = ctx, desc, act
        self._handle = next(_handles)
        _experts[self._handle] = self
        self._weight()

    def _weight(self):
        self._wt = self._ctx._weight(self._desc, self.q, self.scales)  # sets desc's pointers
        # and the bias's: from_linears' description is a copy of a Linear's, which holds that
        # Linear's own bias pointer (or none)
        self._desc.d_bias = None if self.bias is None else self.bias.data_ptr()
        self._bias = self.bias  # what d_bias points into: alive while the description is

    def _apply(self, fn, *args, **kwargs):
        super()._apply(fn, *args, **kwargs)  # the cached pointers follow a move
        _moved(self, "the experts'", "new Experts")
        self._weight()
        return self

    def extra_repr(self):
        return (f"experts={self.experts}, n={self.n}, k={self.k}, wfmt={self.wfmt}, "
                f"group={self.group}, dtype={self.dtype}, bias={self.bias is not None}")

    # ------------------------------------------------------------ construction
    @classmethod
    def from_linears(cls, layers, bias=None):
        """Experts from one Linear per expert (an iterable, in expert order; e.g. the layers
        load_linear_layers made of a checkpoint's experts), all of one format, shape, dtype and
        device: their packed bytes copied into one allocation (from a generator, only the
        layers' packed buffers stay alive until then, not the layers). bias: [experts, n], or
        None to take the layers' biases (all or none)."""
        first, q, s, biases, count = None, [], [], [], 0
        for layer in layers:
            if not isinstance(layer, Linear):
                raise ArgumentError(f"from_linears: {type(layer).__name__} is not a "
                                    "marlin_gen.torch.Linear")
            if first is None:
                first = layer
            elif (layer.in_features, layer.out_features, layer.wfmt, layer.group, layer.dtype,
                  layer.q.device, layer.q.numel(), layer.scales.numel()) != (
                      first.in_features, first.out_features, first.wfmt, first.group,
                      first.dtype, first.q.device, first.q.numel(), first.scales.numel()):
                raise ArgumentError(f"from_linears: expert {count} ({layer.extra_repr()}) is "
                                    f"not like expert 0 ({first.extra_repr()})")
            q.append(layer.q)  # the buffers alone stay alive until the copy below
            s.append(layer.scales)
            biases.append(layer.bias)
            count += 1
        if first is None:
            raise ArgumentError("from_linears: no layers")
        if bias is None and any(b is not None for b in biases):
            if any(b is None for b in biases):
                raise ArgumentError("from_linears: some experts have a bias and some do not")
            bias = torch.stack(biases)
        # One allocation, each expert copied in with copy_ (a device-to-device memcpy, not a
        # kernel: mgen.h's rule for weights written before a GEMM holds without a fence).
        qb, sb = q[0].numel(), s[0].numel()
        q_all = torch.empty(count * qb, dtype=torch.uint8, device=first.q.device)
        s_all = torch.empty(count * sb, dtype=torch.uint8, device=first.q.device)
        for e in range(count):
            q_all[e * qb:(e + 1) * qb].copy_(q[e])
            s_all[e * sb:(e + 1) * sb].copy_(s[e])
        q, s = q_all, s_all
        return cls(first._ctx, _copy_desc(first._desc), q, s, count, bias,
                   _ACT[first.dtype], first.wfmt, first.scheme)

    @classmethod
    def from_mxfp4(cls, blocks, scales, bias=None, dtype=None, device=None):
        """gpt-oss's stacked MXFP4 experts: blocks uint8 [E, n, k/32, 16] (or [E, n, k/2]),
        scales uint8 E8M0 [E, n, k/32], bias [E, n] or None."""
        if not isinstance(blocks, torch.Tensor) or blocks.dim() not in (3, 4) or \
                not isinstance(scales, torch.Tensor) or scales.dim() != 3 or \
                blocks.shape[0] != scales.shape[0]:
            raise ArgumentError("from_mxfp4: blocks [E, n, k/32, 16] (or [E, n, k/2]) and "
                                "scales [E, n, k/32] with one E")
        return cls.from_linears((Linear.from_mxfp4(blocks[e], scales[e], dtype=dtype,
                                                   device=device)
                                 for e in range(blocks.shape[0])), bias)

    @classmethod
    def quantize(cls, weight, wfmt="u4b8", group=128, bias=None, device=None):
        """Experts quantized from dense weights [E, n, k] (float16 or bfloat16: the activation
        type), each as Linear.quantize makes it (mgen_quantize), e.g. for tests and
        benchmarks."""
        if not isinstance(weight, torch.Tensor) or weight.dim() != 3 or weight.dtype not in _ACT:
            raise ArgumentError("quantize: weight must be a float16 or bfloat16 tensor "
                                "[E, n, k]")
        return cls.from_linears((Linear.quantize(weight[e], wfmt, group, device=device)
                                 for e in range(weight.shape[0])), bias)


def _copy_desc(desc):
    return type(desc).from_buffer_copy(desc)


# ---------------------------------------------------------------- the layer
def _activate(c, activation):
    """The activation between the GEMMs on c [pairs, 2 i] -> [pairs, i], in c's dtype."""
    if activation == "silu":
        gate, up = c.chunk(2, dim=-1)
        return F.silu(gate) * up
    gate, up = c[:, 0::2], c[:, 1::2]  # swigluoai: interleaved
    gate = gate.clamp(max=SWIGLU_LIMIT)
    up = up.clamp(-SWIGLU_LIMIT, SWIGLU_LIMIT)
    return (up + 1) * (gate * torch.sigmoid(gate * SWIGLU_ALPHA))


def _check(x, w13, w2, topk_weights, topk_ids, activation, expert_map, global_num_experts):
    if not isinstance(w13, Experts) or not isinstance(w2, Experts):
        raise ArgumentError("fused_moe: w13 and w2 must be marlin_gen.torch.Experts")
    if activation not in ACTIVATIONS:
        raise ArgumentError(f"fused_moe: activation {activation!r}: one of {ACTIVATIONS}")
    if w13.experts != w2.experts or w13.dtype != w2.dtype or w13.q.device != w2.q.device:
        raise ArgumentError(f"fused_moe: w13 ({w13.extra_repr()}) and w2 ({w2.extra_repr()}) "
                            "differ in experts, dtype or device")
    if w13.n % 2 or w2.k != w13.n // 2 or w2.n != w13.k:
        raise ArgumentError(f"fused_moe: w13 n={w13.n} k={w13.k} and w2 n={w2.n} k={w2.k}: "
                            "expected w13 [2 i, hidden] and w2 [hidden, i]")
    if x.dtype != w13.dtype or x.dim() != 2 or x.shape[1] != w13.k or x.device != w13.q.device:
        raise ArgumentError(f"fused_moe: x {x.dtype} {list(x.shape)} on {x.device}: expected "
                            f"{w13.dtype} [m, {w13.k}] on {w13.q.device}")
    m = x.shape[0]
    if topk_ids.dim() != 2 or topk_ids.shape[0] != m or topk_ids.device != x.device or \
            topk_ids.dtype not in (torch.int32, torch.int64):
        raise ArgumentError(f"fused_moe: topk_ids {topk_ids.dtype} {list(topk_ids.shape)}: "
                            f"expected int32 or int64 [{m}, topk] on {x.device}")
    if topk_weights.shape != topk_ids.shape or not topk_weights.is_floating_point() or \
            topk_weights.device != x.device:
        raise ArgumentError(f"fused_moe: topk_weights {topk_weights.dtype} "
                            f"{list(topk_weights.shape)}: expected floats shaped as topk_ids "
                            f"{list(topk_ids.shape)}")
    experts = global_num_experts if global_num_experts is not None else w13.experts
    if expert_map is None:
        if experts != w13.experts:
            raise ArgumentError(f"fused_moe: global_num_experts {experts} without an "
                                f"expert_map: the weights hold {w13.experts}")
    elif expert_map.shape != (experts,) or expert_map.device != x.device or \
            expert_map.dtype not in (torch.int32, torch.int64):
        raise ArgumentError(f"fused_moe: expert_map {expert_map.dtype} {list(expert_map.shape)}:"
                            f" expected int32 [{experts}] on {x.device}")
    return experts


def _block_rows(ctx, w, ids, experts, local):
    """The block_rows of the kernel moe_gemm chooses over w for these ids."""
    m, topk = ids.shape
    return ctx.moe_choice(w._act, m, topk, experts, w._wt, local)[1]


def _plan(ctx, w, ids, experts, local, unsorted=True):
    """(unsorted, block_rows) of w's GEMM for these ids: an unsorted route where allowed and
    expected to pay for skipping the route kernel (moe_unsorted_pays), else a sorted one of
    the choice's block_rows."""
    m, topk = ids.shape
    if unsorted:
        pays, rows = ctx.moe_unsorted_pays(w._act, m, topk, experts, w._wt, local)
        if pays:
            return True, rows
    return False, _block_rows(ctx, w, ids, experts, local)


def _a_sorted(ctx, w, ids, experts, local):
    """Whether w's GEMM for these ids gains by A permuted into the route's order."""
    m, topk = ids.shape
    return ctx.moe_a_sorted(w._act, m, topk, experts, w._wt, local)


def _gemm(ctx, r, a, w, c, a_per_pair, topk_weights, stream, a_sorted):
    """c = the grouped GEMM of a's rows (per token, or per pair) over route r and w's experts;
    with a_sorted, a permuted into the route's order first and read so."""
    if a_sorted:
        a_s = a.new_empty((r.rows, a.shape[1]))
        ctx.moe_permute(r, a, a_per_pair, a_s, stream)
        ctx.moe_gemm(r, a_s, w._wt, c, a_per_pair, topk_weights, stream, a_sorted=True)
    else:
        ctx.moe_gemm(r, a, w._wt, c, a_per_pair, topk_weights, stream)


def _route(ctx, block_rows, ids, experts, local, expert_map, stream, unsorted=False):
    """A route of ids in runs of block_rows; unsorted: one without a list (nothing launched:
    the GEMM reads ids and expert_map, which the caller keeps until it has run)."""
    if unsorted:
        return ctx.moe_route(ids, experts, block_rows, expert_map=expert_map,
                             local_experts=local, stream=stream, unsorted=True)
    m, topk = ids.shape
    rows = ctx.moe_route_rows(m, topk, experts, block_rows, local)
    buf = torch.empty(rows + rows // block_rows + 1, dtype=torch.int32, device=ids.device)
    return ctx.moe_route(ids, experts, block_rows, buf[:rows],
                         buf[rows:rows + rows // block_rows], buf[rows + rows // block_rows:],
                         expert_map, local, stream)


def fused_moe(x, w13, w2, topk_weights, topk_ids, activation="silu", expert_map=None,
              global_num_experts=None):
    """A MoE layer's experts for x [m, hidden] (the Experts' dtype and device): token t goes
    to the experts topk_ids[t] (int32 or int64 [m, topk], ids 0..global_num_experts-1; other
    ids add nothing) with weights topk_weights[t] ([m, topk], applied in FP32 after the down
    GEMM), through w13 (gate_up: [2 i, hidden] per expert) -> activation -> w2 (down:
    [hidden, i]) and summed over top-k in order. expert_map int32 [global_num_experts]: global
    expert -> index into the Experts, -1 where not on this GPU (expert parallelism: the result
    is this GPU's part of the sum). The Experts' biases, where they have them, are added by
    the GEMMs: b13[e] to the gate_up output, and (acc + b2[e]) * weight in the down GEMM. At
    decode sizes a GEMM may run on an unsorted route (module docstring): the same result within
    the GEMM's bound, not bit for bit the sorted route's. Returns [m, hidden]; deterministic,
    graph-capturable."""
    experts = _check(x, w13, w2, topk_weights, topk_ids, activation, expert_map,
                     global_num_experts)
    if _compiling():
        return _fused_moe_op(x, topk_weights, topk_ids, w13._handle, w2._handle, activation,
                             expert_map, experts)
    return _fused_moe(x, w13, w2, topk_weights, topk_ids, activation, expert_map, experts)


def _fused_moe(x, w13, w2, topk_weights, topk_ids, activation, expert_map, experts):
    m, topk = topk_ids.shape
    out = x.new_empty((m, w2.n))
    if m == 0:
        return out
    ctx, local = w13._ctx, w13.experts
    stream = _raw_stream(x.device.index)
    x = x.contiguous()
    if x.data_ptr() & 15:  # the kernels read 16-byte aligned rows
        x = x.clone()
    ids = topk_ids.to(torch.int32).contiguous()
    emap = None if expert_map is None else expert_map.to(torch.int32).contiguous()
    weights = topk_weights.to(torch.float32).contiguous()
    plan13 = _plan(ctx, w13, ids, experts, local)
    plan2 = _plan(ctx, w2, ids, experts, local)
    if plan13[0] != plan2[0]:  # one GEMM unsorted saves no route: that one sorted too
        if plan13[0]:
            plan13 = _plan(ctx, w13, ids, experts, local, unsorted=False)
        else:
            plan2 = _plan(ctx, w2, ids, experts, local, unsorted=False)
    r13 = _route(ctx, plan13[1], ids, experts, local, emap, stream, plan13[0])
    # the down GEMM's kernel may take other runs, or decide otherwise: its own route then
    r2 = r13 if plan2 == plan13 else _route(ctx, plan2[1], ids, experts, local, emap, stream,
                                            plan2[0])
    c1 = x.new_empty((m * topk, w13.n))
    # (an unsorted route has no order to permute A into)
    _gemm(ctx, r13, x, w13, c1, False, None, stream,
          not r13.unsorted and _a_sorted(ctx, w13, ids, experts, local))
    h = _activate(c1, activation).contiguous()
    c2 = x.new_empty((m * topk, w2.n))
    _gemm(ctx, r2, h, w2, c2, True, weights, stream,
          not r2.unsorted and _a_sorted(ctx, w2, ids, experts, local))
    ctx.moe_sum(r2, c2, out, stream)
    return out


def _fused_moe_impl(x, topk_weights, topk_ids, w13, w2, activation, expert_map,
                    global_num_experts):
    """fused_moe for the Experts of handles w13 and w2."""
    return _fused_moe(x, _experts[w13], _experts[w2], topk_weights, topk_ids, activation,
                      expert_map, global_num_experts)


def _fused_moe_fake(x, topk_weights, topk_ids, w13, w2, activation, expert_map,
                    global_num_experts):
    return x.new_empty((x.shape[0], _experts[w2].n))


_fused_moe_op = _op.define(
    "fused_moe", "(Tensor x, Tensor topk_weights, Tensor topk_ids, int w13, int w2, "
    "str activation, Tensor? expert_map, int global_num_experts) -> Tensor", _fused_moe_impl,
    _fused_moe_fake)
