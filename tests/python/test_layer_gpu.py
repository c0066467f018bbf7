"""test_layer_gpu.py -- marlin_gen.torch on the GPU: small checkpoints in every format the loader
reads (layer_checkpoints.py writes them: GPTQ sym and asym, AWQ, compressed-tensors sym/asym
with group and channel scales, ModelOpt NVFP4, gpt-oss MXFP4 with stacked experts; odd-ish
shapes, groups 128 and 32, bias on and off, FP16 and BF16), loaded with load_linear_layers,
each layer's output at M = 1, 3, 17, 100 (2-D and 3-D inputs) against F.linear on the weights
unpacked from the saved tensors on the CPU in float64 (the bias added by the GEMM itself:
mgen_weights.d_bias); a layer with a bias under torch.compile and replayed from a CUDA graph
with new input; a bias given as a misaligned view (copied aligned once), before and after a
move to the CPU and back; a NaN scale refused naming its layer; W4A8 layers (activations
"e4m3": u4b8 g128 and per channel, u4 g128 and per channel, MXFP4) loaded from the same
checkpoints, each output against float64 of the layer's own FP8 rows (the library's
quantize_act, checked against torch's arithmetic in test_marlin_gen_gpu.py) times the same
weights, forward_a8 on those rows bit for bit the forward's, a W4A8 layer replayed from a CUDA
graph, and the formats and groups without W4A8 kernels refused at load (on GPUs without the
wgmma family every W4A8 load is refused, and only that is checked); and
examples/python_checkpoint.py run (it checks its own layers). Exits 77 (skipped) only without
PyTorch, safetensors or a GPU.
Run: MGEN_LIBRARY=build/runtime/libmgen.so python3 tests/python/test_layer_gpu.py ROOT"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_env  # noqa: E402

torch = gpu_env.require("safetensors")
import torch.nn.functional as F  # noqa: E402

import layer_checkpoints as lc  # noqa: E402
import marlin_gen  # noqa: E402
from marlin_gen.torch import Linear, load_linear_layers  # noqa: E402

# The bounds of test_marlin_gen_gpu.py (tests/gpu/gemm_formats.c derives them; u the act's unit
# roundoff, abs = sum_k |x_k w_k|): c = x W^T within 2u|c| + (2u + K 2^-22) abs for int4
# weights, 2u|c| + K 2^-22 abs + tiny for fe2m1; with a bias, |y - ref| <= (1 + u) B + u |ref|
# (the bound of c rounded and then c + b rounded; the GEMM adds b in FP32 before its one
# rounding, which the bound covers). And the RMS ratio over at least RMS_MIN_ELEMS outputs
# within RMS_LIMIT, its scale u sqrt(c^2 + sum (x w)^2 + ref^2) + tiny.
U = {torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}
TINY = {torch.float16: 2.0**-24, torch.bfloat16: 2.0**-132}
RMS_LIMIT, RMS_MIN_ELEMS = 0.6, 128
MS = (1, 3, 17, 100)
torch.manual_seed(0)
failures = []
checked = 0


def check(name, got, x, w64, b64, fp4):
    """got (the layer's output for x) against F.linear(x, W, b) in float64 on the CPU."""
    global checked
    dt = x.dtype
    x64 = x.reshape(-1, x.shape[-1]).cpu().double()
    got64 = got.reshape(-1, got.shape[-1]).cpu().double()
    c = F.linear(x64, w64)
    ref = c if b64 is None else F.linear(x64, w64, b64.to(dt).double())
    absum = F.linear(x64.abs(), w64.abs())
    sq = F.linear(x64 * x64, w64 * w64)
    u, k = U[dt], x.shape[-1]
    tiny = TINY[dt] if fp4 else 0.0
    bound = 2 * u * c.abs() + (k * 2.0**-22 if fp4 else 2 * u + k * 2.0**-22) * absum + tiny
    if b64 is not None:
        bound = (1 + u) * bound + u * ref.abs()
    err = (got64 - ref).abs()
    problems = []
    if got.shape != x.shape[:-1] + (w64.shape[0],):
        problems.append(f"output shape {list(got.shape)}")
    if not bool(torch.isfinite(got64).all()):
        problems.append("NaN/inf")
    ratio = (err / bound).max().item()
    if not ratio <= 1.0:
        problems.append(f"max |error|/bound {ratio:.3g}")
    rms = None
    if got64.numel() >= RMS_MIN_ELEMS:
        scale = u * (c * c + sq + ref * ref).sqrt() + tiny
        rms = ((err * err).sum() / (scale * scale).sum()).sqrt().item()
        if not rms <= RMS_LIMIT:
            problems.append(f"RMS ratio {rms:.3g} (limit {RMS_LIMIT})")
    checked += 1
    print(f"{name}: x {list(x.shape)} {str(dt)[6:]}: max |error|/bound {ratio:.3g}"
          f"{f', RMS ratio {rms:.3g}' if rms is not None else ''}")
    if problems:
        failures.append(f"{name} x {list(x.shape)}: {'; '.join(problems)}")


def replayed(layer, x):
    """(y, x2): the layer captured in a CUDA graph on a copy of x, replayed with new input x2
    (the replay must read it) into y, zeroed first."""
    static_x = x.clone()
    layer(static_x)  # this stream's first call: its workspace
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = layer(static_x)
    x2 = torch.randn_like(x)
    static_x.copy_(x2)
    static_y.zero_()
    graph.replay()
    torch.cuda.synchronize()
    return static_y, x2


def gptq_config(sym, group):
    return {"quant_method": "gptq", "bits": 4, "group_size": group, "desc_act": False,
            "sym": sym, "checkpoint_format": "gptq"}


def ct_config(sym, strategy, group):
    weights = {"num_bits": 4, "type": "int", "symmetric": sym, "strategy": strategy,
               "group_size": group if strategy == "group" else None, "actorder": None,
               "dynamic": False}
    return {"quant_method": "compressed-tensors", "format": "pack-quantized",
            "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights,
                                          "input_activations": None}}, "ignore": ["lm_head"]}


