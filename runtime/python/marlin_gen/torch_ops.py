"""torch_ops.py -- marlin_gen's GEMM as PyTorch ops (needs PyTorch >= 2.4): `marlin_gen::gemm`,
and for W4A8 (FP8 E4M3 activations, weights packed in the "e4m3" layout, sm_90)
`marlin_gen::quantize_act` and `marlin_gen::gemm_a8` (registered as _op.py says) with fake
implementations, so torch.compile traces them, launching on the current CUDA stream, so CUDA
graph capture records them. One Context per device, created on first use. The ops take the
packed buffers and the weights' shape and format on every call; their description
(mgen_weights, checked by the library once) is cached per (device, shape, format, layout), so a
call describes only its pointers (marlin_gen.torch.Linear caches those too)."""
import ctypes

import torch

from . import _lib, _op
from .api import Context, a8_per_row
from .errors import ArgumentError

_contexts = {}
_descs = {}  # (device index, n, k, act, wfmt, group, scheme, layout) -> (mgen_weights, qbytes, sbytes)
_ACT = {torch.float16: "f16", torch.bfloat16: "bf16"}

try:  # the current stream's raw cudaStream_t as an int, without building a Stream object
    _raw_stream = torch._C._cuda_getCurrentRawStream
except AttributeError:  # a build without CUDA: no op can run there anyway
    def _raw_stream(index):
        return torch.cuda.current_stream(index).cuda_stream


def context(device=None):
    index = torch.cuda.current_device() if device is None else torch.device(device).index
    if index not in _contexts:
        _contexts[index] = Context(device=index)
    return _contexts[index]


def _weights(op, device, q, scales, n, k, act, wfmt, group, scheme, layout=None):
    """The mgen_weights of (q, scales) on `device`: the cached description with their pointers
    and no bias (the ops take none), after checking that the buffers are contiguous uint8 of
    its sizes there."""
    ctx = context(device)
    key = (device.index, n, k, act, wfmt, group, scheme, layout)
    if key not in _descs:  # the library checks the description once
        _descs[key] = ctx.describe_weights(n, k, act=act, wfmt=wfmt, group=group, scheme=scheme,
                                           layout=layout)
    template, qbytes, sbytes = _descs[key]
    for name, t, size in (("q", q, qbytes), ("scales", scales, sbytes)):
        if t.device != device or t.dtype != torch.uint8 or not t.is_contiguous() or \
                t.numel() < size:
            raise ArgumentError(f"{name}: {t.dtype} {list(t.shape)} on {t.device}: expected "
                                f"{size} contiguous uint8 on {device}", op)
    desc = _lib.Weights.from_buffer_copy(template)
    desc.d_q, desc.d_scales = q.data_ptr(), scales.data_ptr()
    desc.d_bias = None  # the ops add none, whatever the shared template holds
    return ctx, desc


def _gemm(a, q, scales, n, k, group, wfmt, scheme):
    """C = a @ W^T for packed weights (q, scales) of an n x k weight."""
    if a.dtype not in _ACT or a.dim() != 2 or a.shape[1] != k or not a.is_cuda:
        raise ArgumentError(f"a {a.dtype} {list(a.shape)} on {a.device}: expected a CUDA "
                            f"float16 or bfloat16 [m, {k}]", "marlin_gen::gemm")
    ctx, desc = _weights("marlin_gen::gemm", a.device, q, scales, n, k, _ACT[a.dtype], wfmt,
                         group, scheme)
    a = a.contiguous()
    c = torch.empty((a.shape[0], n), dtype=a.dtype, device=a.device)
    if a.shape[0]:
        ctx._check(ctx.lib.mgen_gemm(ctx.ptr, _lib.ACT[_ACT[a.dtype]], a.shape[0], a.data_ptr(),
                                     ctypes.byref(desc), c.data_ptr(),
                                     _raw_stream(a.device.index)),
                   "mgen_gemm")
    return c


def _gemm_fake(a, q, scales, n, k, group, wfmt, scheme):
    return a.new_empty((a.shape[0], n))


gemm = _op.define("gemm", "(Tensor a, Tensor q, Tensor scales, int n, int k, int group, str wfmt, "
                  "str scheme) -> Tensor", _gemm, _gemm_fake)


