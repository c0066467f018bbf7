"""checkpoint_files.py -- the files of a safetensors checkpoint, standard library only: each
file's header (tensor names, dtypes, shapes, byte ranges) read and checked against the file as
hostile input (the header's length, JSON, dtypes, shapes and data offsets), small tensors' values
read (compressed-tensors' weight_shape, GPTQ's g_idx, NVFP4's global scale), and where the
checkpoint's quantization_config is (config.json, ModelOpt's hf_quant_config.json, or given).
checkpoint.py plans the layers from them. Every refusal is a CheckpointError naming the file
and the reason."""
import array
import json
import os
import struct
import sys

# safetensors dtype -> bytes per element
ITEMSIZE = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1, "I16": 2,
            "U16": 2, "F16": 2, "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8,
            "F64": 8}
MAX_HEADER = 100 << 20  # the safetensors format's own limit on the JSON header


class CheckpointError(ValueError):
    """A checkpoint, config or layer that cannot be loaded; the message names which and why."""


class TensorInfo:
    """One tensor of a safetensors file: its dtype name, shape and byte range in the file."""

    def __init__(self, path, name, dtype, shape, begin, end):
        self.path, self.name, self.dtype, self.shape = path, name, dtype, tuple(shape)
        self.begin, self.end = begin, end

    def read(self, limit=1 << 24):
        """The raw bytes (little-endian, as stored); refuses more than `limit` bytes."""
        if self.end - self.begin > limit:
            raise CheckpointError(f"{self.name}: {self.end - self.begin} bytes; at most {limit} "
                                  "read here")
        with open(self.path, "rb") as f:
            f.seek(self.begin)
            data = f.read(self.end - self.begin)
        if len(data) != self.end - self.begin:
            raise CheckpointError(f"{self.path}: {self.name}: the file ends inside its data")
        return data

    def ints(self):
        """The values of an I32 / I64 tensor as a list of Python ints."""
        code = {"I32": "i", "I64": "q"}.get(self.dtype)
        if code is None:
            raise CheckpointError(f"{self.name}: dtype {self.dtype}; expected I32 or I64")
        values = array.array(code, self.read())
        if sys.byteorder != "little":
            values.byteswap()
        return values.tolist()

    def float32(self):
        """The single value of an F32 tensor of one element (shape [] or [1])."""
        if self.dtype != "F32" or self.shape not in ((), (1,)):
            raise CheckpointError(f"{self.name}: {self.dtype} {list(self.shape)}; expected one "
                                  "F32 value (shape [] or [1])")
        return struct.unpack("<f", self.read())[0]


