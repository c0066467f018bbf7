"""layer_checkpoints.py -- small quantized checkpoints in each format marlin_gen.torch loads
(GPTQ sym and asym, AWQ, compressed-tensors sym/asym group/channel, ModelOpt NVFP4, gpt-oss
MXFP4), written by the tests from random codes as each format's published description stores
them, and their weights read back: `dequantize(dir)` unpacks the saved tensors (safetensors
load_file, on the CPU, float64) by the same descriptions, written apart from the packing and
without marlin_gen's code, so a test compares the layers against F.linear on these weights.
Needs PyTorch and safetensors."""
import json
import os

import torch
from safetensors.torch import load_file, save_file

AWQ_ORDER = (0, 2, 4, 6, 1, 3, 5, 7)  # AutoAWQ: nibble i of a word holds column AWQ_ORDER[i]
E2M1 = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6],
                    dtype=torch.float64)
HALF = {"f16": torch.float16, "bf16": torch.bfloat16}


def _i32(words):
    """int64 values 0..2^32-1 -> int32 with the same bits (as the checkpoints store them)."""
    return torch.where(words >= 2**31, words - 2**32, words).to(torch.int32)


def _pack_rows(vals):
    """[R, C] values 0..15 -> int32 [R/8, C]: value of row r at bits 4 (r % 8) of row r / 8."""
    out = torch.zeros(vals.shape[0] // 8, vals.shape[1], dtype=torch.int64)
    for b in range(8):
        out |= vals[b::8].to(torch.int64) << (4 * b)
    return _i32(out)


def _pack_awq(vals):
    out = torch.zeros(vals.shape[0], vals.shape[1] // 8, dtype=torch.int64)
    for i, o in enumerate(AWQ_ORDER):
        out |= vals[:, o::8].to(torch.int64) << (4 * i)
    return _i32(out)


def _bias(n, act, on):
    return (torch.randn(n) * 0.5).to(HALF[act]) if on else None


def _scales(rows, n, act, signed=True):
    s = torch.rand(rows, n) * 0.02 + 0.001
    if signed:
        s = s * (torch.randint(0, 2, (rows, n)).float() * 2 - 1)
    return s.to(HALF[act])


def gptq(prefix, n, k, group, act, sym, bias):
    """A GPTQ layer, checkpoint_format "gptq" (v1: qzeros stores zero - 1)."""
    rows = k // group if group > 0 else 1
    codes = torch.randint(0, 16, (n, k))
    zeros = torch.full((rows, n), 8) if sym else torch.randint(1, 16, (rows, n))
    t = {prefix + ".qweight": _pack_rows(codes.t()), prefix + ".scales": _scales(rows, n, act, sym),
         prefix + ".qzeros": _pack_rows((zeros - 1).t()).t().contiguous(),
         prefix + ".g_idx": (torch.arange(k) // (group if group > 0 else k)).to(torch.int32)}
    b = _bias(n, act, bias)
    if b is not None:
        t[prefix + ".bias"] = b
    return t


def awq(prefix, n, k, group, act, bias):
    codes = torch.randint(0, 16, (k, n))
    zeros = torch.randint(0, 16, (k // group, n))
    t = {prefix + ".qweight": _pack_awq(codes), prefix + ".qzeros": _pack_awq(zeros),
         prefix + ".scales": _scales(k // group, n, act, signed=False)}
    b = _bias(n, act, bias)
    if b is not None:
        t[prefix + ".bias"] = b
    return t


def ct(prefix, n, k, group, act, sym, bias):
    """compressed-tensors pack-quantized: codes stored q + 8, zero points zp + 8 along N."""
    rows = k // group if group > 0 else 1
    codes = torch.randint(0, 16, (n, k))
    t = {prefix + ".weight_packed": _pack_rows(codes.t()).t().contiguous(),
         prefix + ".weight_scale": _scales(rows, n, act, sym).t().contiguous(),
         prefix + ".weight_shape": torch.tensor([n, k], dtype=torch.int64)}
    if not sym:
        t[prefix + ".weight_zero_point"] = _pack_rows(torch.randint(0, 16, (n, rows)))
    b = _bias(n, act, bias)
    if b is not None:
        t[prefix + ".bias"] = b
    return t


def nvfp4(prefix, n, k, act, bias):
    codes = torch.randint(0, 16, (n, k))
    t = {prefix + ".weight": (codes[:, 0::2] | (codes[:, 1::2] << 4)).to(torch.uint8),
         prefix + ".weight_scale": (torch.rand(n, k // 16) * 2 + 0.25).to(torch.float8_e4m3fn),
         prefix + ".weight_scale_2": torch.tensor(0.01, dtype=torch.float32),
         prefix + ".input_scale": torch.tensor(0.5, dtype=torch.float32)}
    b = _bias(n, act, bias)
    if b is not None:
        t[prefix + ".bias"] = b
    return t


def mxfp4(prefix, n, k, act, experts, bias):
    """gpt-oss storage: blocks [E, n, k/32, 16], scales [E, n, k/32] (E8M0), bias [E, n]
    (experts None: no expert dimension)."""
    lead = (experts,) if experts else ()
    codes = torch.randint(0, 16, lead + (n, k))
    packed = (codes[..., 0::2] | (codes[..., 1::2] << 4)).to(torch.uint8)
    t = {prefix + "_blocks": packed.reshape(lead + (n, k // 32, 16)),
         prefix + "_scales": torch.randint(120, 130, lead + (n, k // 32), dtype=torch.uint8)}
    if bias:
        t[prefix + "_bias"] = (torch.randn(lead + (n,)) * 0.5).to(HALF[act])
    return t


def write(path, tensors, config):
    """The checkpoint directory: model.safetensors and config.json."""
    os.makedirs(path, exist_ok=True)
    save_file(tensors, os.path.join(path, "model.safetensors"))
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(config, f, indent=1)


# ---------------------------------------------------------------- reading back
def _unpack_rows(words):
    """int32 [R/8, C] -> [R, C] values 0..15 (row r at bits 4 (r % 8) of row r / 8)."""
    w = words.to(torch.int64) & 0xFFFFFFFF
    return torch.stack([(w >> (4 * b)) & 15 for b in range(8)], 1).reshape(-1, w.shape[1])


def _unpack_awq(words):
    w = words.to(torch.int64) & 0xFFFFFFFF
    out = torch.empty(w.shape[0], w.shape[1] * 8, dtype=torch.int64)
    for i, o in enumerate(AWQ_ORDER):
        out[:, o::8] = (w >> (4 * i)) & 15
    return out


def _expand(per_group, k):
    """[n, rows] per-group values -> [n, k]."""
    return per_group.repeat_interleave(k // per_group.shape[1], 1)


def dequantize(path, config):
    """{prefix: (W float64 [n, k], bias float64 [n] or None)} of a checkpoint's quantized layers
    from its saved tensors (expert e of a stacked MXFP4 tensor as `<prefix>.<e>`)."""
    t = {name: v.double() if v.is_floating_point() and v.dtype != torch.float8_e4m3fn else v
         for name, v in load_file(os.path.join(path, "model.safetensors")).items()}
    method = config["quantization_config"]["quant_method"]
    out = {}
    if method in ("gptq", "awq"):
        for name in t:
            if not name.endswith(".qweight"):
                continue
            p = name[:-8]
            if method == "gptq":
                q = _unpack_rows(t[p + ".qweight"]).t()                 # [n, k]
                z = _unpack_rows(t[p + ".qzeros"].t().contiguous()) + 1  # [n, rows]
            else:
                q = _unpack_awq(t[p + ".qweight"]).t()
                z = _unpack_awq(t[p + ".qzeros"]).t()
            k = q.shape[1]
            s = t[p + ".scales"].t()
            out[p] = ((q - _expand(z, k)).double() * _expand(s, k), t.get(p + ".bias"))
    elif method == "compressed-tensors":
        for name in t:
            if not name.endswith(".weight_packed"):
                continue
            p = name[:-14]
            q = _unpack_rows(t[name].t().contiguous()).t()              # stored q + 8, [n, k]
            k = q.shape[1]
            s = t[p + ".weight_scale"]
            zp = t.get(p + ".weight_zero_point")
            z = torch.full_like(s, 8, dtype=torch.int64) if zp is None else _unpack_rows(zp)
            out[p] = ((q - _expand(z, k)).double() * _expand(s, k), t.get(p + ".bias"))
    elif method == "modelopt":
        for name in t:
            if not name.endswith(".weight_scale_2"):
                continue
            p = name[:-15]
            byte = t[p + ".weight"].to(torch.int64)
            codes = torch.stack([byte & 15, byte >> 4], 2).reshape(byte.shape[0], -1)
            k = codes.shape[1]
            per = t[p + ".weight_scale"].double() * t[name].float().double()
            out[p] = (E2M1[codes] * _expand(per, k), t.get(p + ".bias"))
    elif method == "mxfp4":
        for name in t:
            if not name.endswith("_blocks"):
                continue
            p = name[:-7]
            blocks, scales, bias = t[name], t[p + "_scales"], t.get(p + "_bias")
            stacked = blocks.dim() == 4
            for e in range(blocks.shape[0]) if stacked else [None]:
                b = (blocks[e] if stacked else blocks).to(torch.int64).reshape(
                    blocks.shape[-3], -1)
                codes = torch.stack([b & 15, b >> 4], 2).reshape(b.shape[0], -1)
                k = codes.shape[1]
                per = torch.pow(2.0, (scales[e] if stacked else scales).double() - 127)
                bb = None if bias is None else (bias[e] if stacked else bias)
                out[p if e is None else f"{p}.{e}"] = (E2M1[codes] * _expand(per, k), bb)
    return out
