"""marlin_gen.torch -- PyTorch layers over libmgen for inference engines: Linear (packed 4-bit
weights prepared once, one C call per forward), load_linear_layers (a safetensors
checkpoint's quantized linear layers as Linear modules; needs the `safetensors` package),
Experts (a MoE projection's experts in one allocation) and fused_moe (a MoE layer's experts on
the library's grouped GEMM), from layers.py, loader.py and moe.py. Top-level modules of the package (packaged as they are), importing
with absolute names, so `import torch` is PyTorch everywhere, never this module."""
from marlin_gen.layers import Linear
from marlin_gen.loader import load_linear_layers
from marlin_gen.moe import Experts, fused_moe

__all__ = ["Experts", "Linear", "fused_moe", "load_linear_layers"]