L = "model.layers.0."
EMBED = {"model.embed_tokens.weight": torch.randn(64, 256).half()}  # not quantized: skipped
# (name, tensors, quantization_config, torch_dtype): n in {256, 384}, k in {256, 512}
CASES = (
    ("gptq-sym", {**lc.gptq(L + "q_proj", 256, 512, 128, "f16", True, True),
                  **lc.gptq(L + "o_proj", 384, 256, 128, "f16", True, False)},
     gptq_config(True, 128), "float16"),
    ("gptq-channel", lc.gptq(L + "o_proj", 384, 256, -1, "bf16", True, True),
     gptq_config(True, -1), "bfloat16"),
    ("gptq-asym", {**lc.gptq(L + "q_proj", 384, 256, 32, "bf16", False, False),
                   **lc.gptq(L + "k_proj", 256, 512, 32, "bf16", False, True)},
     gptq_config(False, 32), "bfloat16"),
    ("awq", {**lc.awq(L + "mlp.up_proj", 384, 512, 128, "f16", True),
             **lc.awq(L + "mlp.down_proj", 256, 256, 128, "f16", False)},
     {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True,
      "version": "gemm"}, "float16"),
    ("ct-sym-group", {**lc.ct(L + "q_proj", 256, 512, 128, "bf16", True, False),
                      **lc.ct(L + "v_proj", 384, 256, 128, "bf16", True, True)},
     ct_config(True, "group", 128), "bfloat16"),
    ("ct-asym-group32", {**lc.ct(L + "q_proj", 384, 512, 32, "f16", False, True)},
     ct_config(False, "group", 32), "float16"),
    ("ct-asym-channel", {**lc.ct(L + "q_proj", 256, 256, 0, "bf16", False, True),
                         **lc.ct(L + "o_proj", 384, 512, 0, "bf16", False, False)},
     ct_config(False, "channel", None), "bfloat16"),
    ("nvfp4", {**lc.nvfp4(L + "q_proj", 256, 512, "f16", True),
               **lc.nvfp4(L + "o_proj", 384, 256, "f16", False)},
     {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16,
      "exclude_modules": ["lm_head"]}, "float16"),
    ("mxfp4", {**lc.mxfp4(L + "mlp.experts.gate_up_proj", 384, 256, "bf16", 2, True),
               **lc.mxfp4("model.proj", 256, 512, "bf16", None, False)},
     {"quant_method": "mxfp4", "modules_to_not_convert": ["lm_head"]}, "bfloat16"),
)