def read_header(path):
    """{tensor name: TensorInfo} of one safetensors file, every entry checked against the file:
    a known dtype, a shape of non-negative ints, data offsets inside the data section whose
    length is the shape's bytes."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise CheckpointError(f"{path}: {size} bytes: not a safetensors file (no header "
                                      "length)")
            (length,) = struct.unpack("<Q", head)
            if length > MAX_HEADER or length > size - 8:
                raise CheckpointError(f"{path}: header length {length} exceeds the file "
                                      f"({size} bytes) or {MAX_HEADER}")
            raw = f.read(length)
    except OSError as e:
        raise CheckpointError(f"{path}: {e.strerror or e}") from e
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise CheckpointError(f"{path}: the header is not JSON: {e}") from e
    if not isinstance(header, dict):
        raise CheckpointError(f"{path}: the header is not a JSON object")
    data_start, data_size = 8 + length, size - 8 - length
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        where = f"{path}: tensor {name!r}"
        if not isinstance(entry, dict):
            raise CheckpointError(f"{where}: its entry is not an object")
        dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
        if dtype not in ITEMSIZE:
            raise CheckpointError(f"{where}: dtype {dtype!r} is not a safetensors dtype")
        if (not isinstance(shape, list) or len(shape) > 8
                or not all(type(d) is int and 0 <= d < 1 << 40 for d in shape)):
            raise CheckpointError(f"{where}: shape {shape!r} is not a list of dimensions")
        if (not isinstance(offsets, list) or len(offsets) != 2
                or not all(type(o) is int for o in offsets)
                or not 0 <= offsets[0] <= offsets[1] <= data_size):
            raise CheckpointError(f"{where}: data_offsets {offsets!r} are not inside the data "
                                  f"({data_size} bytes)")
        count = ITEMSIZE[dtype]
        for d in shape:
            count *= d
        if offsets[1] - offsets[0] != count:
            raise CheckpointError(f"{where}: {offsets[1] - offsets[0]} bytes for {dtype} "
                                  f"{shape} ({count} bytes)")
        out[name] = TensorInfo(path, name, dtype, shape, data_start + offsets[0],
                               data_start + offsets[1])
    return out


def read_tensors(files):
    """{name: TensorInfo} over several safetensors files (a sharded checkpoint); a name in two
    files is refused."""
    out = {}
    for path in files:
        for name, info in read_header(path).items():
            if name in out:
                raise CheckpointError(f"tensor {name!r} is in both {out[name].path} and {path}")
            out[name] = info
    return out


def _json(path):
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
    except (OSError, ValueError) as e:
        raise CheckpointError(f"{path}: {e}") from e
    if not isinstance(value, dict):
        raise CheckpointError(f"{path}: not a JSON object")
    return value


def quant_config(config):
    """The quantization_config of a model config (config.json's dict), or `config` itself where
    it is one (it has quant_method); ModelOpt's hf_quant_config.json form ({"quantization":
    {"quant_algo": ...}}) reads as quant_method "modelopt"."""
    if not isinstance(config, dict):
        raise CheckpointError(f"config: {type(config).__name__}, not a dict")
    if "quantization_config" in config:
        config = config["quantization_config"]
        if not isinstance(config, dict):
            raise CheckpointError("quantization_config is not an object")
    if "quant_method" not in config and isinstance(config.get("quantization"), dict):
        return dict(config["quantization"], quant_method="modelopt")
    if "quant_method" not in config:
        raise CheckpointError("no quantization_config with a quant_method in the config")
    return config


def _shards(path):
    """The safetensors files of a checkpoint directory: those its model.safetensors.index.json
    maps tensors to (file names in the directory, nothing else), else every *.safetensors file
    there (a directory may hold other copies, e.g. Mistral's consolidated.safetensors)."""
    index = os.path.join(path, "model.safetensors.index.json")
    if os.path.isfile(index):
        weight_map = _json(index).get("weight_map")
        if not isinstance(weight_map, dict) or not weight_map:
            raise CheckpointError(f"{index}: no weight_map")
        names = set(weight_map.values())
        for name in names:
            if (not isinstance(name, str) or os.path.basename(name) != name
                    or name in ("", ".", "..") or not name.endswith(".safetensors")):
                raise CheckpointError(f"{index}: weight_map names {name!r}, not a .safetensors "
                                      "file of the directory")
        files = [os.path.join(path, name) for name in sorted(names)]
        for f in files:
            if not os.path.isfile(f):
                raise CheckpointError(f"{index}: {f} is missing")
        return files
    files = sorted(os.path.join(path, f) for f in os.listdir(path)
                   if f.endswith(".safetensors") and os.path.isfile(os.path.join(path, f)))
    if not files:
        raise CheckpointError(f"{path}: no .safetensors file in the directory")
    return files


def locate(path, config=None):
    """(safetensors files, quantization_config, model config or None) for `path`: a directory
    (its *.safetensors files; config.json's quantization_config, else ModelOpt's
    hf_quant_config.json, unless `config` is given) or one .safetensors file with `config`
    (a model config or its quantization_config, as a dict or a JSON file's path)."""
    model = None
    if isinstance(config, (str, os.PathLike)):
        config = _json(config)
    if os.path.isdir(path):
        files = _shards(path)
        if config is None:
            cfg_path = os.path.join(path, "config.json")
            if os.path.isfile(cfg_path):
                model = _json(cfg_path)
            hf_quant = os.path.join(path, "hf_quant_config.json")
            if (model is None or "quantization_config" not in model) and os.path.isfile(hf_quant):
                config = _json(hf_quant)
            elif model is not None:
                config = model
            else:
                raise CheckpointError(f"{path}: no config.json (or hf_quant_config.json): pass "
                                      "config=")
    elif os.path.isfile(path):
        if config is None:
            raise CheckpointError(f"{path}: a single file needs config= (the model config or its "
                                  "quantization_config)")
        files = [path]
    else:
        raise CheckpointError(f"{path}: no such file or directory")
    if isinstance(config, dict) and "quantization_config" in config and model is None:
        model = config
    return files, quant_config(config), model
