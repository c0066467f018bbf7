"""api.py -- Context: a libmgen context on one device, and its calls (quantize, checkpoint
import, GEMM, tuning, cache files). Every failing call raises MgenError with the library's
status and message; arrays are any CUDA arrays (arrays.describe); streams are cudaStream_t
handles as integers (0: the legacy default stream)."""
import ctypes

from . import _lib
from .arrays import describe
from .errors import ArgumentError, MgenError


def _enum(table, value, what):
    if value not in table:
        raise ArgumentError(f"{what}={value!r}: one of {', '.join(sorted(table))}")
    return table[value]


def _create_error(lib, status):
    """Why mgen_ctx_create failed: a failed create leaves no context, so the library keeps its
    message as the thread's mgen_ctx_last_error(NULL), "mgen_ctx_create: <mgen_status_str>: <why>"
    (the CUDA error's name included); MgenError says the call and status itself."""
    text = (lib.mgen_ctx_last_error(None) or b"").decode(errors="replace")
    prefix = f"mgen_ctx_create: {lib.mgen_status_str(status).decode()}"
    if text.startswith(prefix + ": "):
        return text[len(prefix) + 2:]
    return lib.mgen_status_str(status).decode()  # a library without the message


class QuantizedWeight:
    """Packed weights: the description (mgen_weights) plus the device buffers holding them
    (`q`, `scales`: arrays the caller allocated, kept alive here). The bias its GEMMs add,
    desc.d_bias, is NULL as Context makes it: the GEMM calls' `bias` argument adds one for a
    call (marlin_gen.torch's modules set d_bias on their own descriptions)."""

    def __init__(self, desc, q, scales):
        self.desc, self.q, self.scales = desc, q, scales

    @property
    def n(self):
        return self.desc.n

    @property
    def k(self):
        return self.desc.k


class MoeRoute:
    """A MoE route (mgen_moe_route: mgen.h "Mixture of experts"): m tokens' top-k expert ids
    grouped by local expert into runs padded to block_rows, and the device arrays it reads
    (topk_ids, expert_map) and writes (sorted_ids, block_experts, num_padded), kept alive here;
    or an unsorted one (`unsorted`: no list, no buffers; moe_gemm takes every pair as a block
    of its own, its expert read from topk_ids). Made by Context.moe_route (a sorted one filled
    on the GPU); read by moe_gemm and moe_sum."""

    def __init__(self, desc, arrays, rows=None):
        self.desc, self.arrays, self._rows = desc, arrays, rows

    @property
    def m(self):
        return self.desc.m

    @property
    def topk(self):
        return self.desc.topk

    @property
    def block_rows(self):
        return self.desc.block_rows

    @property
    def local_experts(self):
        return self.desc.local_experts

    @property
    def unsorted(self):
        """True for a route without a sorted list (mgen_moe_route.unsorted)."""
        return bool(self.desc.unsorted)

    @property
    def rows(self):
        """The sorted list's capacity (moe_route_rows): the rows of A permuted into its order;
        0 unsorted."""
        return self._rows


def _route_desc(m, topk, num_experts, local_experts, block_rows, unsorted=False):
    return _lib.MoeRoute(m=m, topk=topk, num_experts=num_experts,
                         local_experts=num_experts if local_experts is None else local_experts,
                         block_rows=block_rows, unsorted=int(bool(unsorted)))


def _desc_ref(wt, bias, act, shape, call):
    """wt's description for one GEMM call, by reference: wt.desc itself where bias is None (its
    d_bias, NULL unless its owner set one), else a copy whose d_bias is `bias`, an array of
    act and `shape` (mgen_weights.d_bias), so that wt never keeps a call's bias. The caller
    keeps `bias` alive until the GEMM has run, as it does a and c."""
    if bias is None:
        return ctypes.byref(wt.desc)
    ba = describe(bias, "bias")
    if ba.dtype != act or ba.shape != shape:
        raise ArgumentError(f"bias {ba.dtype} {list(ba.shape)}: expected {act} {list(shape)}, "
                            "the output's type", call)
    if ba.ptr & 15:
        raise ArgumentError(f"bias at {ba.ptr:#x}: not 16-byte aligned (the kernels read it 16 "
                            "bytes at a time): pass a copy", call)
    desc = _lib.Weights.from_buffer_copy(wt.desc)
    desc.d_bias = ba.ptr
    return ctypes.byref(desc)  # the reference keeps the copy alive


