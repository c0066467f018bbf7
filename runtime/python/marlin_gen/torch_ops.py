"""torch_ops.py -- marlin_gen's GEMM as a PyTorch op (needs PyTorch >= 2.4): `marlin_gen::gemm`
with a fake (meta) implementation, so torch.compile traces it, launching on the current CUDA
stream, so CUDA graph capture records it. One Context per device, created on first use."""
import torch

from .api import Context

_contexts = {}
_ACT = {torch.float16: "f16", torch.bfloat16: "bf16"}


def context(device=None):
    index = torch.cuda.current_device() if device is None else torch.device(device).index
    if index not in _contexts:
        _contexts[index] = Context(device=index)
    return _contexts[index]


@torch.library.custom_op("marlin_gen::gemm", mutates_args=())
def gemm(a: torch.Tensor, q: torch.Tensor, scales: torch.Tensor, n: int, k: int, group: int,
         wfmt: str, scheme: str) -> torch.Tensor:
    """C = a @ W^T for packed weights (q, scales) of an n x k weight."""
    ctx = context(a.device)
    desc, _, _ = ctx.describe_weights(n, k, act=_ACT[a.dtype], wfmt=wfmt, group=group,
                                      scheme=scheme)
    wt = ctx._weight(desc, q, scales)
    c = torch.empty((a.shape[0], n), dtype=a.dtype, device=a.device)
    ctx.gemm(a.contiguous(), wt, c, stream=torch.cuda.current_stream(a.device).cuda_stream)
    return c


@gemm.register_fake
def _(a, q, scales, n, k, group, wfmt, scheme):
    return a.new_empty((a.shape[0], n))
