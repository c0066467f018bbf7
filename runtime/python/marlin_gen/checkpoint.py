"""checkpoint.py -- which tensors of a safetensors checkpoint are quantized linear layers, and in
which format, from its `quantization_config`; standard library only (no PyTorch, no GPU), so
that the parsing and every refusal run, and are tested, on any machine. Over the files'
headers (checkpoint_files.py reads and checks them, and a few small tensors: compressed-tensors'
weight_shape, GPTQ's g_idx) it checks every layer's names, dtypes and shapes against its
format's conventions (mgen.h, "checkpoint import") before anything reaches a device;
marlin_gen.torch.load_linear_layers builds the layers from its plans. Every refusal is a
CheckpointError naming the layer (or the config key) and the reason."""
import re

# the files' side (headers, configs) and its names, re-exported: one module to import
from marlin_gen.checkpoint_files import (  # noqa: F401
    ITEMSIZE, CheckpointError, TensorInfo, locate, quant_config, read_header, read_tensors)

FLOAT_SCALES = ("F16", "BF16", "F32")  # the scale dtypes the import calls convert
HALF = {"F16": "f16", "BF16": "bf16"}  # checkpoint dtype -> activation type it suggests


# ---------------------------------------------------------------- formats: tensor checks
class Plan:
    """One quantized linear layer: `kind` ("gptq", "awq", "ct", "nvfp4", "mxfp4"), the weight
    n x k (out x in), `wfmt` and `group` of its packed weights, `names` {role: tensor name}
    (role None: absent), `options` (GPTQ's zeros convention, NVFP4's global scale, ...), and
    `expert` (an index into a stacked MXFP4 tensor's first dimension, else None)."""

    def __init__(self, prefix, kind, n, k, wfmt, group, names, options=None, expert=None):
        self.prefix, self.kind, self.n, self.k = prefix, kind, n, k
        self.wfmt, self.group, self.names = wfmt, group, names
        self.options, self.expert = options or {}, expert

    def __repr__(self):
        return (f"Plan({self.prefix!r}, {self.kind}, n={self.n}, k={self.k}, {self.wfmt}, "
                f"group={self.group})")


def _want(what, info, dtypes, shape):
    """Refuses `info` (dtype, shape) unless its dtype is one of `dtypes` and its shape `shape`."""
    dtype, got = info
    if dtype not in dtypes:
        raise CheckpointError(f"{what}: dtype {dtype}; expected {' or '.join(dtypes)}")
    if tuple(got) != tuple(shape):
        raise CheckpointError(f"{what}: shape {list(got)}; expected {list(shape)}")


def _rank2(what, info, dtypes):
    dtype, shape = info
    if dtype not in dtypes or len(shape) != 2 or 0 in shape:
        raise CheckpointError(f"{what}: {dtype} {list(shape)}; expected a non-empty 2-D "
                              f"{' or '.join(dtypes)} tensor")
    return shape


def _group_rows(k, group, what):
    """Scale rows along K: k / group (group > 0), 1 per channel (group 0)."""
    if group == 0:
        return 1
    if group < 0 or k % group:
        raise CheckpointError(f"{what}: k={k} is not a multiple of group_size {group}")
    return k // group


def _bias(t, n, what):
    if t.get("bias") is not None:
        _want(f"{what} bias", t["bias"], FLOAT_SCALES, (n,))