tmp = tempfile.mkdtemp(prefix="mgen_layer_")
dev = torch.device("cuda")
layers_seen = 0
for name, tensors, qcfg, torch_dtype in CASES:
    path = os.path.join(tmp, name)
    config = {"torch_dtype": torch_dtype, "quantization_config": qcfg}
    lc.write(path, {**tensors, **EMBED}, config)
    want = lc.dequantize(path, config)
    layers = load_linear_layers(path)
    if sorted(layers) != sorted(want):
        failures.append(f"{name}: layers {sorted(layers)}, expected {sorted(want)}")
        continue
    dt = {"float16": torch.float16, "bfloat16": torch.bfloat16}[torch_dtype]
    for prefix, layer in layers.items():
        w64, b64 = want[prefix]
        layers_seen += 1
        if layer.dtype != dt or (layer.bias is None) != (b64 is None):
            failures.append(f"{name} {prefix}: dtype {layer.dtype}, bias {layer.bias is not None}")
        for m in MS:
            shape = (4, 25) if m == 100 else (m,)  # [..., k] inputs are flattened
            x = torch.randn(*shape, w64.shape[1], device=dev).to(dt)
            check(f"{name} {prefix}", layer(x), x, w64, b64, name in ("nvfp4", "mxfp4"))

# W4A8 (activations "e4m3"): the checkpoints above loaded into the e4m3 layout. The reference
# is float64 of the FP8 rows and row scales the layer itself makes (torch_ops.quantize_act runs
# the same mgen_quantize_act) times the checkpoint's weights: the products are exact, and the
# bound is test_marlin_gen_gpu.py's for Context.gemm_a8: 2u |c| + 2^-9 sum |a w| (Hopper's FP8
# MMA keeps its sums to ~13 bits per 128-deep stage: tests/gpu/test_w4a8_gpu.c), with the bias
# as check()'s.
A8_CASES = ("gptq-sym", "gptq-channel", "awq", "ct-asym-channel", "mxfp4")
A8_REFUSED = ("gptq-asym", "ct-asym-group32", "nvfp4")  # u4 g32, u4 g32, NVFP4: no W4A8 form


def a8_ratio(got, a64, w64, b64, dt, tiny):
    """max |got - ref| / bound for a W4A8 output `got` of the float64 activations a64 [m, k]."""
    c = F.linear(a64, w64)
    ref = c if b64 is None else c + b64.to(dt).double()
    u = U[dt]
    bound = 2 * u * c.abs() + 2.0**-9 * F.linear(a64.abs(), w64.abs()) + tiny
    if b64 is not None:
        bound = (1 + u) * bound + u * ref.abs()
    got64 = got.reshape(-1, got.shape[-1]).cpu().double()
    return ((got64 - ref).abs() / bound).max().item()


def check_a8(name, got, x, w64, b64):
    global checked
    dt = x.dtype
    q8, sc = marlin_gen.torch_ops.quantize_act(x.reshape(-1, x.shape[-1]))
    a64 = q8.double().cpu() * sc.double().cpu()[:, None]
    ratio = a8_ratio(got, a64, w64, b64, dt, TINY[dt])
    checked += 1
    print(f"W4A8 {name}: x {list(x.shape)} {str(dt)[6:]}: max |error|/bound {ratio:.3g}")
    if got.shape != x.shape[:-1] + (w64.shape[0],) or not ratio <= 1.0:  # NaN too
        failures.append(f"W4A8 {name} x {list(x.shape)}: shape {list(got.shape)}, max "
                        f"|error|/bound {ratio:.3g}")
    return q8, sc


