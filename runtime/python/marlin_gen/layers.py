"""layers.py -- marlin_gen.torch.Linear: an nn.Module holding one layer's packed 4-bit weights,
prepared once at construction from a checkpoint's tensors (from_gptq, from_awq,
from_compressed_tensors, from_modelopt_nvfp4, from_mxfp4) or quantized from a dense weight
(quantize), y = x @ W^T (+ bias). With activations="e4m3" a layer is W4A8: its weights are
packed in the e4m3 layout (u4b8, u4 and MXFP4 on GPUs with those kernels: mgen.h,
mgen_gemm_a8), a forward quantizes x to FP8 E4M3 with a scale per row (mgen_quantize_act) and
multiplies those (mgen_gemm_a8), and forward_a8 takes FP8 activations an engine quantized
itself.

Per eager call the host does only what changes between calls: two data pointers, the current
stream, the output's allocation and one C call (mgen_gemm) whose weight description
(mgen_weights, a ctypes structure), function pointer and context are cached on the layer. The
bias is in that description (d_bias): the GEMM adds it in FP32 before rounding its output, so a
call is one kernel launch. Under torch.compile the same call runs inside the op
marlin_gen::linear (_op.py), which dynamo cannot look into (it cannot trace a ctypes call) and
traces through its fake implementation; the op finds the layer by a handle, so it re-describes
nothing either (torch_ops.gemm, the generic op, takes the packed buffers and describes them
per call, with no bias). Eager calls skip the op: its dispatch
would cost more host time than the call itself. A CUDA graph records the kernel launch only, so
a replay costs no host time per layer (a W4A8 layer's two launches, the quantization and the
GEMM, are both captured)."""
import ctypes
import itertools
import weakref

import torch

from marlin_gen import _lib, _op, torch_ops
from marlin_gen import checkpoint as ck
from marlin_gen.api import a8_per_row
from marlin_gen.errors import ArgumentError
from marlin_gen.torch_ops import _raw_stream

_ACT = {torch.float16: "f16", torch.bfloat16: "bf16"}
_TORCH = {"f16": torch.float16, "bf16": torch.bfloat16}
# torch dtype -> safetensors dtype name (checkpoint.py's checks speak those)
_NAME = {torch.int32: "I32", torch.int64: "I64", torch.uint8: "U8", torch.float16: "F16",
         torch.bfloat16: "BF16", torch.float32: "F32"}
for _attr, _n in (("float8_e4m3fn", "F8_E4M3"), ("float8_e8m0fnu", "F8_E8M0")):
    if hasattr(torch, _attr):
        _NAME[getattr(torch, _attr)] = _n

# forward_a8's activation types: FP8 E4M3 (where this torch has it) or its codes as bytes
_A8 = tuple(t for t in (getattr(torch, "float8_e4m3fn", None), torch.uint8) if t is not None)

# Whether dynamo is tracing (the cheap check; is_compiling where the build lacks it).
_compiling = getattr(torch.compiler, "is_dynamo_compiling", torch.compiler.is_compiling)


def _info(t):
    """(dtype name, shape) of a tensor for checkpoint.py's checks; None stays None."""
    if t is None:
        return None
    if not isinstance(t, torch.Tensor):
        raise ArgumentError(f"{type(t).__name__} is not a torch.Tensor")
    return (_NAME.get(t.dtype, str(t.dtype)), tuple(t.shape))


def _checked(what, check, tensors, *args):
    try:
        return check({r: _info(t) for r, t in tensors.items()}, *args)
    except ck.CheckpointError as e:
        raise ArgumentError(f"{what}: {e}") from None


def _device(device, tensors):
    """The CUDA device the layer goes to: `device`, else the first CUDA tensor's, else the
    current one."""
    if device is not None:
        dev = torch.device(device)
    else:
        dev = next((t.device for t in tensors if t is not None and t.is_cuda),
                   torch.device("cuda", torch.cuda.current_device()))
    if dev.type != "cuda":
        raise ArgumentError(f"device {dev}: the layer runs on a CUDA device")
    return torch.device("cuda", dev.index if dev.index is not None else
                        torch.cuda.current_device())