def check_gptq(t, bits=4, group=128, sym=True):
    """GPTQ tensors {role: (dtype, shape) or None} (qweight I32 [k/8, n], scales [k/g, n], qzeros
    I32 [k/g, n/8], g_idx I32 [k], bias [n]); group 0 = per channel. Returns (n, k)."""
    if bits != 4:
        raise CheckpointError(f"bits {bits}: only 4-bit weights are supported")
    rows8, n = _rank2("qweight", t["qweight"], ("I32",))
    k = rows8 * 8
    rows = _group_rows(k, group, "qweight")
    if t.get("scales") is None:
        raise CheckpointError("scales: missing")
    _want("scales", t["scales"], FLOAT_SCALES, (rows, n))
    if t.get("qzeros") is not None:
        if n % 8:
            raise CheckpointError(f"qzeros: n={n} is not a multiple of 8")
        _want("qzeros", t["qzeros"], ("I32",), (rows, n // 8))
    elif not sym:
        raise CheckpointError("qzeros: missing (sym false needs the zero points)")
    if t.get("g_idx") is not None:
        _want("g_idx", t["g_idx"], ("I32",), (k,))
    _bias(t, n, "GPTQ")
    return n, k


def check_awq(t, bits=4, group=128):
    """AutoAWQ GEMM tensors (qweight I32 [k, n/8], qzeros I32 [k/g, n/8], scales [k/g, n])."""
    if bits != 4:
        raise CheckpointError(f"bits {bits}: only 4-bit weights are supported")
    k, n8 = _rank2("qweight", t["qweight"], ("I32",))
    n = n8 * 8
    rows = _group_rows(k, group, "qweight")
    for role in ("qzeros", "scales"):
        if t.get(role) is None:
            raise CheckpointError(f"{role}: missing")
    _want("qzeros", t["qzeros"], ("I32",), (rows, n8))
    _want("scales", t["scales"], FLOAT_SCALES, (rows, n))
    _bias(t, n, "AWQ")
    return n, k


def check_ct(t, shape=None, bits=4, group=128, sym=True):
    """compressed-tensors pack-quantized tensors (weight_packed I32 [n, k/8], weight_scale
    [n, k/g] ([n, 1] per channel), weight_zero_point I32 [n/8, k/g], weight_g_idx I32 [k]);
    `shape` weight_shape's values (n, k) where known."""
    if bits != 4:
        raise CheckpointError(f"num_bits {bits}: only 4-bit weights are supported")
    n, k8 = _rank2("weight_packed", t["weight_packed"], ("I32",))
    k = k8 * 8
    if shape is not None and tuple(shape) != (n, k):
        raise CheckpointError(f"weight_shape {list(shape)} does not match weight_packed "
                              f"{[n, k8]} (n={n}, k={k}: this loader needs k a multiple of 8)")
    rows = _group_rows(k, group, "weight_packed")
    if t.get("weight_scale") is None:
        raise CheckpointError("weight_scale: missing")
    _want("weight_scale", t["weight_scale"], FLOAT_SCALES, (n, rows))
    zp = t.get("weight_zero_point")
    if sym and zp is not None:
        raise CheckpointError("weight_zero_point present but symmetric true")
    if not sym:
        if zp is None:
            raise CheckpointError("weight_zero_point: missing (symmetric false)")
        if n % 8:
            raise CheckpointError(f"weight_zero_point: n={n} is not a multiple of 8")
        _want("weight_zero_point", zp, ("I32",), (n // 8, rows))
    if t.get("weight_g_idx") is not None:
        _want("weight_g_idx", t["weight_g_idx"], ("I32",), (k,))
    _bias(t, n, "compressed-tensors")
    return n, k


def check_nvfp4(t, group=16):
    """ModelOpt NVFP4 tensors (weight U8 [n, k/2], weight_scale F8_E4M3 [n, k/16], weight_scale_2
    F32 [] or [1], input_scale F32 [] or [1], optional)."""
    if group != 16:
        raise CheckpointError(f"group_size {group}: NVFP4 has 16")
    n, k2 = _rank2("weight", t["weight"], ("U8",))
    k = k2 * 2
    rows = _group_rows(k, 16, "weight")
    if t.get("weight_scale") is None:
        raise CheckpointError("weight_scale: missing")
    _want("weight_scale", t["weight_scale"], ("F8_E4M3", "U8"), (n, rows))
    for role in ("weight_scale_2", "input_scale"):
        info = t.get(role)
        if info is None and role == "input_scale":
            continue
        if info is None:
            raise CheckpointError(f"{role}: missing")
        if info[0] != "F32" or tuple(info[1]) not in ((), (1,)):
            raise CheckpointError(f"{role}: {info[0]} {list(info[1])}; expected one F32 value")
    _bias(t, n, "NVFP4")
    return n, k


def check_mxfp4(t):
    """OCP MXFP4 tensors as gpt-oss stores them: blocks U8 [n, k/32, 16] (or [n, k/2]), scales
    U8 (E8M0) [n, k/32]; a leading experts dimension is the caller's (stripped here)."""
    dtype, shape = t["blocks"]
    if dtype != "U8" or len(shape) not in (2, 3) or 0 in shape or (
            len(shape) == 3 and shape[2] != 16):
        raise CheckpointError(f"blocks: {dtype} {list(shape)}; expected U8 [n, k/32, 16] or "
                              "[n, k/2]")
    n = shape[0]
    k = shape[1] * 32 if len(shape) == 3 else shape[1] * 2
    if k % 32:
        raise CheckpointError(f"blocks: k={k} is not a multiple of 32 (MXFP4's block)")
    if t.get("scales") is None:
        raise CheckpointError("scales: missing")
    _want("scales", t["scales"], ("U8", "F8_E8M0"), (n, k // 32))
    _bias(t, n, "MXFP4")
    return n, k


# ---------------------------------------------------------------- configs -> plans
def _int(cfg, key, default, what):
    value = cfg.get(key, default)
    if type(value) is not int:
        raise CheckpointError(f"{what}: {key} {value!r} is not an integer")
    return value


def gptq_zeros(sym, checkpoint_format):
    """How a GPTQ checkpoint stores its zeros (Context.import_gptq's `zeros`; mgen.h's
    mgen_gptq_zeros): "gptq" minus one, "gptq_v2" exact; absent: either (checked) when
    symmetric, the format's default "gptq" when not (asymmetric zeros cannot tell)."""
    if checkpoint_format not in (None, "gptq", "gptq_v2"):
        raise CheckpointError(f"checkpoint_format {checkpoint_format!r} is not \"gptq\" or "
                              "\"gptq_v2\"")
    if checkpoint_format == "gptq_v2":
        return "exact"
    return "auto" if sym and checkpoint_format is None else "minus_one"


def _gptq_cfg(q):
    bits = _int(q, "bits", 4, "quantization_config")
    group = _int(q, "group_size", 128, "quantization_config")
    sym = bool(q.get("sym", True))
    try:
        # GPTQModel's own quantize_config.json names it "format"; HF's config.json
        # "checkpoint_format" (a "marlin" or "bitblas" repacking is refused: other layouts)
        zeros = gptq_zeros(sym, q.get("checkpoint_format", q.get("format")))
    except CheckpointError as e:
        raise CheckpointError(f"quantization_config: {e}") from None
    return {"bits": bits, "group": 0 if group == -1 else group, "sym": sym, "zeros": zeros,
            "desc_act": bool(q.get("desc_act", False)), "group_size": group}


def _identity_groups(g_idx, group):
    """The first index where g_idx is not k / group (act order), or None."""
    for i, g in enumerate(g_idx):
        if g != (i // group if group else 0):
            return i
    return None


def _prefixes(tensors, suffix):
    return sorted(name[:-len(suffix)] for name in tensors if name.endswith(suffix))


def _info(tensors, name):
    return None if name is None or name not in tensors else (tensors[name].dtype,
                                                            tensors[name].shape)


def _names(tensors, prefix, roles, sep="."):
    return {role: (prefix + sep + role) if prefix + sep + role in tensors else None
            for role in roles}


def _layer(prefix, check, *args, **kw):
    try:
        return check(*args, **kw)
    except CheckpointError as e:
        raise CheckpointError(f"layer {prefix!r}: {e}") from None


def _plan_gptq(q, tensors):
    c = _gptq_cfg(q)
    if c["group_size"] < -1 or c["group_size"] == 0:
        raise CheckpointError(f"quantization_config: group_size {c['group_size']}")
    plans = []
    for prefix in _prefixes(tensors, ".qweight"):
        names = _names(tensors, prefix, ("qweight", "scales", "qzeros", "g_idx", "bias"))
        t = {r: _info(tensors, nm) for r, nm in names.items()}
        n, k = _layer(prefix, check_gptq, t, c["bits"], c["group"], c["sym"])
        if names["g_idx"] is not None:
            first = _identity_groups(tensors[names["g_idx"]].ints(), c["group"])
            if first is not None:
                raise CheckpointError(
                    f"layer {prefix!r}: act order (desc_act {str(c['desc_act']).lower()}): "
                    f"g_idx[{first}] is not {first} / group_size; the kernels read contiguous "
                    "groups")
        elif c["desc_act"]:
            raise CheckpointError(f"layer {prefix!r}: desc_act true (act order) and no g_idx: "
                                  "the order of K cannot be known")
        plans.append(Plan(prefix, "gptq", n, k, "u4b8" if c["sym"] else "u4", c["group"],
                          names, {"zeros": c["zeros"]}))
    return plans


def _plan_awq(q, tensors):
    bits = _int(q, "bits", _int(q, "w_bit", 4, "quantization_config"), "quantization_config")
    group = _int(q, "group_size", _int(q, "q_group_size", 128, "quantization_config"),
                 "quantization_config")
    version = str(q.get("version", "gemm")).lower()
    if version != "gemm":
        raise CheckpointError(f"quantization_config: AWQ version {version!r}: only \"gemm\" "
                              "(AutoAWQ's GEMM packing) is supported")
    if not q.get("zero_point", True):
        raise CheckpointError("quantization_config: AWQ zero_point false is not supported")
    if group < -1 or group == 0:
        raise CheckpointError(f"quantization_config: group_size {group}")
    group = 0 if group == -1 else group
    plans = []
    for prefix in _prefixes(tensors, ".qweight"):
        names = _names(tensors, prefix, ("qweight", "qzeros", "scales", "bias"))
        t = {r: _info(tensors, nm) for r, nm in names.items()}
        n, k = _layer(prefix, check_awq, t, bits, group)
        plans.append(Plan(prefix, "awq", n, k, "u4", group, names))
    return plans


def _ct_scheme(q, prefix):
    """The config group whose targets name the layer: an exact name before a "re:" pattern
    before the class name "Linear" (compressed-tensors' precedence)."""
    groups = q.get("config_groups")
    if not isinstance(groups, dict) or not groups:
        raise CheckpointError("quantization_config: no config_groups")
    best = None
    for gname, g in groups.items():
        if not isinstance(g, dict):
            raise CheckpointError(f"quantization_config: config_groups.{gname} is not an object")
        for target in g.get("targets", []):
            if not isinstance(target, str):
                continue
            if target == prefix:
                rank = 0
            elif target.startswith("re:") and re.match(target[3:], prefix):
                rank = 1
            elif target == "Linear":
                rank = 2
            else:
                continue
            if best is None or rank < best[0]:
                best = (rank, gname, g)
    if best is None:
        raise CheckpointError(f"layer {prefix!r}: no config_groups entry targets it")
    return best[1], best[2]


def _plan_ct(q, tensors):
    plans = []
    for prefix in _prefixes(tensors, ".weight_packed"):
        gname, g = _ct_scheme(q, prefix)
        what = f"layer {prefix!r} (config_groups.{gname})"
        fmt = g.get("format") or q.get("format")
        if fmt != "pack-quantized":
            raise CheckpointError(f"{what}: format {fmt!r}: only \"pack-quantized\" is supported")
        w = g.get("weights")
        if not isinstance(w, dict):
            raise CheckpointError(f"{what}: no weights quantization")
        if w.get("type", "int") != "int":
            raise CheckpointError(f"{what}: weights type {w.get('type')!r}: only \"int\"")
        strategy = w.get("strategy")
        if strategy == "channel":
            group = 0
        elif strategy == "group":
            group = w.get("group_size")
            if type(group) is not int or group < 1:
                raise CheckpointError(f"{what}: strategy group with group_size {group!r}")
        else:
            raise CheckpointError(f"{what}: strategy {strategy!r}: only \"group\" and "
                                  "\"channel\" are supported")
        if w.get("actorder") not in (None, "weight", "static", "group"):
            raise CheckpointError(f"{what}: actorder {w.get('actorder')!r}")
        sym = bool(w.get("symmetric", True))
        bits = w.get("num_bits", 4)
        names = _names(tensors, prefix, ("weight_packed", "weight_scale", "weight_zero_point",
                                         "weight_g_idx", "weight_shape", "bias"))
        t = {r: _info(tensors, nm) for r, nm in names.items()}
        shape = None
        if names["weight_shape"] is not None:
            info = tensors[names["weight_shape"]]
            if info.dtype not in ("I32", "I64") or info.shape != (2,):
                raise CheckpointError(f"{what}: weight_shape {info.dtype} {list(info.shape)}; "
                                      "expected two integers")
            shape = info.ints()
        n, k = _layer(prefix, check_ct, t, shape, bits, group, sym)
        if names["weight_g_idx"] is not None:
            first = _identity_groups(tensors[names["weight_g_idx"]].ints(), group)
            if first is not None:
                raise CheckpointError(f"{what}: act order: weight_g_idx[{first}] is not "
                                      f"{first} / group_size; the kernels read contiguous groups")
        plans.append(Plan(prefix, "ct", n, k, "u4b8" if sym else "u4", group, names))
    return plans


def _plan_nvfp4(q, tensors):
    algo = q.get("quant_algo")
    if algo is None and isinstance(q.get("quantization"), dict):  # hf_quant_config.json's nesting
        algo = q["quantization"].get("quant_algo")
    if algo != "NVFP4":
        raise CheckpointError(f"quantization_config: modelopt quant_algo {algo!r}: only "
                              "\"NVFP4\" is supported")
    group = _int(q, "group_size", 16, "quantization_config")
    plans = []
    for prefix in _prefixes(tensors, ".weight_scale_2"):
        names = _names(tensors, prefix, ("weight", "weight_scale", "weight_scale_2",
                                         "input_scale", "bias"))
        if names["weight"] is None:
            raise CheckpointError(f"layer {prefix!r}: weight: missing")
        t = {r: _info(tensors, nm) for r, nm in names.items()}
        n, k = _layer(prefix, check_nvfp4, t, group)
        scale2 = tensors[names["weight_scale_2"]].float32()
        plans.append(Plan(prefix, "nvfp4", n, k, "fe2m1", 16, names,
                          {"global_scale": scale2}))
    return plans


def _plan_mxfp4(q, tensors):
    plans = []
    for prefix in _prefixes(tensors, "_blocks"):
        names = _names(tensors, prefix, ("blocks", "scales", "bias"), sep="_")
        dtype, shape = tensors[prefix + "_blocks"].dtype, tensors[prefix + "_blocks"].shape
        # gpt-oss stacks its experts: blocks [E, n, k/32, 16], scales [E, n, k/32], bias [E, n]
        stacked = len(shape) == 4 or (len(shape) == 3 and shape[-1] != 16)
        experts = shape[0] if stacked else None
        t = {}
        for role, nm in names.items():
            info = _info(tensors, nm)
            if info is not None and stacked:
                if len(info[1]) < 2 or info[1][0] != experts:
                    raise CheckpointError(f"layer {prefix!r}: {role} {list(info[1])}: its first "
                                          f"dimension is not the {experts} experts of blocks")
                info = (info[0], info[1][1:])
            t[role] = info
        n, k = _layer(prefix, check_mxfp4, t)
        for e in (range(experts) if stacked else [None]):
            plans.append(Plan(prefix if e is None else f"{prefix}.{e}", "mxfp4", n, k, "fe2m1",
                              32, names, expert=e))
    return plans


PLANNERS = {"gptq": _plan_gptq, "awq": _plan_awq, "compressed-tensors": _plan_ct,
            "modelopt": _plan_nvfp4, "mxfp4": _plan_mxfp4}


def plan(qcfg, tensors):
    """[Plan] for every quantized linear layer of `tensors` ({name: TensorInfo}) under the
    quantization_config `qcfg`; refuses an unknown method, bits other than 4, act order, and
    any tensor whose dtype or shape is not the format's, naming the layer."""
    method = str(qcfg.get("quant_method", "")).lower()
    if method not in PLANNERS:
        raise CheckpointError(f"quantization_config: quant_method {qcfg.get('quant_method')!r} "
                              f"is not one of {', '.join(sorted(PLANNERS))}")
    plans = PLANNERS[method](qcfg, tensors)
    if not plans:
        raise CheckpointError(f"no {method} quantized linear layer among the {len(tensors)} "
                              "tensors")
    return plans


def act_of(plan, tensors, model_config=None):
    """The activation type a layer runs in by default: config.json's torch_dtype where it is
    float16 / bfloat16, else the scales' 16-bit type, else "f16"."""
    dtype = (model_config or {}).get("torch_dtype") or (model_config or {}).get("dtype")
    if dtype in ("float16", "bfloat16"):
        return {"float16": "f16", "bfloat16": "bf16"}[dtype]
    for role in ("scales", "weight_scale", "bias"):
        name = plan.names.get(role)
        if name is not None and tensors[name].dtype in HALF:
            return HALF[tensors[name].dtype]
    return "f16"
