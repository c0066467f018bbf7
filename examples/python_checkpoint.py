"""python_checkpoint.py -- marlin_gen with a checkpoint file: loads a safetensors checkpoint's
quantized linear layers as marlin_gen.torch.Linear modules and runs them.

Without arguments it first writes a small GPTQ checkpoint (4-bit, group 128, symmetric, two
layers, one with a bias) into a temporary directory, as AutoGPTQ stores it, and checks the
layers' outputs against the weights it wrote; with a path it loads that checkpoint (a directory
with config.json, or a .safetensors file and --config CONFIG.json) and runs every layer once.
Needs a CUDA GPU, PyTorch, safetensors and libmgen.so (MGEN_LIBRARY, or installed with the
package).
Run: MGEN_LIBRARY=build/runtime/libmgen.so python3 examples/python_checkpoint.py [PATH]"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "runtime",
                                "python"))  # the package from this source tree, if not installed
import torch  # noqa: E402
from safetensors.torch import save_file  # noqa: E402

from marlin_gen.torch import load_linear_layers  # noqa: E402


def write_gptq_checkpoint(path, layers, group=128):
    """Random 4-bit codes and FP16 scales per layer {prefix: (n, k, bias)}, stored as GPTQ
    does (qweight int32 [k/8, n]: code of k at bits 4 (k % 8); qzeros: 8 - 1 = 7 per nibble,
    as checkpoint_format "gptq"). Returns {prefix: (W [n, k] float32, bias or None)}."""
    tensors, weights = {}, {}
    for prefix, (n, k, bias) in layers.items():
        codes = torch.randint(0, 16, (n, k), dtype=torch.int64)
        scales = (torch.rand(k // group, n) * 0.02 + 0.001).half()
        qweight = sum(codes.t()[b::8] << (4 * b) for b in range(8))
        # int32 with the same bits, as the checkpoint stores them
        tensors[prefix + ".qweight"] = torch.where(qweight >= 2**31, qweight - 2**32,
                                                   qweight).to(torch.int32).contiguous()
        tensors[prefix + ".qzeros"] = torch.full((k // group, n // 8), 0x77777777, dtype=torch.int64
                                                 ).to(torch.int32)
        tensors[prefix + ".scales"] = scales
        b = torch.randn(n).half() if bias else None
        if b is not None:
            tensors[prefix + ".bias"] = b
        weights[prefix] = ((codes - 8).float() * scales.float().repeat_interleave(group, 0).t(), b)
    save_file(tensors, os.path.join(path, "model.safetensors"))
    config = {"torch_dtype": "float16",
              "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": group,
                                      "desc_act": False, "sym": True,
                                      "checkpoint_format": "gptq"}}
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    return weights


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("path", nargs="?", help="checkpoint directory or .safetensors file")
    ap.add_argument("--config", help="config.json for a single .safetensors file")
    args = ap.parse_args()
    torch.manual_seed(0)
    weights = None
    path = args.path
    if path is None:
        path = tempfile.mkdtemp(prefix="mgen_example_")
        weights = write_gptq_checkpoint(path, {"model.layers.0.mlp.up_proj": (512, 256, True),
                                               "model.layers.0.mlp.down_proj": (256, 512, False)})
        print(f"wrote a GPTQ checkpoint to {path}")
    layers = load_linear_layers(path, config=args.config)
    worst = 0.0
    for prefix, layer in layers.items():
        x = torch.randn(2, 5, layer.in_features, device="cuda", dtype=layer.dtype)
        y = layer(x)  # [2, 5, out_features]
        print(f"{prefix}: {layer} -> output {list(y.shape)}")
        if weights is not None:  # against the weights written, in float32
            w, b = weights[prefix]
            ref = torch.nn.functional.linear(x.float().cpu(), w,
                                             None if b is None else b.float())
            err = ((y.float().cpu() - ref).abs().max() / ref.abs().max()).item()
            print(f"  max |y - ref| / max |ref| = {err:.2e}")
            worst = max(worst, err)
    if weights is not None and not worst < 1e-2:
        print(f"FAIL: relative error {worst:.2e}")
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