def _act(dtype, *candidates):
    """The activation type: `dtype`, else the first 16-bit float among the candidates, else
    FP16."""
    if dtype is not None:
        if dtype not in _ACT:
            raise ArgumentError(f"dtype {dtype}: the layer runs in torch.float16 or "
                                "torch.bfloat16")
        return _ACT[dtype]
    for t in candidates:
        if t is not None and t.dtype in _ACT:
            return _ACT[t.dtype]
    return "f16"


def _layout(activations, what):
    """The weights' layout for `activations`: None (the layer's 16-bit type, W4A16: the
    format's own layout) or "e4m3" (W4A8: FP8 activations, the e4m3 layout)."""
    if activations is not None and activations != "e4m3":
        raise ArgumentError(f"{what}: activations={activations!r}: None (16-bit activations, "
                            "the layer's dtype) or \"e4m3\" (FP8 E4M3 with a scale per row: "
                            "W4A8)")
    return activations


def _scales_as_int(lib, name):
    """The library function `name` with its float * arguments declared as void * (an int
    address per call, as the other pointers; ctypes would need a cast object per call), as a
    function object of its own (lib[name]: the bindings' declared one is left as it is)."""
    fn = lib[name]
    fn.argtypes = [ctypes.c_void_p if t is ctypes.POINTER(ctypes.c_float) else t
                   for t in _lib.SIGNATURES[name]]
    fn.restype = ctypes.c_int
    return fn


def _aligned(bias):
    """The bias as the GEMM reads it through mgen_weights.d_bias: contiguous and 16-byte aligned
    (the kernels load it 16 bytes at a time). torch's allocator aligns what it allocates, so
    only a view into a bigger tensor is copied, once, when the module takes it (never per call)."""
    if bias is None or (bias.is_contiguous() and not bias.data_ptr() & 15):
        return bias
    return bias.clone(memory_format=torch.contiguous_format)


def _moved(module, whose, remedy):
    """After a module holding packed weights (q, scales, bias, dtype, _ctx) moved or was cast:
    a bias cast away from the packed activation type is refused, the bias is made aligned again
    (_aligned: `fn` may have returned a view), and the context is the one of q's device
    (torch_ops keeps one per device). The caller then re-caches its pointers."""
    if module.bias is not None and module.bias.dtype != module.dtype:
        raise ArgumentError(f"{whose} weights are packed for {module.dtype}; make {remedy} for "
                            "another dtype")
    module.bias = _aligned(module.bias)
    if module.q.is_cuda:
        module._ctx = torch_ops.context(module.q.device)


# marlin_gen::linear's layers by handle (weak: a layer's life is its owner's)
_layers = weakref.WeakValueDictionary()
_handles = itertools.count()


def _linear(x, handle, n):
    """y = layer(x) for the layer `handle` (2-D x); n its out_features, for the fake."""
    return _layers[handle].forward(x)


def _linear_fake(x, handle, n):
    return x.new_empty((x.shape[0], n))


_linear_op = _op.define("linear", "(Tensor x, int handle, int n) -> Tensor", _linear, _linear_fake)