def a8_per_row(m, scale_shape):
    """mgen_gemm_a8's a_scale_per_row for row scales of shape `scale_shape` (a tuple: (m,) or
    (1,)) and m rows: 1 for a scale per row, 0 for one per tensor (M = 1: the same one)."""
    return 1 if tuple(scale_shape) == (m,) and m != 1 else 0


class Context:
    def __init__(self, device=-1, library=None, max_workspaces=0, plain_launches=False, max_sms=0):
        self.lib = _lib.load(library)
        opts = _lib.CtxOpts(device=device, max_workspaces=max_workspaces,
                            plain_launches=int(bool(plain_launches)), max_sms=max_sms)
        ptr = ctypes.c_void_p()
        status = self.lib.mgen_ctx_create(ctypes.byref(ptr), self.lib.mgen_builtin_table(),
                                          ctypes.byref(opts))
        if status != 0:
            raise MgenError(status, _create_error(self.lib, status), "mgen_ctx_create")
        self.ptr = ptr

    def close(self):
        if getattr(self, "ptr", None):
            self.lib.mgen_ctx_destroy(self.ptr)
            self.ptr = None

    __del__ = close

    def _check(self, status, call, ctx="self"):
        if status != 0:
            handle = self.ptr if ctx == "self" else None
            text = self.lib.mgen_ctx_last_error(handle) if handle else b""
            raise MgenError(status, (text or self.lib.mgen_status_str(status)).decode(), call)

    # ---------------------------------------------------------------- weights

    def describe_weights(self, n, k, act="f16", wfmt="u4b8", group=128, scheme=None,
                         layout=None):
        """An mgen_weights for n x k weights and the (q, scales) byte sizes it needs. wfmt:
        "u4b8" (GPTQ symmetric int4), "u4" (asymmetric int4 with zero points, scheme "asym":
        AWQ, GPTQ sym=false; its scales buffer holds the zero points after the scales) or
        "fe2m1" (NVFP4, MXFP4). scheme: named by the caller, or the format table's for
        (wfmt, group) (_lib.scheme_of). layout: None (the format's default, "mma") or "e4m3"
        (for gemm_a8, FP8 activations: u4b8, u4 and MXFP4)."""
        if not scheme and wfmt in _lib.WFMT:
            scheme = _lib.scheme_of(wfmt, group)
            if scheme is None:
                groups = "; ".join(f"{name}: {', '.join(map(str, g))}"
                                   for name, (w, g) in _lib.SCHEME_GROUPS.items() if w == wfmt)
                raise MgenError(-5, f"wfmt={wfmt!r} group={group}: no scale scheme of {wfmt} has "
                                f"that group ({groups})", "describe_weights")
        w = _lib.Weights(wfmt=_enum(_lib.WFMT, wfmt, "wfmt"), act=_enum(_lib.ACT, act, "act"),
                         scheme=_enum(_lib.SCHEME, scheme, "scheme"), group=group, n=n, k=k,
                         layout=_enum(_lib.LAYOUT, layout, "layout") if layout else 0)
        qb, sb = ctypes.c_size_t(), ctypes.c_size_t()
        self._check(self.lib.mgen_weights_bytes(ctypes.byref(w), ctypes.byref(qb),
                                                ctypes.byref(sb)), "mgen_weights_bytes", None)
        return w, qb.value, sb.value

    def _weight(self, desc, q, scales):
        qa, sa = describe(q, "q"), describe(scales, "scales")
        desc.d_q, desc.d_scales = qa.ptr, sa.ptr
        return QuantizedWeight(desc, q, scales)

    def quantize(self, weight, desc, q, scales, stream=0):
        """Quantizes the n x k FP16/BF16 `weight` into the buffers q, scales (sized by
        describe_weights)."""
        wt = self._weight(desc, q, scales)
        a = describe(weight, "weight")
        self._check(self.lib.mgen_quantize(self.ptr, a.ptr, ctypes.byref(desc), stream),
                    "mgen_quantize")
        return wt

    def quantize_act(self, x, q, scales, stream=0):
        """FP8 E4M3 activations (mgen_quantize_act): x [m, k] float16/bfloat16 -> q [m, k]
        uint8 E4M3 codes (torch: view them as float8_e4m3fn) and scales [m] float32, row i
        ~ q[i] * scales[i], enqueued on `stream`."""
        xa, qa, sa = describe(x, "x"), describe(q, "q"), describe(scales, "scales")
        if len(xa.shape) != 2 or qa.dtype != "u8" or qa.shape != xa.shape or \
                sa.dtype != "f32" or sa.shape != (xa.shape[0],):
            raise ArgumentError(f"x {xa.dtype} {xa.shape}, q {qa.dtype} {qa.shape}, scales "
                                f"{sa.dtype} {sa.shape}: expected x [m, k], q uint8 [m, k] and "
                                "scales float32 [m]", "quantize_act")
        self._check(self.lib.mgen_quantize_act(
            self.ptr, _enum(_lib.ACT, xa.dtype, "x.dtype"), xa.shape[0], xa.shape[1], xa.ptr,
            qa.ptr, ctypes.cast(sa.ptr, ctypes.POINTER(ctypes.c_float)), stream),
            "mgen_quantize_act")

    def pack(self, desc, q, scales, codes, code_scales, stream=0):
        """Packs already-quantized u4b8 weights (mgen_pack): `codes` n x k uint8 (0..15, value
        (code - 8) * scale), `code_scales` (k/group) x n of the activation type (1 x n per
        channel). Checks the inputs on the GPU first, so it waits for `stream`."""
        wt = self._weight(desc, q, scales)
        ca, sa = describe(codes, "codes"), describe(code_scales, "code_scales")
        self._check(self.lib.mgen_pack(self.ptr, ca.ptr, sa.ptr, ctypes.byref(desc), stream),
                    "mgen_pack")
        return wt

    def pack_weights(self, desc, q, scales, codes, code_scales, zeros=None, global_scale=0.0,
                     stream=0):
        """Packs already-quantized weights of any format (mgen_pack_weights), sizes checked by
        the library: u4b8 `codes` n x k uint8 (0..15, value (code - 8) * scale), `code_scales`
        (k/group or 1) x n of the activation type, `zeros` None; u4 (asymmetric int4: AWQ, GPTQ
        sym=false) the same codes (0..15, the checkpoint's unsigned q) and scales, and `zeros`
        (k/group or 1) x n uint8, one zero point 0..15 each, value (code - zero) * scale;
        fe2m1 `codes` n x k/2 bytes of E2M1 pairs, `code_scales` n x k/group E4M3 / E8M0 bytes,
        `global_scale` NVFP4's. Checks the inputs on the GPU first, so it waits for `stream`."""
        wt = self._weight(desc, q, scales)
        ca, sa = describe(codes, "codes"), describe(code_scales, "code_scales")
        za = describe(zeros, "zeros") if zeros is not None else None
        src = _lib.PackSrc(codes=ca.ptr, codes_bytes=ca.nbytes, scales=sa.ptr,
                           scales_bytes=sa.nbytes, global_scale=float(global_scale),
                           zeros=za.ptr if za else None, zeros_bytes=za.nbytes if za else 0)
        self._check(self.lib.mgen_pack_weights(self.ptr, ctypes.byref(src), ctypes.byref(desc),
                                               stream), "mgen_pack_weights")
        return wt

    def import_fp4(self, desc, q, scales, packed, block_scales, global_scale=1.0, stream=0):
        """An NVFP4 (ModelOpt: `weight`, `weight_scale`, `weight_scale_2` as global_scale) or
        MXFP4 (OCP: `blocks`, `scales`; global_scale ignored) layer's tensors as stored
        (mgen_pack_fp4): `packed` n x k/2 bytes of E2M1 pairs, `block_scales` n x k/group bytes
        (E4M3 or E8M0; view a float8 tensor as uint8), sizes checked by the library; desc from describe_weights(..., wfmt="fe2m1", group=16 or 32)."""
        wt = self._weight(desc, q, scales)
        pa, ba = describe(packed, "packed"), describe(block_scales, "block_scales")
        self._check(self.lib.mgen_pack_fp4(self.ptr, pa.ptr, pa.nbytes, ba.ptr, ba.nbytes,
                                           float(global_scale), ctypes.byref(desc), stream),
                    "mgen_pack_fp4")
        return wt

    def import_gptq(self, desc, q, scales, qweight, gptq_scales, qzeros=None, g_idx=None,
                    zeros="auto", stream=0):
        """A GPTQ layer's tensors as stored (mgen_import_gptq); zeros: "auto", "minus_one"
        (checkpoint_format "gptq"), "exact" ("gptq_v2"). sym false: desc of wfmt="u4" and
        zeros "minus_one" or "exact" (the library refuses "auto" there: mgen.h)."""
        wt = self._weight(desc, q, scales)
        src = _lib.Gptq(qweight=_tensor(qweight, "qweight"), scales=_tensor(gptq_scales, "scales"),
                        qzeros=_tensor(qzeros, "qzeros"), g_idx=_tensor(g_idx, "g_idx"),
                        zeros=_enum(_lib.GPTQ_ZEROS, zeros, "zeros"))
        self._check(self.lib.mgen_import_gptq(self.ptr, ctypes.byref(src), ctypes.byref(desc),
                                              stream), "mgen_import_gptq")
        return wt

    def import_awq(self, desc, q, scales, qweight, qzeros, awq_scales, stream=0):
        """An AutoAWQ (version "gemm") layer's tensors as stored (mgen_import_awq): qweight
        int32 [k, n/8], qzeros int32 [k/group, n/8], scales [k/group, n]; desc of wfmt="u4"."""
        wt = self._weight(desc, q, scales)
        src = _lib.Awq(qweight=_tensor(qweight, "qweight"), qzeros=_tensor(qzeros, "qzeros"),
                       scales=_tensor(awq_scales, "scales"))
        self._check(self.lib.mgen_import_awq(self.ptr, ctypes.byref(src), ctypes.byref(desc),
                                             stream), "mgen_import_awq")
        return wt

    def import_ct(self, desc, q, scales, weight_packed, weight_scale, weight_zero_point=None,
                  weight_g_idx=None, stream=0):
        """A compressed-tensors pack-quantized layer's tensors as stored (mgen_import_ct);
        symmetric false: weight_zero_point int32 [n/8, k/group] and desc of wfmt="u4"."""
        wt = self._weight(desc, q, scales)
        src = _lib.Ct(weight_packed=_tensor(weight_packed, "weight_packed"),
                      weight_scale=_tensor(weight_scale, "weight_scale"),
                      weight_zero_point=_tensor(weight_zero_point, "weight_zero_point"),
                      weight_g_idx=_tensor(weight_g_idx, "weight_g_idx"))
        self._check(self.lib.mgen_import_ct(self.ptr, ctypes.byref(src), ctypes.byref(desc),
                                            stream), "mgen_import_ct")
        return wt

    # ---------------------------------------------------------------- GEMM, tuning, cache

    def gemm(self, a, wt, c, stream=0, bias=None):
        """c[m, n] = a[m, k] @ W^T (+ bias), enqueued on `stream`. bias: [n] of a's type,
        16-byte aligned, added in FP32 before c's rounding (mgen_weights.d_bias), or None."""
        aa, ca = describe(a, "a"), describe(c, "c")
        if len(aa.shape) != 2 or aa.shape[1] != wt.k or ca.shape != (aa.shape[0], wt.n):
            raise ArgumentError(f"a {aa.shape} and c {ca.shape} for weights n={wt.n} k={wt.k}: "
                                f"expected a [m, {wt.k}] and c [m, {wt.n}]", "gemm")
        desc = _desc_ref(wt, bias, aa.dtype, (wt.n,), "gemm")
        self._check(self.lib.mgen_gemm(self.ptr, _enum(_lib.ACT, aa.dtype, "a.dtype"),
                                       aa.shape[0], aa.ptr, desc, ca.ptr, stream), "mgen_gemm")

    def gemm_a8(self, a8, a_scales, wt, c, stream=0, bias=None):
        """W4A8 (mgen_gemm_a8): c[m, n] = (a_scales * a8[m, k]) @ W^T (+ bias) for weights in the
        "e4m3" layout; a8 uint8 [m, k] E4M3 codes (quantize_act's q), a_scales float32 [m] (a
        scale per row) or [1] (per tensor), c [m, n] of the weights' act, bias [n] of c's type
        (as gemm's) or None."""
        aa, sa, ca = describe(a8, "a8"), describe(a_scales, "a_scales"), describe(c, "c")
        m = aa.shape[0] if len(aa.shape) == 2 else -1
        if aa.dtype != "u8" or len(aa.shape) != 2 or aa.shape[1] != wt.k or \
                sa.dtype != "f32" or sa.shape not in ((m,), (1,)) or ca.shape != (m, wt.n):
            raise ArgumentError(f"a8 {aa.dtype} {aa.shape}, a_scales {sa.dtype} {sa.shape}, c "
                                f"{ca.shape} for weights n={wt.n} k={wt.k}: expected a8 uint8 "
                                f"[m, {wt.k}], a_scales float32 [m] or [1], c [m, {wt.n}]",
                                "gemm_a8")
        desc = _desc_ref(wt, bias, ca.dtype, (wt.n,), "gemm_a8")
        per_row = a8_per_row(m, sa.shape)
        scales = ctypes.cast(sa.ptr, ctypes.POINTER(ctypes.c_float))
        self._check(self.lib.mgen_gemm_a8(self.ptr, _enum(_lib.ACT, ca.dtype, "c.dtype"), m,
                                          aa.ptr, scales, per_row, desc, ca.ptr, stream),
                    "mgen_gemm_a8")

    def gemm_choice(self, act, m, desc):
        """The name of the kernel that mgen_gemm (mgen_gemm_a8 for weights in the "e4m3" layout)
        would run for `act` ("f16", "bf16"), m rows and the weights `desc` (describe_weights'
        description; no buffers needed), from the cache or the cost model, running nothing
        (mgen_gemm_choice). Raises MgenError where no kernel of this library runs them on the
        context's device (e.g. W4A8 weights on a GPU without the wgmma family)."""
        name = ctypes.c_char_p()
        self._check(self.lib.mgen_gemm_choice(self.ptr, _enum(_lib.ACT, act, "act"), m,
                                              ctypes.byref(desc), ctypes.byref(name)),
                    "mgen_gemm_choice")
        return name.value.decode()

    def tune(self, m, wt, stream=0):
        r = _lib.TuneResult()
        self._check(self.lib.mgen_tune(self.ptr, m, ctypes.byref(wt.desc), stream,
                                       ctypes.byref(r)), "mgen_tune")
        return {"kernel": r.kernel.decode(), "us": r.us, "default_kernel":
                r.default_kernel.decode(), "default_us": r.default_us, "m_lo": r.m_lo,
                "m_hi": r.m_hi}

    def set_tune(self, policy="never", reps=0):
        self._check(self.lib.mgen_ctx_set_tune(self.ptr, _enum(_lib.TUNE, policy, "policy"),
                                               reps), "mgen_ctx_set_tune")

    def cache_load(self, path=None):
        applied = ctypes.c_int()
        self._check(self.lib.mgen_cache_load(self.ptr, _path(path), ctypes.byref(applied)),
                    "mgen_cache_load")
        return applied.value

    def cache_save(self, path=None, replace=False):
        self._check(self.lib.mgen_cache_save(self.ptr, _path(path),
                                             _lib.CACHE_REPLACE if replace else 0),
                    "mgen_cache_save")


    # ---------------------------------------------------------------- mixture of experts

    def moe_choice(self, act, m, topk, num_experts, wt, local_experts=None, unsorted=False):
        """(kernel name, block_rows): what moe_gemm would run for m tokens routed to topk of
        num_experts experts (local_experts of them in wt's buffers: all without an expert map)
        over wt, one expert's description, on a sorted route (or an unsorted one); route with
        that block_rows."""
        r = _route_desc(m, topk, num_experts, local_experts, 0, unsorted)
        name, rows = ctypes.c_char_p(), ctypes.c_int()
        self._check(self.lib.mgen_moe_gemm_choice(self.ptr, _enum(_lib.ACT, act, "act"),
                                                  ctypes.byref(r), ctypes.byref(wt.desc),
                                                  ctypes.byref(name), ctypes.byref(rows)),
                    "mgen_moe_gemm_choice")
        return name.value.decode(), rows.value

    def moe_a_sorted(self, act, m, topk, num_experts, wt, local_experts=None):
        """Whether moe_gemm over wt for m tokens' top-k (as moe_choice) reads A faster permuted
        into the route's order (moe_permute, then moe_gemm(..., a_sorted=True)) by more than
        the permutation costs (mgen_moe_gemm_a_sorted: a rule measured on an H200)."""
        r = _route_desc(m, topk, num_experts, local_experts, 0)
        pays = ctypes.c_int()
        self._check(self.lib.mgen_moe_gemm_a_sorted(self.ptr, _enum(_lib.ACT, act, "act"),
                                                    ctypes.byref(r), ctypes.byref(wt.desc),
                                                    ctypes.byref(pays)),
                    "mgen_moe_gemm_a_sorted")
        return bool(pays.value)

    def moe_unsorted_pays(self, act, m, topk, num_experts, wt, local_experts=None):
        """(pays, block_rows): whether moe_gemm over wt for m tokens' top-k (as moe_choice) is
        expected to run faster on an unsorted route (moe_route(..., unsorted=True): no route
        kernel) than on a sorted one plus its route (mgen_moe_unsorted_pays: decode sizes,
        where the choice for it is of the mma family), and the block_rows to give that unsorted
        route. A layer's GEMMs share the route it saves: take it unsorted where both pay. Reads
        sizes only: the same answer in a CUDA graph's capture as outside it."""
        r = _route_desc(m, topk, num_experts, local_experts, 0)
        pays, rows = ctypes.c_int(), ctypes.c_int()
        self._check(self.lib.mgen_moe_unsorted_pays(self.ptr, _enum(_lib.ACT, act, "act"),
                                                    ctypes.byref(r), ctypes.byref(wt.desc),
                                                    ctypes.byref(pays), ctypes.byref(rows)),
                    "mgen_moe_unsorted_pays")
        return bool(pays.value), rows.value

    def moe_route_rows(self, m, topk, num_experts, block_rows, local_experts=None,
                       unsorted=False):
        """The route's capacity in rows: sorted_ids holds that many int32, block_experts
        rows / block_rows, num_padded one (mgen_moe_route_rows); 0 unsorted (no list)."""
        r = _route_desc(m, topk, num_experts, local_experts, block_rows, unsorted)
        rows = ctypes.c_int()
        self._check(self.lib.mgen_moe_route_rows(ctypes.byref(r), ctypes.byref(rows)),
                    "mgen_moe_route_rows", None)
        return rows.value

    def moe_route(self, topk_ids, num_experts, block_rows, sorted_ids=None, block_experts=None,
                  num_padded=None, expert_map=None, local_experts=None, stream=0,
                  unsorted=False):
        """Routes on `stream` (mgen_moe_route_tokens): topk_ids int32 [m, topk] (token t's
        experts in row t; an id outside 0..num_experts-1 routes its pair nowhere), expert_map
        int32 [num_experts] (expert -> local index, -1: not on this GPU) or None, and the
        buffers the route writes, int32 arrays of moe_route_rows' sizes. With unsorted (where
        moe_unsorted_pays says so, with its block_rows) there is no list: no buffers (None),
        nothing is launched, and moe_gemm reads topk_ids and expert_map itself. A MoeRoute."""
        ids = describe(topk_ids, "topk_ids")
        if ids.dtype != "i32" or len(ids.shape) != 2 or 0 in ids.shape:
            raise ArgumentError(f"topk_ids: {ids.dtype} {list(ids.shape)}; expected int32 "
                                "[m, topk], m and topk >= 1", "moe_route")
        lists = (("sorted_ids", sorted_ids), ("block_experts", block_experts),
                 ("num_padded", num_padded))
        given = [name for name, obj in lists if obj is not None]
        if unsorted and given:
            raise ArgumentError(f"{', '.join(given)}: an unsorted route has no sorted list "
                                "(pass None)", "moe_route")
        if not unsorted and len(given) < len(lists):
            raise ArgumentError("sorted_ids, block_experts and num_padded: a sorted route "
                                "writes its list there (moe_route_rows' sizes), or pass "
                                "unsorted=True", "moe_route")
        m, topk = ids.shape
        r = _route_desc(m, topk, num_experts, local_experts, block_rows, unsorted)
        rows = self.moe_route_rows(m, topk, num_experts, block_rows, r.local_experts, unsorted)
        want = {"sorted_ids": rows, "block_experts": rows // block_rows, "num_padded": 1}
        arrays = {"topk_ids": ids}
        for name, obj in lists + (("expert_map", expert_map),):
            if obj is None:
                continue
            a = describe(obj, name)
            count = num_experts if name == "expert_map" else want[name]
            if a.dtype != "i32" or a.nbytes != 4 * count:
                raise ArgumentError(f"{name}: {a.dtype} {list(a.shape)}; expected {count} int32",
                                    "moe_route")
            arrays[name] = a
        r.d_topk_ids = ids.ptr
        for name in ("sorted_ids", "block_experts", "num_padded", "expert_map"):
            setattr(r, "d_" + name, arrays[name].ptr if name in arrays else None)
        self._check(self.lib.mgen_moe_route_tokens(self.ptr, ctypes.byref(r), stream),
                    "mgen_moe_route_tokens")
        return MoeRoute(r, arrays, rows)

    def _experts_fit(self, wt, experts, call):
        """wt's buffers hold `experts` experts of wt's description (each at e * its bytes)."""
        qb, sb = ctypes.c_size_t(), ctypes.c_size_t()
        self._check(self.lib.mgen_weights_bytes(ctypes.byref(wt.desc), ctypes.byref(qb),
                                                ctypes.byref(sb)), "mgen_weights_bytes", None)
        for name, obj, size in (("q", wt.q, qb.value), ("scales", wt.scales, sb.value)):
            have = describe(obj, name).nbytes
            if have < experts * size:
                raise ArgumentError(f"{name}: {have} bytes for {experts} experts of {size} bytes",
                                    call)

    def moe_permute(self, route, a, a_per_pair, out, stream=0):
        """A's rows in the route's order (mgen_moe_permute): out[i] = a[id // topk] (a_per_pair
        False: a is [m, k]) or a[id] (True: [m * topk, k]) for id = sorted_ids[i], zeros for
        padding, for the rows in use; out is [route.rows, k] of a's type. For moe_gemm(...,
        a_sorted=True), which then reads A by whole blocks of rows. Not for an unsorted route
        (no order: ArgumentError)."""
        if route.unsorted:
            raise ArgumentError("an unsorted route has no order to permute A into (moe_gemm "
                                "gathers A's rows for it)", "moe_permute")
        aa, oa = describe(a, "a"), describe(out, "out")
        rows = route.m * route.topk if a_per_pair else route.m
        if len(aa.shape) != 2 or aa.shape[0] != rows or oa.shape != (route.rows, aa.shape[1]) or \
                aa.dtype != oa.dtype or aa.dtype not in ("f16", "bf16"):
            raise ArgumentError(f"a {aa.dtype} {list(aa.shape)}, out {oa.dtype} {list(oa.shape)}: "
                                f"expected a [{rows}, k] and out [{route.rows}, k] of one 16-bit "
                                "type", "moe_permute")
        self._check(self.lib.mgen_moe_permute(self.ptr, ctypes.byref(route.desc),
                                              _lib.MOE_A_ROWS["pairs" if a_per_pair else "tokens"],
                                              aa.shape[1], aa.ptr, oa.ptr, stream),
                    "mgen_moe_permute")

    def moe_gemm(self, route, a, wt, c, a_per_pair, topk_weights=None, stream=0, a_sorted=False,
                 bias=None):
        """The grouped GEMM over `route` (mgen_moe_gemm): for each routed pair id, c[id] =
        a[id // topk] (a_per_pair False: a is [m, k]) or a[id] (True: a is [m * topk, k]) times
        its local expert e's W^T, plus bias[e] when given, times topk_weights[id] (float32
        [m, topk]) when given; with a_sorted, a is [route.rows, k] in the route's order
        (moe_permute; a_per_pair unused; not on an unsorted route, whose pairs are blocks of
        their own in id order). wt: one expert's description whose q and scales hold
        route.local_experts experts. bias: [route.local_experts, n] of a's type, 16-byte
        aligned, or None (wt.desc's d_bias: how marlin_gen.torch.Experts passes its own). c is
        [m * topk, n]; rows of pairs routed nowhere are not written."""
        if a_sorted and route.unsorted:
            raise ArgumentError("a_sorted=True on an unsorted route: it has no order for A to "
                                "be in (A per token or per pair)", "moe_gemm")
        aa, ca = describe(a, "a"), describe(c, "c")
        rows = route.rows if a_sorted else route.m * route.topk if a_per_pair else route.m
        pairs = route.m * route.topk
        if aa.shape != (rows, wt.k) or ca.shape != (pairs, wt.n) or aa.dtype != ca.dtype:
            raise ArgumentError(f"a {aa.dtype} {list(aa.shape)}, c {ca.dtype} {list(ca.shape)}: "
                                f"expected a [{rows}, {wt.k}] and c [{pairs}, {wt.n}] of one "
                                "type", "moe_gemm")
        self._experts_fit(wt, route.local_experts, "moe_gemm")
        desc = _desc_ref(wt, bias, aa.dtype, (route.local_experts, wt.n), "moe_gemm")
        tw = None
        if topk_weights is not None:
            ta = describe(topk_weights, "topk_weights")
            if ta.dtype != "f32" or ta.nbytes != 4 * pairs:
                raise ArgumentError(f"topk_weights: {ta.dtype} {list(ta.shape)}; expected "
                                    f"{pairs} float32 ([m, topk])", "moe_gemm")
            tw = ctypes.cast(ta.ptr, ctypes.POINTER(ctypes.c_float))
        self._check(self.lib.mgen_moe_gemm(self.ptr, _enum(_lib.ACT, aa.dtype, "a.dtype"),
                                           ctypes.byref(route.desc),
                                           _lib.MOE_A_ROWS["sorted" if a_sorted else
                                                           "pairs" if a_per_pair else "tokens"],
                                           aa.ptr, desc, tw, ca.ptr, stream),
                    "mgen_moe_gemm")

    def moe_sum(self, route, c, out, stream=0):
        """out[t] = the sum over k, in order, of c[t * topk + k] over token t's pairs routed to
        a local expert (zeros where none is): c [m * topk, n], out [m, n] (mgen_moe_sum)."""
        ca, oa = describe(c, "c"), describe(out, "out")
        if len(ca.shape) != 2 or ca.shape[0] != route.m * route.topk or \
                oa.shape != (route.m, ca.shape[1]) or ca.dtype != oa.dtype:
            raise ArgumentError(f"c {ca.dtype} {list(ca.shape)}, out {oa.dtype} "
                                f"{list(oa.shape)}: expected c [{route.m * route.topk}, n] and "
                                f"out [{route.m}, n] of one type", "moe_sum")
        self._check(self.lib.mgen_moe_sum(self.ptr, _enum(_lib.ACT, ca.dtype, "c.dtype"),
                                          ctypes.byref(route.desc), ca.shape[1], ca.ptr, oa.ptr,
                                          stream), "mgen_moe_sum")


def _path(path):
    return None if path is None else str(path).encode()


def _tensor(obj, name):
    """An mgen_tensor for a checkpoint tensor (None: absent). The object must outlive the call."""
    if obj is None:
        return _lib.Tensor()
    a = describe(obj, name)
    if len(a.shape) not in (1, 2):
        raise ArgumentError(f"{name}: {len(a.shape)} dimensions; checkpoint tensors have 1 or 2")
    shape = list(a.shape) + [0] * (2 - len(a.shape))
    return _lib.Tensor(data=a.ptr, dtype=_lib.DTYPE[a.dtype], ndim=len(a.shape),
                       shape=(ctypes.c_int64 * 2)(*shape))