a8_layers = 0
if torch.cuda.get_device_capability(dev)[0] == 9:  # the wgmma family's kernels (sm_90a)
    for name, tensors, qcfg, torch_dtype in CASES:
        if name not in A8_CASES + A8_REFUSED:
            continue
        path = os.path.join(tmp, name)
        if name in A8_REFUSED:
            try:
                load_linear_layers(path, activations="e4m3")
                failures.append(f"W4A8 {name}: loaded, but the library has no W4A8 kernel for it")
            except marlin_gen.MgenError as e:
                print(f"W4A8 {name}: refused as expected: {e}")
            continue
        want = lc.dequantize(path, {"torch_dtype": torch_dtype, "quantization_config": qcfg})
        dt = {"float16": torch.float16, "bfloat16": torch.bfloat16}[torch_dtype]
        for prefix, layer in load_linear_layers(path, activations="e4m3").items():
            w64, b64 = want[prefix]
            a8_layers += 1
            if layer.activations != "e4m3" or "activations=e4m3" not in repr(layer):
                failures.append(f"W4A8 {name} {prefix}: activations {layer.activations!r}")
            for m in MS:
                shape = (4, 25) if m == 100 else (m,)
                x = torch.randn(*shape, w64.shape[1], device=dev).to(dt)
                y = layer(x)
                q8, sc = check_a8(f"{name} {prefix}", y, x, w64, b64)
                # forward_a8 on the same FP8 rows (float8 and uint8 codes; [..., k] and [m, k]):
                # the forward's output bit for bit
                y8 = layer.forward_a8(q8.reshape(*shape, -1), sc)
                y8u = layer.forward_a8(q8.view(torch.uint8), sc)
                checked += 1
                if not torch.equal(y8, y) or not torch.equal(y8u.reshape(y.shape), y):
                    failures.append(f"W4A8 {name} {prefix} M={m}: forward_a8 is not forward's "
                                    "output on the same FP8 rows")
    # One scale for the whole tensor: the rows' largest, applied to every row; a W4A8 layer
    # replayed from a CUDA graph with new input; a 16-bit layer refuses forward_a8.
    path = os.path.join(tmp, "gptq-sym")
    want = lc.dequantize(path, {"quantization_config": gptq_config(True, 128)})[L + "q_proj"]
    layer = load_linear_layers(path, activations="e4m3")[L + "q_proj"]
    x = torch.randn(17, 512, device=dev).half()
    q8, sc = marlin_gen.torch_ops.quantize_act(x)
    one = sc.max().reshape(1)
    codes = (q8.float() * sc[:, None] / one).to(torch.float8_e4m3fn)
    got = layer.forward_a8(codes, one)
    a64 = codes.double().cpu() * one.double().cpu()
    ratio = a8_ratio(got, a64, *want, torch.float16, 0.0)
    checked += 1
    print(f"W4A8 forward_a8 with one scale for the tensor: max |error|/bound {ratio:.3g}")
    if not ratio <= 1.0:
        failures.append(f"W4A8 forward_a8, one scale: max |error|/bound {ratio:.3g}")
    check_a8("CUDA graph replay", *replayed(layer, x), *want)
    try:
        load_linear_layers(path)[L + "q_proj"].forward_a8(q8, sc)
        failures.append("a 16-bit layer ran forward_a8")
    except marlin_gen.ArgumentError as e:
        print(f"refused as expected: {e}")
    if a8_layers < 8:
        failures.append(f"only {a8_layers} W4A8 layers checked")
else:
    try:
        load_linear_layers(os.path.join(tmp, "gptq-sym"), activations="e4m3")
        failures.append("W4A8 loaded on a GPU without the wgmma family")
    except marlin_gen.MgenError as e:
        print(f"W4A8 refused as expected (no wgmma family here): {e}")
try:
    load_linear_layers(os.path.join(tmp, "gptq-sym"), activations="fp8")
    failures.append("activations=\"fp8\" was accepted")
except marlin_gen.ArgumentError as e:
    print(f"refused as expected: {e}")

# The weights are described once, at construction: a forward (eager, 2-D and 3-D) describes
# nothing (neither the weights through the library nor arrays through the bindings).
described = []
saved = (marlin_gen.Context.describe_weights, marlin_gen.api.describe)
marlin_gen.Context.describe_weights = \
    lambda *a, **kw: described.append("weights") or saved[0](*a, **kw)
marlin_gen.api.describe = lambda *a, **kw: described.append("array") or saved[1](*a, **kw)
try:
    for shape in ((1, 512), (3, 7, 512)):
        layers_any = load_linear_layers(os.path.join(tmp, "gptq-sym"))
        described.clear()
        layers_any[L + "q_proj"](torch.randn(*shape, device=dev).half())
        if described:
            failures.append(f"a forward described {described} (x {list(shape)})")
finally:
    marlin_gen.Context.describe_weights, marlin_gen.api.describe = saved
print(f"forward describes nothing: {'no' if described else 'yes'}")

# One layer with a bias under torch.compile and replayed from a CUDA graph (new input: the
# replay reads it).
path = os.path.join(tmp, "gptq-sym")
layer = load_linear_layers(path)[L + "q_proj"]
w64, b64 = lc.dequantize(path, {"quantization_config": gptq_config(True, 128)})[L + "q_proj"]
if b64 is None:
    failures.append("gptq-sym q_proj has no bias: the bias cases below test nothing")
x = torch.randn(17, 512, device=dev).half()
try:
    compiled = torch.compile(layer, fullgraph=True)
    check("torch.compile", compiled(x), x, w64, b64, False)
except Exception as e:  # noqa: BLE001  (any failure of the compiled path is the finding)
    failures.append(f"torch.compile: {type(e).__name__}: {e}")
