"""loader.py -- load_linear_layers: a safetensors checkpoint's quantized linear layers as
marlin_gen.torch.Linear modules. checkpoint.py reads the headers and the config and checks
every layer's tensors (names, dtypes, shapes, act order) before anything is read into memory
or reaches a device; the `safetensors` package then reads each layer's tensors, and a from_*
constructor imports them on the GPU."""
from safetensors import safe_open

from marlin_gen import checkpoint as ck
from marlin_gen.errors import MgenError
from marlin_gen.layers import Linear, _TORCH, _layout


def load_linear_layers(path, config=None, dtype=None, device=None, activations=None):
    """{prefix: Linear} for every quantized linear layer of a checkpoint: `path` a directory
    (its *.safetensors files and config.json's quantization_config, or ModelOpt's
    hf_quant_config.json) or one .safetensors file with `config` (the model config or its
    quantization_config: a dict or a JSON file's path). Formats: GPTQ (quant_method "gptq",
    bits 4, no act order; sym true or false), AWQ ("awq", version "gemm"), compressed-tensors
    pack-quantized (int 4-bit, group or channel, symmetric or not), ModelOpt NVFP4 ("modelopt",
    quant_algo "NVFP4"), MXFP4 ("mxfp4", gpt-oss's `<prefix>_blocks` / `_scales`, whose stacked
    experts [E, ...] become layers `<prefix>.<e>`). dtype: the activation type (torch.float16
    or torch.bfloat16); None takes config.json's torch_dtype, else the scales'. activations:
    None (16-bit) or "e4m3" (W4A8 layers: Linear's `activations`; NVFP4 layers refuse it). Raises
    checkpoint.CheckpointError naming the layer and the reason for anything it does not load
    (nothing is loaded then), MgenError (with the layer's name) where the library refuses a
    layer's data (e.g. a NaN scale)."""
    _layout(activations, "load_linear_layers")  # before anything is read
    files, qcfg, model = ck.locate(path, config)
    tensors = ck.read_tensors(files)
    plans = ck.plan(qcfg, tensors)
    layers = {}
    handles = {}
    stacked = {}  # a stacked MXFP4 tensor, read once for all its experts (plans are in order)
    try:
        for p in plans:
            def get(role, p=p):
                name = p.names.get(role)
                if name is None:
                    return None
                if p.expert is not None and name in stacked:
                    return stacked[name][p.expert]
                info = tensors[name]
                if info.path not in handles:
                    handles[info.path] = safe_open(info.path, framework="pt", device="cpu")
                t = handles[info.path].get_tensor(name)
                if p.expert is None:
                    return t
                stacked[name] = t
                return t[p.expert]
            if p.expert in (None, 0):  # a new layer: the previous stack is done
                stacked.clear()
            act = _TORCH[ck.act_of(p, tensors, model)] if dtype is None else dtype
            try:
                layers[p.prefix] = _build(p, get, act, device, activations)
            except MgenError as e:  # the library's refusal (the failed call: __cause__)
                raise MgenError(e.status, e.message, f"layer {p.prefix!r}") from e
    finally:
        handles.clear()
        stacked.clear()
    return layers


def _build(p, get, dtype, device, activations):
    common = {"bias": get("bias"), "dtype": dtype, "device": device, "activations": activations}
    if p.kind == "gptq":
        return Linear.from_gptq(get("qweight"), get("qzeros"), get("scales"), get("g_idx"),
                                bits=4, group_size=p.group or -1, sym=p.wfmt == "u4b8",
                                checkpoint_format=_FORMAT[p.options["zeros"]], **common)
    if p.kind == "awq":
        return Linear.from_awq(get("qweight"), get("qzeros"), get("scales"),
                               group_size=p.group or -1, **common)
    if p.kind == "ct":
        return Linear.from_compressed_tensors(
            get("weight_packed"), get("weight_scale"), get("weight_zero_point"),
            weight_shape=(p.n, p.k), weight_g_idx=get("weight_g_idx"),
            strategy="group" if p.group else "channel", group_size=p.group or None,
            symmetric=p.wfmt == "u4b8", **common)
    if p.kind == "nvfp4":
        return Linear.from_modelopt_nvfp4(get("weight"), get("weight_scale"),
                                          p.options["global_scale"], **common)
    return Linear.from_mxfp4(get("blocks"), get("scales"), **common)


# GPTQ zeros convention (checkpoint.py) -> from_gptq's checkpoint_format
_FORMAT = {"auto": None, "minus_one": "gptq", "exact": "gptq_v2"}
