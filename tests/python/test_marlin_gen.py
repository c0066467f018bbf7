"""test_marlin_gen.py -- the Python package's CPU tests (no GPU, no PyTorch needed): its status
and enum tables and ctypes structures against mgen.h and the C compiler (abi.c), library
loading and its errors, array description and the exceptions' contents.
Run: python3 tests/python/test_marlin_gen.py ROOT ABI_EXE   (ctest: python.marlin_gen_cpu)"""
import ctypes
import ctypes.util
import os
import re
import subprocess
import sys
import unittest

ROOT, ABI = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(ROOT, "runtime", "python"))
import marlin_gen  # noqa: E402
from marlin_gen import _lib, arrays, errors  # noqa: E402

HEADERS = [os.path.join(ROOT, "runtime", "include", "mgen", h) for h in ("mgen.h", "mgen_kernel.h")]
TEXT = "".join(open(h).read() for h in HEADERS)


def header_enum(prefix):
    return {m.group(1).lower(): int(m.group(2))
            for m in re.finditer(prefix + r"([A-Z0-9_]+) = (-?\d+)", TEXT)}


class Fake:
    """An object with a __cuda_array_interface__."""

    def __init__(self, shape, typestr, strides=None, ptr=0x10000):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "strides": strides,
                                         "data": (ptr, False), "version": 3}


class Tables(unittest.TestCase):
    def test_status(self):
        want = {int(v): n for n, v in re.findall(r"XX\((\w+), (-?\d+),", TEXT)}
        self.assertEqual(errors.STATUS, want)

    def test_enums(self):
        self.assertEqual(_lib.ACT, header_enum("MGEN_ACT_"))
        self.assertEqual(_lib.WFMT, header_enum("MGEN_WFMT_"))
        self.assertEqual(_lib.SCHEME, header_enum("MGEN_SCHEME_"))
        self.assertEqual(_lib.DTYPE, header_enum("MGEN_DTYPE_"))
        self.assertEqual(_lib.GPTQ_ZEROS, header_enum("MGEN_GPTQ_ZEROS_"))
        self.assertEqual(_lib.TUNE, header_enum("MGEN_TUNE_"))

    def test_structs(self):
        lines = subprocess.run([ABI], check=True, capture_output=True, text=True).stdout.split("\n")
        checked = 0
        for line in filter(None, lines):
            struct, field, value = line.split()
            cls = _lib.STRUCTS[struct]
            got = ctypes.sizeof(cls) if field == "-" else getattr(cls, field).offset
            self.assertEqual(got, int(value), f"{struct} {field}")
            checked += 1
        self.assertGreater(checked, 10)

    def test_signatures(self):
        # Every declared function against its prototype in the headers: the argument count
        # (ctypes would pass a wrong count silently).
        for name, args in _lib.SIGNATURES.items():
            m = re.search(r"MGEN_API mgen_status " + name + r"\(([^)]*)\)", TEXT)
            self.assertIsNotNone(m, f"{name}: no prototype in mgen.h")
            params = [p for p in m.group(1).split(",") if p.strip() not in ("", "void")]
            self.assertEqual(len(args), len(params), f"{name}: {m.group(1)}")


class Loading(unittest.TestCase):
    def test_missing(self):
        env = os.environ.pop("MGEN_LIBRARY", None)
        try:
            with self.assertRaises(marlin_gen.LibraryNotFound) as cm:
                marlin_gen.load("/nonexistent/libmgen.so")
        finally:
            if env is not None:
                os.environ["MGEN_LIBRARY"] = env
        text = str(cm.exception)
        self.assertIn("/nonexistent/libmgen.so: no such file", text)
        self.assertIn("MGEN_LIBRARY", text)

    def test_not_mgen(self):
        libm = ctypes.util.find_library("m")
        if libm is None:
            self.skipTest("no libm to load")
        with self.assertRaises(marlin_gen.LibraryNotFound) as cm:
            marlin_gen.load(libm)
        self.assertIn("not libmgen", str(cm.exception))

    def test_env_order(self):
        os.environ["MGEN_LIBRARY"] = "/from/env/libmgen.so"
        try:
            c = _lib.candidates("/from/arg/libmgen.so")
        finally:
            del os.environ["MGEN_LIBRARY"]
        self.assertEqual(c[:2], ["/from/arg/libmgen.so", "/from/env/libmgen.so"])
        self.assertTrue(c[2].endswith(os.path.join("marlin_gen", "libmgen.so")))


class Arrays(unittest.TestCase):
    def test_contiguous(self):
        a = arrays.describe(Fake((4, 8), "<f2"), "a")
        self.assertEqual((a.ptr, a.dtype, a.shape), (0x10000, "f16", (4, 8)))
        a = arrays.describe(Fake((4, 8), "<i4", strides=(32, 4)), "q")
        self.assertEqual(a.dtype, "i32")
        self.assertEqual(arrays.describe(Fake((1, 8), "<f4", strides=(999, 4))).shape, (1, 8))

    def test_refused(self):
        cases = [(Fake((4, 8), "<f2", strides=(2, 8)), "not contiguous"),
                 (Fake((4,), "<f8"), "typestr '<f8'"),
                 (object(), "neither __cuda_array_interface__ nor __dlpack__")]
        for obj, text in cases:
            with self.assertRaises(marlin_gen.ArgumentError) as cm:
                arrays.describe(obj, "x")
            self.assertIn(text, str(cm.exception))
            self.assertEqual(cm.exception.status, -1)
            self.assertIsInstance(cm.exception, ValueError)

    def test_checkpoint_tensor(self):
        from marlin_gen.api import _tensor
        t = _tensor(Fake((64, 256), "<i4"), "qweight")
        self.assertEqual((t.data, t.dtype, t.ndim, list(t.shape)), (0x10000, 2, 2, [64, 256]))
        self.assertEqual(_tensor(None, "g_idx").data, None)
        self.assertEqual(arrays.describe(Fake((64, 128), "|u1")).nbytes, 8192)
        self.assertEqual(arrays.describe(Fake((3, 5), "<f2")).nbytes, 30)
        with self.assertRaises(marlin_gen.ArgumentError):
            _tensor(Fake((2, 2, 2), "<i4"), "qweight")


class Errors(unittest.TestCase):
    def test_mapping(self):
        e = marlin_gen.MgenError(-5, "g_idx[5] = 1 ...", "mgen_import_gptq")
        self.assertEqual((e.status, e.name), (-5, "ERR_UNSUPPORTED_FORMAT"))
        self.assertEqual(str(e), "mgen_import_gptq: ERR_UNSUPPORTED_FORMAT (-5): g_idx[5] = 1 ...")
        self.assertEqual(marlin_gen.MgenError(-99, "x").name, "unknown status")


class Torch(unittest.TestCase):
    def test_ops_module(self):
        try:
            import torch  # noqa: F401
        except ImportError:
            self.skipTest("PyTorch is not installed: marlin_gen.torch_ops is not importable here")
        import marlin_gen.torch_ops  # noqa: F401  (registers marlin_gen::gemm)
        self.assertTrue(hasattr(torch.ops.marlin_gen, "gemm"))


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
