"""test_checkpoint.py -- marlin_gen.checkpoint (and checkpoint_files) on the CPU, standard library
only (no PyTorch, no GPU): safetensors headers written here byte by byte, hostile ones refused
(truncated, not JSON, offsets outside the data, sizes that do not match the shape, unknown
dtypes); the checkpoint's config found in a directory (config.json, ModelOpt's
hf_quant_config.json) or given for a single file; each format's layers planned (n, k, weight
format, group, GPTQ's zeros convention); and every refusal naming its layer or config key: bits
other than 4, act order, unknown methods, wrong dtypes and shapes, missing tensors, stacked
MXFP4 experts that disagree.
Run: python3 tests/python/test_checkpoint.py ROOT"""
import json
import os
import struct
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(sys.argv[1], "runtime", "python"))
from marlin_gen import checkpoint as ck  # noqa: E402

SIZE = {"I32": 4, "I64": 8, "F16": 2, "BF16": 2, "F32": 4, "U8": 1, "F8_E4M3": 1}


def blob(dtype, shape, data=None):
    """(dtype, shape, bytes): zeros unless `data` (bytes) is given."""
    count = SIZE[dtype]
    for d in shape:
        count *= d
    return dtype, list(shape), data if data is not None else bytes(count)


def i32(values):
    return struct.pack(f"<{len(values)}i", *values)


def write(path, tensors, header_extra=None):
    """A safetensors file of {name: (dtype, shape, bytes)}."""
    header, offset, body = {}, 0, b""
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset,
                                                                         offset + len(data)]}
        offset += len(data)
        body += data
    header.update(header_extra or {})
    raw = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw + body)