def _quantize_act(x):
    """FP8 E4M3 activations (mgen_quantize_act): x [m, k] float16/bfloat16 -> (q [m, k]
    float8_e4m3fn, scales [m] float32), row i ~ q[i] * scales[i]."""
    if x.dtype not in _ACT or x.dim() != 2 or not x.is_cuda:
        raise ArgumentError(f"x {x.dtype} {list(x.shape)} on {x.device}: expected a CUDA float16 "
                            "or bfloat16 [m, k]", "marlin_gen::quantize_act")
    x = x.contiguous()
    q = torch.empty(x.shape, dtype=torch.float8_e4m3fn, device=x.device)
    scales = torch.empty(x.shape[0], dtype=torch.float32, device=x.device)
    if x.numel():  # the library directly: Context.quantize_act would describe 3 arrays a call
        ctx = context(x.device)
        ctx._check(ctx.lib.mgen_quantize_act(ctx.ptr, _lib.ACT[_ACT[x.dtype]], x.shape[0],
                                             x.shape[1], x.data_ptr(), q.data_ptr(),
                                             ctypes.cast(scales.data_ptr(),
                                                         ctypes.POINTER(ctypes.c_float)),
                                             _raw_stream(x.device.index)),
                   "mgen_quantize_act")
    return q, scales


def _quantize_act_fake(x):
    return (x.new_empty(x.shape, dtype=torch.float8_e4m3fn),
            x.new_empty((x.shape[0],), dtype=torch.float32))


def _gemm_a8(a8, a_scales, q, scales, n, k, group, wfmt, scheme, out_dtype):
    """W4A8 (mgen_gemm_a8): C [m, n] of out_dtype (float16 or bfloat16, the type the weights
    were packed for) = (a_scales * a8) @ W^T, a8 [m, k] float8_e4m3fn (or its uint8 codes),
    a_scales float32 [m] (a scale per row) or [1] (per tensor), weights (q, scales) packed in
    the "e4m3" layout."""
    op = "marlin_gen::gemm_a8"
    if a8.dtype not in (torch.float8_e4m3fn, torch.uint8) or a8.dim() != 2 or \
            a8.shape[1] != k or not a8.is_cuda:
        raise ArgumentError(f"a8 {a8.dtype} {list(a8.shape)} on {a8.device}: expected a CUDA "
                            f"float8_e4m3fn [m, {k}]", op)
    m = a8.shape[0]
    if a_scales.dtype != torch.float32 or a_scales.device != a8.device or \
            tuple(a_scales.shape) not in ((m,), (1,)):
        raise ArgumentError(f"a_scales {a_scales.dtype} {list(a_scales.shape)} on "
                            f"{a_scales.device}: expected float32 [{m}] or [1] on {a8.device}", op)
    if out_dtype not in _ACT:
        raise ArgumentError(f"out_dtype {out_dtype}: expected torch.float16 or torch.bfloat16", op)
    ctx, desc = _weights(op, a8.device, q, scales, n, k, _ACT[out_dtype], wfmt, group, scheme,
                         layout="e4m3")
    a8 = a8.contiguous().view(torch.uint8)
    a_scales = a_scales.contiguous()
    c = torch.empty((m, n), dtype=out_dtype, device=a8.device)
    if m:
        per_row = a8_per_row(m, a_scales.shape)
        ctx._check(ctx.lib.mgen_gemm_a8(ctx.ptr, _lib.ACT[_ACT[out_dtype]], m, a8.data_ptr(),
                                        ctypes.cast(a_scales.data_ptr(),
                                                    ctypes.POINTER(ctypes.c_float)),
                                        per_row, ctypes.byref(desc), c.data_ptr(),
                                        _raw_stream(a8.device.index)),
                   "mgen_gemm_a8")
    return c


def _gemm_a8_fake(a8, a_scales, q, scales, n, k, group, wfmt, scheme, out_dtype):
    return a8.new_empty((a8.shape[0], n), dtype=out_dtype)


quantize_act = _op.define("quantize_act", "(Tensor x) -> (Tensor, Tensor)", _quantize_act,
                          _quantize_act_fake)
gemm_a8 = _op.define("gemm_a8", "(Tensor a8, Tensor a_scales, Tensor q, Tensor scales, int n, "
                     "int k, int group, str wfmt, str scheme, ScalarType out_dtype) -> Tensor",
                     _gemm_a8, _gemm_a8_fake)
