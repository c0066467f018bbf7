"""marlin_gen.torch -- a PyTorch layer over libmgen for inference engines: Linear (packed 4-bit
weights prepared once, one C call per forward) and load_linear_layers (a safetensors
checkpoint's quantized linear layers as Linear modules; needs the `safetensors` package), from
layers.py and loader.py. Top-level modules of the package (packaged as they are), importing
with absolute names, so `import torch` is PyTorch everywhere, never this module."""
from marlin_gen.layers import Linear
from marlin_gen.loader import load_linear_layers

__all__ = ["Linear", "load_linear_layers"]
