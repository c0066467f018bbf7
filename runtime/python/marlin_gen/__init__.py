"""marlin_gen -- Python bindings of libmgen (marlin-gen's runtime) through ctypes: quantize or
import 4-bit weights (u4b8: GPTQ symmetric int4; u4: asymmetric int4 with zero points, AWQ and
GPTQ sym=false; fe2m1: NVFP4, MXFP4), run the GEMM, tune and keep the tuning cache, on any CUDA array
(__cuda_array_interface__ or DLPack). With PyTorch importable, `marlin_gen.torch_ops` registers
the GEMM as a torch.library op."""
from ._lib import LibraryNotFound, load
from ._version import __version__
from .api import Context, MoeRoute, QuantizedWeight
from .arrays import Array, describe
from .errors import STATUS, ArgumentError, MgenError

__all__ = ["Array", "ArgumentError", "Context", "LibraryNotFound", "MgenError",
           "MoeRoute", "QuantizedWeight", "STATUS", "__version__", "describe", "load"]