class Linear(torch.nn.Module):
    """y = x @ W^T + bias for x of shape [..., in_features] and dtype `dtype` on the layer's
    device; W is packed 4-bit weights (u4b8, u4 or fe2m1; see mgen.h). Build it with a from_*
    constructor; its buffers `q` and `scales` are the packed bytes (not saved in a state dict:
    they are for this library version and activation type; keep the checkpoint instead), and
    `bias` (or None) the [out_features] of `dtype` the GEMM adds (mgen_weights.d_bias): change
    its values in place (copy_); a new tensor assigned to it is not what the GEMM reads.
    `activations` is None (W4A16: x in `dtype`) or "e4m3" (W4A8: x in `dtype` is quantized to
    FP8 per row by each forward; forward_a8 takes FP8 rows and their scales)."""

    def __init__(self, ctx, desc, q, scales, bias, act, wfmt, scheme, layout=None):
        super().__init__()
        self.activations = layout
        self.in_features, self.out_features = desc.k, desc.n
        self.wfmt, self.scheme, self.group = wfmt, scheme, desc.group
        self.dtype = _TORCH[act]
        self.register_buffer("q", q, persistent=False)
        self.register_buffer("scales", scales, persistent=False)
        if bias is not None:
            bias = _aligned(bias.detach().to(device=q.device, dtype=self.dtype))
        self.register_buffer("bias", bias, persistent=False)
        self._ctx, self._desc, self._act = ctx, desc, _lib.ACT[act]
        self._handle = next(_handles)
        _layers[self._handle] = self
        self._cache()

    def _cache(self):
        """Everything a call reads that does not change between calls."""
        self._desc.d_q, self._desc.d_scales = self.q.data_ptr(), self.scales.data_ptr()
        self._desc.d_bias = None if self.bias is None else self.bias.data_ptr()
        self._bias = self.bias  # what d_bias points into: alive while the description is
        self._desc_ref = ctypes.byref(self._desc)
        # a layer moved off the GPU matches no input's get_device() (CPU tensors give -1), so
        # no host pointer ever reaches a kernel
        self._dev = self.q.device.index if self.q.is_cuda else None
        self._ctx_ptr = self._ctx.ptr.value  # an int: ctypes converts it to void * per call
        lib = self._ctx.lib
        if self.activations is None:
            self._gemm = lib.mgen_gemm  # argtypes declared once by _lib.load
        else:
            self._gemm = _scales_as_int(lib, "mgen_gemm_a8")
            self._quantize_act = _scales_as_int(lib, "mgen_quantize_act")

    def _apply(self, fn, *args, **kwargs):
        # .to(device) / .cuda() move the buffers: the cached pointers (the bias's too) follow
        # them; the packed bytes are for one activation type, so a cast of the bias is refused.
        super()._apply(fn, *args, **kwargs)
        _moved(self, "the layer's", "a new layer (from_*)")
        self._cache()
        return self

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"wfmt={self.wfmt}, group={self.group}, dtype={self.dtype}, "
                f"bias={self.bias is not None}"
                f"{'' if self.activations is None else ', activations=' + self.activations}")

    def forward(self, x, out=None):
        """y = x @ W^T + bias; `out` (optional): a contiguous [m, out_features] tensor of the
        layer's dtype and device to write y into (m = x's rows), saving the allocation. A W4A8
        layer first quantizes x to FP8 rows and their scales (two launches a call)."""
        if _compiling():
            return self._forward_op(x)
        shape, k = x.shape, self.in_features
        if x.dtype is not self.dtype or x.get_device() != self._dev or not shape or \
                shape[-1] != k:
            raise ArgumentError(f"input {x.dtype} {list(shape)} on {x.device}: the layer "
                                f"takes {self.dtype} [..., {k}] on {self.q.device}")
        if len(shape) == 2:
            a, m = x, shape[0]
        else:
            a = x.reshape(-1, k)
            m = a.shape[0]
        ptr = a.data_ptr()
        if ptr & 15 or not a.is_contiguous():  # the kernels read 16-byte aligned rows
            a = a.clone(memory_format=torch.contiguous_format)
            ptr = a.data_ptr()
        c = a.new_empty((m, self.out_features)) if out is None else self._checked(out, m)
        if m:
            stream = _raw_stream(self._dev)
            if self.activations is None:
                status, call = self._gemm(self._ctx_ptr, self._act, m, ptr, self._desc_ref,
                                          c.data_ptr(), stream), "mgen_gemm"
            else:  # FP8 rows and their scales, then the W4A8 GEMM on them
                # one allocation for both (an allocation costs about a microsecond of host
                # time a call): the rows, then the scales at the next 16-byte boundary
                rows = (m * k + 15) & ~15
                buf = torch.empty(rows + 4 * m, dtype=torch.uint8, device=a.device)
                a8 = buf.data_ptr()  # buf lives to the end of the call, as the launches need
                status, call = self._quantize_act(self._ctx_ptr, self._act, m, k, ptr, a8,
                                                  a8 + rows, stream), "mgen_quantize_act"
                if not status:
                    status, call = self._gemm(self._ctx_ptr, self._act, m, a8, a8 + rows, 1,
                                              self._desc_ref, c.data_ptr(),
                                              stream), "mgen_gemm_a8"
            if status:
                self._ctx._check(status, call)
        return c if len(shape) == 2 else c.view(*shape[:-1], self.out_features)

    def forward_a8(self, a8, a_scales, out=None):
        """W4A8 layers (activations "e4m3"): y = (a_scales * a8) @ W^T + bias for activations an
        engine already holds in FP8: a8 [..., in_features] torch.float8_e4m3fn (or its uint8
        codes) on the layer's device, a_scales float32 with a scale per row of a8 (numel = the
        rows) or one for the tensor (numel 1); `out` as forward's. y has the layer's dtype.
        Eager and under CUDA graphs (torch.compile: forward)."""
        if self.activations is None:
            raise ArgumentError("forward_a8: this layer's activations are 16-bit (a W4A8 layer "
                                "is made with activations=\"e4m3\")")
        shape, k = a8.shape, self.in_features
        if a8.dtype not in _A8 or a8.get_device() != self._dev or not shape or shape[-1] != k:
            raise ArgumentError(f"a8 {a8.dtype} {list(shape)} on {a8.device}: the layer takes "
                                f"float8_e4m3fn (or uint8) [..., {k}] on {self.q.device}")
        a = a8.reshape(-1, k)
        m = a.shape[0]
        if a.data_ptr() & 15 or not a.is_contiguous():  # the kernels read 16-byte aligned rows
            a = a.clone(memory_format=torch.contiguous_format)
        if (not isinstance(a_scales, torch.Tensor) or a_scales.dtype != torch.float32
                or a_scales.get_device() != self._dev or a_scales.numel() not in (m, 1)):
            raise ArgumentError(f"a_scales {_info(a_scales)}: expected float32 with {m} "
                                f"elements (a scale per row) or 1 (per tensor) on "
                                f"{self.q.device}")
        sc = a_scales.reshape(-1).contiguous()
        c = (torch.empty((m, self.out_features), dtype=self.dtype, device=a.device) if out is None
             else self._checked(out, m))
        if m:
            status = self._gemm(self._ctx_ptr, self._act, m, a.data_ptr(), sc.data_ptr(),
                                a8_per_row(m, sc.shape), self._desc_ref, c.data_ptr(),
                                _raw_stream(self._dev))
            if status:
                self._ctx._check(status, "mgen_gemm_a8")
        return c if len(shape) == 2 else c.view(*shape[:-1], self.out_features)

    def _checked(self, out, m):
        """`out` if it can take the [m, out_features] output."""
        if (out.dtype is not self.dtype or out.get_device() != self._dev
                or out.shape != (m, self.out_features) or not out.is_contiguous()
                or out.data_ptr() & 15):
            raise ArgumentError(f"out {out.dtype} {list(out.shape)}: expected a contiguous, "
                                f"16-byte aligned {self.dtype} [{m}, {self.out_features}] "
                                f"on {self.q.device}")
        return out

    def _forward_op(self, x):
        y = _linear_op(x.reshape(-1, self.in_features), self._handle, self.out_features)
        return y.view(*x.shape[:-1], self.out_features)

    # ------------------------------------------------------------ construction
    @classmethod
    def _prepare(cls, n, k, act, wfmt, group, device, bias, load, layout=None):
        """Allocates the packed buffers on `device` in `layout` (None: the format's; "e4m3":
        W4A8, refused here unless a kernel of the library runs it on that device), runs
        `load(ctx, desc, q, s, stream)` (one import call) there, and makes the layer."""
        if bias is not None:
            if not isinstance(bias, torch.Tensor) or tuple(bias.shape) != (n,) or \
                    not bias.is_floating_point():
                raise ArgumentError(f"bias: {_info(bias)}; expected a float tensor of shape "
                                    f"[{n}]")
        with torch.cuda.device(device):
            ctx = torch_ops.context(device)
            desc, qb, sb = ctx.describe_weights(n, k, act=act, wfmt=wfmt, group=group,
                                                layout=layout)
            if layout is not None:  # before the import: no kernel, no layer
                ctx.gemm_choice(act, 1, desc)
            q = torch.empty(qb, dtype=torch.uint8, device=device)
            s = torch.empty(sb, dtype=torch.uint8, device=device)
            load(ctx, desc, q, s, _raw_stream(device.index))
        scheme = next(name for name, value in _lib.SCHEME.items() if value == desc.scheme)
        return cls(ctx, desc, q, s, bias, act, wfmt, scheme, layout)

    @classmethod
    def from_gptq(cls, qweight, qzeros, scales, g_idx=None, bias=None, bits=4, group_size=128,
                  sym=True, checkpoint_format=None, dtype=None, device=None, activations=None):
        """A GPTQ layer (AutoGPTQ / GPTQModel / optimum, desc_act false): qweight int32
        [k/8, n], qzeros int32 [k/g, n/8] (optional when sym), scales [k/g, n] (group_size -1:
        one row), g_idx int32 [k] (only the identity order). checkpoint_format "gptq" (zeros
        stored minus one), "gptq_v2", or None (sym: either, checked; asym: "gptq").
        activations: None (16-bit) or "e4m3" (W4A8), as for every from_* constructor."""
        layout = _layout(activations, "from_gptq")
        group = 0 if group_size == -1 else group_size
        t = {"qweight": qweight, "qzeros": qzeros, "scales": scales, "g_idx": g_idx,
             "bias": bias}
        n, k = _checked("from_gptq", ck.check_gptq, t, bits, group, sym)
        try:
            zeros = ck.gptq_zeros(sym, checkpoint_format)
        except ck.CheckpointError as e:
            raise ArgumentError(f"from_gptq: {e}") from None
        dev = _device(device, t.values())
        act = _act(dtype, scales, bias)
        c = {r: _to(v, dev) for r, v in t.items()}
        return cls._prepare(n, k, act, "u4b8" if sym else "u4", group, dev, bias, lambda ctx, d,
                            q, s, st: ctx.import_gptq(d, q, s, c["qweight"], c["scales"],
                                                      c["qzeros"], c["g_idx"], zeros, st),
                            layout)

    @classmethod
    def from_awq(cls, qweight, qzeros, scales, bias=None, bits=4, group_size=128, dtype=None,
                 device=None, activations=None):
        """An AutoAWQ layer (version "gemm", zero_point true): qweight int32 [k, n/8], qzeros
        int32 [k/g, n/8], scales [k/g, n]."""
        layout = _layout(activations, "from_awq")
        group = 0 if group_size == -1 else group_size
        t = {"qweight": qweight, "qzeros": qzeros, "scales": scales, "bias": bias}
        n, k = _checked("from_awq", ck.check_awq, t, bits, group)
        dev = _device(device, t.values())
        c = {r: _to(v, dev) for r, v in t.items()}
        return cls._prepare(n, k, _act(dtype, scales, bias), "u4", group, dev, bias,
                            lambda ctx, d, q, s, st: ctx.import_awq(
                                d, q, s, c["qweight"], c["qzeros"], c["scales"], st), layout)

    @classmethod
    def from_compressed_tensors(cls, weight_packed, weight_scale, weight_zero_point=None,
                                weight_shape=None, weight_g_idx=None, bias=None, num_bits=4,
                                strategy="group", group_size=None, symmetric=None, dtype=None,
                                device=None, activations=None):
        """A compressed-tensors pack-quantized layer: weight_packed int32 [n, k/8],
        weight_scale [n, k/g] ([n, 1] for strategy "channel"), weight_zero_point int32
        [n/8, k/g] (symmetric false), weight_shape [n, k] (a tensor or a pair), weight_g_idx
        int32 [k] (identity order only). group_size None: k / weight_scale's columns;
        symmetric None: whether weight_zero_point is absent."""
        layout = _layout(activations, "from_compressed_tensors")
        if symmetric is None:
            symmetric = weight_zero_point is None
        shape = None if weight_shape is None else [int(v) for v in (
            weight_shape.tolist() if isinstance(weight_shape, torch.Tensor) else weight_shape)]
        if strategy == "channel":
            group = 0
        elif strategy == "group":
            group = group_size
            if group is None and isinstance(weight_scale, torch.Tensor) and \
                    weight_scale.dim() == 2 and weight_scale.shape[1] and \
                    isinstance(weight_packed, torch.Tensor) and weight_packed.dim() == 2:
                group = weight_packed.shape[1] * 8 // weight_scale.shape[1]
        else:
            raise ArgumentError(f"from_compressed_tensors: strategy {strategy!r}: \"group\" or "
                                "\"channel\"")
        t = {"weight_packed": weight_packed, "weight_scale": weight_scale,
             "weight_zero_point": weight_zero_point, "weight_g_idx": weight_g_idx, "bias": bias}
        if group is None:
            raise ArgumentError("from_compressed_tensors: strategy group needs group_size (or "
                                "a 2-D weight_packed and weight_scale to infer it)")
        n, k = _checked("from_compressed_tensors", ck.check_ct, t, shape, num_bits, group,
                        symmetric)
        dev = _device(device, t.values())
        c = {r: _to(v, dev) for r, v in t.items()}
        return cls._prepare(n, k, _act(dtype, weight_scale, bias), "u4b8" if symmetric else "u4",
                            group, dev, bias, lambda ctx, d, q, s, st: ctx.import_ct(
                                d, q, s, c["weight_packed"], c["weight_scale"],
                                c["weight_zero_point"], c["weight_g_idx"], st), layout)

    @classmethod
    def from_modelopt_nvfp4(cls, weight, weight_scale, weight_scale_2, input_scale=None,
                            bias=None, dtype=None, device=None, activations=None):
        """A ModelOpt NVFP4 layer: weight uint8 [n, k/2] (E2M1 pairs, low nibble first),
        weight_scale float8_e4m3fn (or its uint8 bits) [n, k/16], weight_scale_2 the FP32
        global scale (a one-element tensor or a float). input_scale is accepted and not used:
        the layer runs W4A16, its activations in 16 bits (NVFP4 has no W4A8 form: the library
        refuses activations="e4m3", saying why)."""
        layout = _layout(activations, "from_modelopt_nvfp4")
        if not isinstance(weight_scale_2, torch.Tensor):
            weight_scale_2 = torch.tensor(float(weight_scale_2), dtype=torch.float32)
        t = {"weight": weight, "weight_scale": weight_scale, "weight_scale_2": weight_scale_2,
             "input_scale": input_scale, "bias": bias}
        n, k = _checked("from_modelopt_nvfp4", ck.check_nvfp4, t)
        global_scale = float(weight_scale_2.reshape(()).item())
        dev = _device(device, (weight, weight_scale))
        packed, block = _to(weight, dev), _to(weight_scale.view(torch.uint8), dev)
        return cls._prepare(n, k, _act(dtype, bias), "fe2m1", 16, dev, bias,
                            lambda ctx, d, q, s, st: ctx.import_fp4(d, q, s, packed, block,
                                                                    global_scale, st), layout)

    @classmethod
    def quantize(cls, weight, wfmt="u4b8", group=128, bias=None, device=None, activations=None):
        """A layer quantized from a dense weight [n, k] (float16 or bfloat16: the activation
        type) by the library's quantizer (mgen_quantize: round to nearest, scales from each
        group's largest magnitude; u4b8, u4 or fe2m1 with the format's groups), e.g. for a
        16-bit checkpoint, tests and benchmarks."""
        layout = _layout(activations, "quantize")
        if not isinstance(weight, torch.Tensor) or weight.dim() != 2 or weight.dtype not in _ACT:
            raise ArgumentError("quantize: weight must be a float16 or bfloat16 tensor [n, k]")
        dev = _device(device, (weight,))
        w = _to(weight, dev)
        n, k = w.shape
        return cls._prepare(n, k, _ACT[weight.dtype], wfmt, group, dev, bias,
                            lambda ctx, d, q, s, st: ctx.quantize(w, d, q, s, st), layout)

    @classmethod
    def from_mxfp4(cls, blocks, scales, bias=None, dtype=None, device=None, activations=None):
        """An OCP MXFP4 layer as gpt-oss stores it (`*_blocks`, `*_scales`): blocks uint8
        [n, k/32, 16] (or [n, k/2]: E2M1 pairs, low nibble first), scales uint8 E8M0
        [n, k/32]. (One expert of a stacked [E, ...] tensor: pass blocks[e], scales[e].)"""
        layout = _layout(activations, "from_mxfp4")
        t = {"blocks": blocks, "scales": scales, "bias": bias}
        n, k = _checked("from_mxfp4", ck.check_mxfp4, t)
        dev = _device(device, (blocks, scales))
        packed = _to(blocks.reshape(n, k // 2), dev)
        block = _to(scales.view(torch.uint8), dev)
        return cls._prepare(n, k, _act(dtype, bias), "fe2m1", 32, dev, bias,
                            lambda ctx, d, q, s, st: ctx.import_fp4(d, q, s, packed, block,
                                                                    1.0, st), layout)


def _to(t, dev):
    return None if t is None else t.detach().to(dev).contiguous()