check("CUDA graph replay", *replayed(layer, x), w64, b64, False)

# The bias reaches the GEMM through the layer's description (one launch, no add after it): a
# bias handed over as a view 2 bytes into a bigger tensor (the kernels read it 16 bytes at a
# time) is copied aligned once; the description points at the layer's bias before and after a
# move (_apply re-caches the pointers).
t = lc.load_file(os.path.join(path, "model.safetensors"))
big = torch.zeros(w64.shape[0] + 8, dtype=torch.float16, device=dev)
view = big[1:w64.shape[0] + 1]
view.copy_(t[L + "q_proj.bias"])
layer = Linear.from_gptq(*(t[L + "q_proj." + r] for r in ("qweight", "qzeros", "scales")),
                         bias=view, checkpoint_format="gptq", device=dev)
for when in ("built", "moved"):
    if when == "moved":  # to the CPU and back: new buffers, new pointers
        layer = layer.cpu().to(dev)
    ptr = layer.bias.data_ptr()
    if ptr % 16 or layer._desc.d_bias != ptr:
        failures.append(f"misaligned bias, layer {when}: bias at {ptr:#x}, description's "
                        f"{layer._desc.d_bias}")
    x = torch.randn(17, 512, device=dev).half()
    check(f"bias from a misaligned view, layer {when}", layer(x), x, w64, b64, False)
if view.data_ptr() % 16 == 0:
    failures.append("the misaligned view is aligned: the case above tests no copy")

# Refusals: the library's (a NaN scale) named with the layer; a wrong input.
bad = lc.gptq(L + "q_proj", 256, 512, 128, "f16", True, False)
bad[L + "q_proj.scales"][1, 5] = float("nan")
lc.write(os.path.join(tmp, "nan"), bad, {"quantization_config": gptq_config(True, 128)})
try:
    load_linear_layers(os.path.join(tmp, "nan"))
    failures.append("a NaN scale was accepted")
except marlin_gen.MgenError as e:
    print(f"refused as expected: {e}")
    if L + "q_proj" not in str(e) or e.status != -1:
        failures.append(f"NaN scale: status {e.status} or message without the layer: {e}")
try:
    layer(torch.randn(3, 512, device=dev))  # float32
    failures.append("a float32 input was accepted")
except marlin_gen.ArgumentError as e:
    print(f"refused as expected: {e}")
try:  # the constructors check shapes before any device call
    Linear.from_gptq(torch.zeros(64, 256, dtype=torch.int32), None,
                     torch.zeros(3, 256, dtype=torch.half))
    failures.append("from_gptq accepted scales [3, 256] for k=512, group 128")
except marlin_gen.ArgumentError as e:
    print(f"refused as expected: {e}")

# Negative controls: outputs with defects a loader could have (a GPTQ v1 zero read as stored,
# shifting every weight by one scale; the bias left out); check() must fail each.
layer_w = w64.clone()
scales64 = lc.load_file(os.path.join(path, "model.safetensors"))[L + "q_proj.scales"].double()
shifted = layer_w + scales64.t().repeat_interleave(128, 1)  # (q - 7) s instead of (q - 8) s
x = torch.randn(17, 512, device=dev).half()
controls = (("zero point off by one", F.linear(x.cpu().double(), shifted, b64.double()).half()),
            ("bias left out", F.linear(x.cpu().double(), w64).half()))
for what, got in controls:
    before = len(failures)
    check(f"negative control '{what}'", got, x, w64, b64, False)
    if len(failures) == before:
        failures.append(f"negative control '{what}' passed the check: it cannot see it")
    else:
        print(f"  failed, as it must: {failures.pop()}")
        checked -= 1

# examples/python_checkpoint.py writes, loads and checks its own checkpoint.
example = os.path.join(sys.argv[1], "examples", "python_checkpoint.py")
run = subprocess.run([sys.executable, example], capture_output=True, text=True, timeout=300)
print(f"examples/python_checkpoint.py: exit {run.returncode}\n{run.stdout}{run.stderr}")
if run.returncode != 0 or "OK" not in run.stdout.split():
    failures.append(f"examples/python_checkpoint.py: exit {run.returncode}")

if layers_seen < 17 or checked < 4 * layers_seen + 4 + 8 * a8_layers:
    failures.append(f"only {layers_seen} layers, {checked} outputs checked")
print("FAIL: " + "; ".join(failures) if failures else
      f"PASS ({layers_seen} layers, {checked} outputs checked)")
sys.exit(1 if failures else 0)
