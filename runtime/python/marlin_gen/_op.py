"""_op.py -- how marlin_gen's PyTorch ops are registered (marlin_gen::gemm, ::linear,
::fused_moe, ::quantize_act, ::gemm_a8): a schema, one implementation for the CUDA and CPU dispatch keys (it checks its
tensors' devices itself and raises ArgumentError for a CPU tensor), and a fake implementation
for torch.compile's tracing.

Not torch.library.custom_op: its wrapper (autograd registration, alias checks of every output,
Python redispatch through the autograd key) cost 8-15 us per call on the host before the op's
own code ran, where a kernel registered on a torch.library.Library costs ~2 us (a no-op of
each kind, bench/notes/v43.md); at decode the wrapper alone was several times the GEMM. The ops
have no autograd formula (inference only): PyTorch's fallback for an op without one lets a
forward run and warns that a backward through it gives its inputs no gradient (as eager
Linear, which calls the library directly, gives outputs that carry no gradient at all)."""
import torch

# One fragment of the namespace for every module that defines an op in it; it must live as
# long as the ops (a Library unregisters its definitions when it is collected).
_LIB = torch.library.Library("marlin_gen", "FRAGMENT")


def define(name, schema, impl, fake):
    """Registers marlin_gen::`name` with `schema` ("(Tensor x, int n) -> Tensor"), `impl` for
    CUDA and CPU tensors and `fake` for tracing; returns the op's overload (torch.ops.
    marlin_gen.name.default: called directly, it skips the packet's overload lookup)."""
    _LIB.define(name + schema)
    for key in ("CUDA", "CPU"):
        _LIB.impl(name, impl, key)
    torch.library.register_fake("marlin_gen::" + name, fake, lib=_LIB)
    return getattr(torch.ops.marlin_gen, name).default