def gptq(prefix, n, k, group, g_idx=True, scales="F16", bias=False):
    rows = k // group if group > 0 else 1
    t = {prefix + ".qweight": blob("I32", (k // 8, n)),
         prefix + ".qzeros": blob("I32", (rows, n // 8)),
         prefix + ".scales": blob(scales, (rows, n))}
    if g_idx:
        t[prefix + ".g_idx"] = blob("I32", (k,), i32([i // (group if group > 0 else k)
                                                      for i in range(k)]))
    if bias:
        t[prefix + ".bias"] = blob("F16", (n,))
    return t


def ct(prefix, n, k, group, sym=True):
    rows = k // group if group else 1
    t = {prefix + ".weight_packed": blob("I32", (n, k // 8)),
         prefix + ".weight_scale": blob("BF16", (n, rows)),
         prefix + ".weight_shape": blob("I64", (2,), struct.pack("<2q", n, k))}
    if not sym:
        t[prefix + ".weight_zero_point"] = blob("I32", (n // 8, rows))
    return t


def ct_config(sym=True, strategy="group", group=128, targets=("Linear",), **extra):
    w = {"num_bits": 4, "type": "int", "symmetric": sym, "strategy": strategy,
         "group_size": group, "actorder": None}
    w.update(extra)
    return {"quant_method": "compressed-tensors", "format": "pack-quantized",
            "config_groups": {"group_0": {"targets": list(targets), "weights": w}}}


class Base(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="mgen_ckpt_")

    def file(self, tensors, name="model.safetensors", **kw):
        path = os.path.join(self.dir, name)
        write(path, tensors, **kw)
        return path

    def plan(self, tensors, qcfg):
        return ck.plan(qcfg, ck.read_header(self.file(tensors)))

    def refused(self, fn, *needles):
        with self.assertRaises(ck.CheckpointError) as cm:
            fn()
        for needle in needles:
            self.assertIn(needle, str(cm.exception))
        return str(cm.exception)


class Header(Base):
    def test_round_trip(self):
        path = self.file({"a": blob("I32", (2, 3), i32([1, 2, 3, 4, 5, -6])),
                          "b": blob("F32", (), struct.pack("<f", 0.25))},
                         header_extra={"__metadata__": {"format": "pt"}})
        h = ck.read_header(path)
        self.assertEqual(sorted(h), ["a", "b"])
        self.assertEqual((h["a"].dtype, h["a"].shape), ("I32", (2, 3)))
        self.assertEqual(h["a"].ints(), [1, 2, 3, 4, 5, -6])
        self.assertEqual(h["b"].float32(), 0.25)

    def raw(self, data):
        path = os.path.join(self.dir, "bad.safetensors")
        with open(path, "wb") as f:
            f.write(data)
        return lambda: ck.read_header(path)

    def header(self, obj, body=b""):
        raw = json.dumps(obj).encode()
        return self.raw(struct.pack("<Q", len(raw)) + raw + body)

    def test_hostile(self):
        self.refused(self.raw(b"abc"), "not a safetensors file")
        self.refused(self.raw(struct.pack("<Q", 1 << 40) + b"{}"), "header length")
        self.refused(self.raw(struct.pack("<Q", 3) + b"{x}"), "not JSON")
        self.refused(self.header([1, 2]), "not a JSON object")
        entry = {"dtype": "I32", "shape": [2], "data_offsets": [0, 8]}
        self.refused(self.header({"t": entry}, b"1234"), "data_offsets", "not inside")
        self.refused(self.header({"t": dict(entry, dtype="Q7")}, bytes(8)), "'Q7'")
        self.refused(self.header({"t": dict(entry, shape=[3])}, bytes(12)),
                     "8 bytes for I32 [3] (12 bytes)")
        self.refused(self.header({"t": dict(entry, shape=[-2])}, bytes(8)), "shape")
        self.refused(self.header({"t": dict(entry, shape=["2"])}, bytes(8)), "shape")
        self.refused(self.header({"t": dict(entry, data_offsets=[4, 0])}, bytes(8)),
                     "data_offsets")
        self.refused(self.header({"t": "x"}), "not an object")
        self.refused(lambda: ck.read_header(os.path.join(self.dir, "none")), "none")

    def test_duplicate_across_shards(self):
        a = self.file({"t": blob("I32", (1,))}, "a.safetensors")
        b = self.file({"t": blob("I32", (1,))}, "b.safetensors")
        self.refused(lambda: ck.read_tensors([a, b]), "'t'", "both")


class Locate(Base):
    def test_directory_config(self):
        self.file(gptq("l", 64, 128, 128))
        cfg = {"torch_dtype": "bfloat16", "quantization_config": {"quant_method": "gptq"}}
        with open(os.path.join(self.dir, "config.json"), "w") as f:
            json.dump(cfg, f)
        files, q, model = ck.locate(self.dir)
        self.assertEqual([os.path.basename(f) for f in files], ["model.safetensors"])
        self.assertEqual(q["quant_method"], "gptq")
        self.assertEqual(model["torch_dtype"], "bfloat16")

    def test_index(self):
        # model.safetensors.index.json names the shards; other .safetensors files are not read
        self.file({"a": blob("I32", (1,))}, "model-00001-of-00002.safetensors")
        self.file({"b": blob("I32", (1,))}, "model-00002-of-00002.safetensors")
        self.file({"a": blob("I32", (1,))}, "consolidated.safetensors")  # a duplicate name
        index = os.path.join(self.dir, "model.safetensors.index.json")
        cfg = {"quant_method": "gptq"}

        def with_map(weight_map):
            with open(index, "w") as f:
                json.dump({"weight_map": weight_map}, f)
            return ck.locate(self.dir, cfg)[0]
        files = with_map({"a": "model-00001-of-00002.safetensors",
                          "b": "model-00002-of-00002.safetensors"})
        self.assertEqual(sorted(ck.read_tensors(files)), ["a", "b"])
        for bad in ("../x.safetensors", "/etc/passwd", "sub/x.safetensors", ".."):
            self.refused(lambda: with_map({"a": bad}), repr(bad))
        self.refused(lambda: with_map({"a": "gone.safetensors"}), "missing")
        self.refused(lambda: with_map({}), "no weight_map")
        os.remove(index)
        self.refused(lambda: ck.read_tensors(ck.locate(self.dir, cfg)[0]), "'a'", "both")

    def test_hf_quant_config(self):
        self.file({})
        with open(os.path.join(self.dir, "config.json"), "w") as f:
            json.dump({"torch_dtype": "float16"}, f)
        with open(os.path.join(self.dir, "hf_quant_config.json"), "w") as f:
            json.dump({"quantization": {"quant_algo": "NVFP4", "group_size": 16}}, f)
        _, q, _ = ck.locate(self.dir)
        self.assertEqual((q["quant_method"], q["quant_algo"]), ("modelopt", "NVFP4"))

    def test_single_file(self):
        path = self.file({})
        self.refused(lambda: ck.locate(path), "needs config=")
        _, q, model = ck.locate(path, {"quant_method": "awq"})
        self.assertEqual((q["quant_method"], model), ("awq", None))
        self.refused(lambda: ck.locate(path, {"torch_dtype": "float16"}), "quant_method")
        self.refused(lambda: ck.locate(os.path.join(self.dir, "missing")), "no such file")
        empty = tempfile.mkdtemp()
        self.refused(lambda: ck.locate(empty), "no .safetensors")


class Plans(Base):
    def test_gptq(self):
        t = {**gptq("m.q", 256, 512, 128, bias=True), **gptq("m.o", 384, 256, 128, g_idx=False),
             "m.embed.weight": blob("F16", (4, 8))}
        plans = self.plan(t, {"quant_method": "gptq", "bits": 4, "group_size": 128,
                              "desc_act": False, "sym": True})
        self.assertEqual([(p.prefix, p.n, p.k, p.wfmt, p.group, p.options["zeros"])
                          for p in plans],
                         [("m.o", 384, 256, "u4b8", 128, "auto"),
                          ("m.q", 256, 512, "u4b8", 128, "auto")])
        self.assertEqual(plans[1].names["bias"], "m.q.bias")
        self.assertIsNone(plans[0].names["g_idx"])
        asym = self.plan(gptq("m.q", 256, 512, 32), {"quant_method": "gptq", "group_size": 32,
                                                     "sym": False, "checkpoint_format": "gptq"})
        self.assertEqual((asym[0].wfmt, asym[0].group, asym[0].options["zeros"]),
                         ("u4", 32, "minus_one"))
        ch = self.plan(gptq("m.q", 64, 256, -1), {"quant_method": "gptq", "group_size": -1,
                                                  "checkpoint_format": "gptq_v2"})
        self.assertEqual((ch[0].group, ch[0].options["zeros"]), (0, "exact"))
        v2 = self.plan(gptq("m.q", 64, 256, 128), {"quant_method": "gptq", "sym": False,
                                                   "format": "gptq_v2"})  # GPTQModel's key
        self.assertEqual(v2[0].options["zeros"], "exact")
        self.refused(lambda: self.plan(gptq("m.q", 64, 256, 128), {"quant_method": "gptq",
                                                                   "format": "marlin"}),
                     "'marlin'")

    def test_gptq_zeros(self):
        self.assertEqual(ck.gptq_zeros(True, None), "auto")
        self.assertEqual(ck.gptq_zeros(False, None), "minus_one")  # AUTO is refused for u4
        self.assertEqual(ck.gptq_zeros(False, "gptq_v2"), "exact")
        self.refused(lambda: ck.gptq_zeros(True, "marlin"), "'marlin'")

    def test_gptq_refusals(self):
        cfg = {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False}
        self.refused(lambda: self.plan(gptq("m.q", 64, 128, 128), dict(cfg, bits=8)),
                     "layer 'm.q'", "bits 8")
        t = gptq("m.q", 64, 256, 128)
        t["m.q.g_idx"] = blob("I32", (256,), i32([(i + 1) % 2 for i in range(256)]))
        self.refused(lambda: self.plan(t, dict(cfg, desc_act=True)), "layer 'm.q'",
                     "act order", "g_idx[0]")
        self.refused(lambda: self.plan(gptq("m.q", 64, 256, 128, g_idx=False),
                                       dict(cfg, desc_act=True)), "layer 'm.q'", "no g_idx")
        # desc_act true with the identity order loads
        self.assertEqual(len(self.plan(gptq("m.q", 64, 256, 128), dict(cfg, desc_act=True))),
                         1)
        t = gptq("m.q", 64, 256, 128, scales="I32")
        self.refused(lambda: self.plan(t, cfg), "layer 'm.q'", "scales: dtype I32")
        t = gptq("m.q", 64, 256, 128)
        t["m.q.scales"] = blob("F16", (64, 2))  # transposed
        self.refused(lambda: self.plan(t, cfg), "layer 'm.q'",
                     "shape [64, 2]; expected [2, 64]")
        t = gptq("m.q", 64, 256, 128)
        del t["m.q.scales"]
        self.refused(lambda: self.plan(t, cfg), "layer 'm.q'", "scales: missing")
        t = gptq("m.q", 64, 256, 128)
        t["m.q.qweight"] = blob("I32", (32, 64, 1))
        self.refused(lambda: self.plan(t, cfg), "layer 'm.q'", "qweight")
        self.refused(lambda: self.plan(gptq("m.q", 64, 256, 128), dict(cfg, group_size=96)),
                     "layer 'm.q'", "not a multiple of group_size 96")
        self.refused(lambda: self.plan(gptq("m.q", 64, 256, 128), dict(cfg, group_size="x")),
                     "group_size 'x'")
        t = gptq("m.q", 64, 256, 128, bias=True)
        t["m.q.bias"] = blob("F16", (65,))
        self.refused(lambda: self.plan(t, cfg), "layer 'm.q'", "bias")
        self.refused(lambda: self.plan(gptq("m.q", 64, 256, 128),
                                       dict(cfg, checkpoint_format="marlin")), "'marlin'")

    def test_unknown_method(self):
        self.refused(lambda: self.plan(gptq("m.q", 64, 128, 128), {"quant_method": "bnb"}),
                     "'bnb'", "not one of")
        self.refused(lambda: self.plan({"m.w.weight": blob("F16", (2, 2))},
                                       {"quant_method": "gptq"}), "no gptq quantized")

    def test_awq(self):
        t = {"m.up.qweight": blob("I32", (512, 48)), "m.up.qzeros": blob("I32", (4, 48)),
             "m.up.scales": blob("F16", (4, 384))}
        cfg = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True,
               "version": "GEMM"}
        p = self.plan(t, cfg)[0]
        self.assertEqual((p.prefix, p.n, p.k, p.wfmt, p.group), ("m.up", 384, 512, "u4", 128))
        autoawq = {"quant_method": "awq", "w_bit": 4, "q_group_size": 128, "version": "gemm"}
        self.assertEqual(self.plan(t, autoawq)[0].group, 128)
        self.refused(lambda: self.plan(t, dict(cfg, version="gemv")), "'gemv'")
        self.refused(lambda: self.plan(t, dict(cfg, zero_point=False)), "zero_point false")
        self.refused(lambda: self.plan(t, dict(cfg, bits=3)), "layer 'm.up'", "bits 3")
        del t["m.up.qzeros"]
        self.refused(lambda: self.plan(t, cfg), "layer 'm.up'", "qzeros: missing")

    def test_ct(self):
        t = {**ct("m.q", 256, 512, 128), **ct("lm_head", 64, 128, 128)}
        plans = self.plan(t, ct_config())
        self.assertEqual([(p.prefix, p.n, p.k, p.wfmt, p.group) for p in plans],
                         [("lm_head", 64, 128, "u4b8", 128), ("m.q", 256, 512, "u4b8", 128)])
        p = self.plan(ct("m.q", 384, 256, 0, sym=False),
                      ct_config(False, "channel", None))[0]
        self.assertEqual((p.wfmt, p.group), ("u4", 0))
        self.assertEqual(p.names["weight_zero_point"], "m.q.weight_zero_point")
        p = self.plan(ct("m.q", 384, 512, 32, sym=False), ct_config(False, "group", 32))[0]
        self.assertEqual((p.wfmt, p.group), ("u4", 32))

    def test_ct_targets(self):
        # an exact name before a regex before the class name
        cfg = ct_config(True, "group", 128)
        cfg["config_groups"]["g32"] = {"targets": ["re:.*\\.o$"], "weights": dict(
            cfg["config_groups"]["group_0"]["weights"], group_size=32)}
        cfg["config_groups"]["exact"] = {"targets": ["m.v"], "weights": dict(
            cfg["config_groups"]["group_0"]["weights"], group_size=64)}
        t = {**ct("m.q", 64, 256, 128), **ct("m.o", 64, 256, 32), **ct("m.v", 64, 256, 64)}
        got = {p.prefix: p.group for p in self.plan(t, cfg)}
        self.assertEqual(got, {"m.q": 128, "m.o": 32, "m.v": 64})
        self.refused(lambda: self.plan(t, ct_config(targets=("re:^x",))), "layer 'm.o'",
                     "no config_groups entry")

    def test_ct_refusals(self):
        t = ct("m.q", 64, 256, 128)
        self.refused(lambda: self.plan(t, dict(ct_config(), format="float-quantized")),
                     "layer 'm.q'", "'float-quantized'")
        self.refused(lambda: self.plan(t, ct_config(type="float")), "layer 'm.q'",
                     "type 'float'")
        self.refused(lambda: self.plan(t, ct_config(strategy="tensor")), "layer 'm.q'",
                     "'tensor'")
        self.refused(lambda: self.plan(t, ct_config(num_bits=8)), "layer 'm.q'", "num_bits 8")
        self.refused(lambda: self.plan(t, ct_config(False)), "layer 'm.q'",
                     "weight_zero_point: missing")
        self.refused(lambda: self.plan(ct("m.q", 64, 256, 128, sym=False), ct_config()),
                     "layer 'm.q'", "symmetric true")
        bad = ct("m.q", 64, 256, 128)
        bad["m.q.weight_shape"] = blob("I64", (2,), struct.pack("<2q", 64, 250))
        self.refused(lambda: self.plan(bad, ct_config()), "layer 'm.q'", "weight_shape [64, 250]")
        bad = ct("m.q", 64, 256, 128)
        bad["m.q.weight_g_idx"] = blob("I32", (256,), i32([(255 - i) // 128 for i in range(256)]))
        self.refused(lambda: self.plan(bad, ct_config(actorder="group")), "layer 'm.q'",
                     "act order")

    def test_nvfp4(self):
        t = {"m.q.weight": blob("U8", (256, 256)), "m.q.weight_scale": blob("F8_E4M3", (256, 32)),
             "m.q.weight_scale_2": blob("F32", (), struct.pack("<f", 0.5)),
             "m.q.input_scale": blob("F32", (1,)), "m.e.weight": blob("BF16", (8, 8))}
        cfg = {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16}
        p = self.plan(t, cfg)[0]
        self.assertEqual((p.prefix, p.n, p.k, p.wfmt, p.group, p.options["global_scale"]),
                         ("m.q", 256, 512, "fe2m1", 16, 0.5))
        self.refused(lambda: self.plan(t, dict(cfg, quant_algo="FP8")), "'FP8'")
        nested = {"quant_method": "modelopt", "quantization": {"quant_algo": "NVFP4"}}
        self.assertEqual(len(self.plan(t, nested)), 1)
        t["m.q.weight_scale"] = blob("F8_E4M3", (256, 16))
        self.refused(lambda: self.plan(t, cfg), "layer 'm.q'", "weight_scale")
        t["m.q.weight_scale"] = blob("F8_E4M3", (256, 32))
        t["m.q.weight_scale_2"] = blob("F32", (2,))
        self.refused(lambda: self.plan(t, cfg), "layer 'm.q'", "weight_scale_2")

    def test_mxfp4(self):
        t = {"m.experts.up_blocks": blob("U8", (3, 384, 8, 16)),
             "m.experts.up_scales": blob("U8", (3, 384, 8)),
             "m.experts.up_bias": blob("BF16", (3, 384)),
             "m.proj_blocks": blob("U8", (256, 16, 16)), "m.proj_scales": blob("U8", (256, 16))}
        plans = self.plan(t, {"quant_method": "mxfp4"})
        self.assertEqual([(p.prefix, p.n, p.k, p.expert) for p in plans],
                         [("m.experts.up.0", 384, 256, 0), ("m.experts.up.1", 384, 256, 1),
                          ("m.experts.up.2", 384, 256, 2), ("m.proj", 256, 512, None)])
        t["m.experts.up_scales"] = blob("U8", (2, 384, 8))
        self.refused(lambda: self.plan(t, {"quant_method": "mxfp4"}), "layer 'm.experts.up'",
                     "3 experts")
        t["m.experts.up_scales"] = blob("U8", (3, 384, 8))
        t["m.proj_scales"] = blob("F16", (256, 16))
        self.refused(lambda: self.plan(t, {"quant_method": "mxfp4"}), "layer 'm.proj'",
                     "scales: dtype F16")

    def test_act_of(self):
        t = ck.read_header(self.file(gptq("m.q", 64, 128, 128, scales="BF16")))
        p = ck.plan({"quant_method": "gptq"}, t)[0]
        self.assertEqual(ck.act_of(p, t), "bf16")
        self.assertEqual(ck.act_of(p, t, {"torch_dtype": "float16"}), "f16")
        t = ck.read_header(self.file(gptq("m.q", 64, 128, 128, scales="F32")))
        self.assertEqual(ck.act_of(ck.plan({"quant_method": "gptq"}, t)[0], t), "f16")


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
