"""torch_ops.py -- marlin_gen's GEMM as a PyTorch op (needs PyTorch >= 2.4): `marlin_gen::gemm`
(registered as _op.py says) with a fake implementation, so torch.compile traces it, launching on the current CUDA
stream, so CUDA graph capture records it. One Context per device, created on first use. The
op takes the packed buffers and the weights' shape and format on every call; their description
(mgen_weights, checked by the library once) is cached per (device, shape, format), so a call
describes only its pointers (marlin_gen.torch.Linear caches those too)."""
import ctypes

import torch

from . import _lib, _op
from .api import Context
from .errors import ArgumentError

_contexts = {}
_descs = {}  # (device index, n, k, act, wfmt, group, scheme) -> (mgen_weights, qbytes, sbytes)
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


def _gemm(a, q, scales, n, k, group, wfmt, scheme):
    """C = a @ W^T for packed weights (q, scales) of an n x k weight."""
    if a.dtype not in _ACT or a.dim() != 2 or a.shape[1] != k or not a.is_cuda:
        raise ArgumentError(f"a {a.dtype} {list(a.shape)} on {a.device}: expected a CUDA "
                            f"float16 or bfloat16 [m, {k}]", "marlin_gen::gemm")
    ctx = context(a.device)
    key = (a.device.index, n, k, _ACT[a.dtype], wfmt, group, scheme)
    if key not in _descs:  # the library checks the description once
        _descs[key] = ctx.describe_weights(n, k, act=_ACT[a.dtype], wfmt=wfmt, group=group,
                                           scheme=scheme)
    template, qbytes, sbytes = _descs[key]
    for name, t, size in (("q", q, qbytes), ("scales", scales, sbytes)):
        if t.device != a.device or t.dtype != torch.uint8 or not t.is_contiguous() or \
                t.numel() < size:
            raise ArgumentError(f"{name}: {t.dtype} {list(t.shape)} on {t.device}: expected "
                                f"{size} contiguous uint8 on {a.device}", "marlin_gen::gemm")
    desc = _lib.Weights.from_buffer_copy(template)
    desc.d_q, desc.d_scales = q.data_ptr(), scales.data_ptr()
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
