"""marlin_gen.torch -- a PyTorch layer over libmgen for inference engines: Linear (packed 4-bit
weights prepared once, one C call per forward) and load_linear_layers (a safetensors
checkpoint's quantized linear layers as Linear modules; needs the `safetensors` package).
Imports inside this package are absolute, so `import torch` is PyTorch, never this package."""
from marlin_gen.torch.linear import Linear
from marlin_gen.torch.loader import load_linear_layers

__all__ = ["Linear", "load_linear_layers"]
