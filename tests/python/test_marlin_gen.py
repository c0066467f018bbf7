"""test_marlin_gen.py -- the Python package's CPU tests (no GPU, no PyTorch needed): its status
and enum tables and ctypes structures against mgen.h and the C compiler (abi.c), the built
libmgen.so loaded through the package (no GPU needed: creating a context may fail) with every
ctypes prototype's restype and argtypes against mgen.h's declarations, library loading and its
errors, array description, the GEMM calls' bias argument, the MoE bindings' unsorted routes and
the exceptions' contents.
Standard library only.
The format enums come from the format table: marlin_gen/_formats.py must be what
build/mgen_py_formats (runtime/python/gen_formats.c over mgen_formats.h) writes, and the scheme
of describe_weights follows the table.
marlin_gen.__version__ is the CMake project's VERSION.
Run: MGEN_LIBRARY=build/runtime/libmgen.so python3 tests/python/test_marlin_gen.py ROOT ABI_EXE
     PY_FORMATS_EXE VERSION CUDART_USER_LIB FAKE_CUDART_LIB (fake_cudart.c)
(ctest: python.marlin_gen_cpu; where the build has no loadable shared libmgen, CMake sets
MGEN_LIBRARY_UNUSABLE instead, and the built library's tests are skipped with that reason)"""
import ctypes
import ctypes.util
import os
import re
import subprocess
import sys
import unittest

ROOT, ABI, PY_FORMATS, VERSION, CUDART_USER, FAKE_CUDART = sys.argv[1:7]
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
        self.assertEqual(_lib.MOE_A_ROWS, header_enum("MGEN_MOE_A_"))

    def test_formats_generated(self):
        # _formats.py is the generator's output over this build's mgen_formats.h, byte for byte.
        want = subprocess.run([PY_FORMATS], check=True, capture_output=True, text=True).stdout
        path = os.path.join(ROOT, "runtime", "python", "marlin_gen", "_formats.py")
        with open(path) as f:
            self.assertEqual(f.read(), want, f"{path} is stale: cmake --build build --target "
                             "mgen_snapshot rewrites it")
        self.assertIn('"nvfp4": ("fe2m1", (16, )),', want)

    def test_scheme_of(self):
        # The scheme of (wfmt, group) by the table: the format's only one, else by group.
        self.assertEqual(_lib.scheme_of("u4b8", 128), "group")
        self.assertEqual(_lib.scheme_of("u4b8", 96), "group")  # the library checks the group
        self.assertEqual(_lib.scheme_of("fe2m1", 16), "nvfp4")
        self.assertEqual(_lib.scheme_of("fe2m1", 32), "mxfp4")
        self.assertIsNone(_lib.scheme_of("fe2m1", 64))
        for name, (wfmt, groups) in _lib.SCHEME_GROUPS.items():
            for g in groups:
                self.assertEqual(_lib.scheme_of(wfmt, g), name, (wfmt, g))
        # a table with a third fe2m1 scheme: the choice follows it, not a rule of today's
        saved = dict(_lib.SCHEME_GROUPS)
        try:
            _lib.SCHEME_GROUPS["toy"] = ("fe2m1", (64,))
            _lib.SCHEME_GROUPS["toy4"] = ("toy_fmt", (16,))
            self.assertEqual(_lib.scheme_of("fe2m1", 64), "toy")
            self.assertEqual(_lib.scheme_of("toy_fmt", 128), "toy4")
            self.assertEqual(_lib.scheme_of("fe2m1", 16), "nvfp4")
        finally:
            _lib.SCHEME_GROUPS.clear()
            _lib.SCHEME_GROUPS.update(saved)

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
        # _lib.SIGNATURES' argument types against the prototypes in mgen.h, without the library
        # (Library.test_prototypes checks what load() declares, return types too).
        header = header_functions()
        for name, args in _lib.SIGNATURES.items():
            self.assertIn(name, header, f"{name}: no prototype in mgen.h")
            ret, params = header[name]
            self.assertEqual(ret, "mgen_status", f"{name} returns {ret}; SIGNATURES assumes mgen_status")
            self.assertEqual([type_name(t) for t in args], [type_name(ctype_of(p)) for p in params],
                             f"{name}({', '.join(params)})")
            self.assertEqual(args, [ctype_of(p) for p in params], name)


# ---------------------------------------------------------------- prototypes against mgen.h
def header_functions():
    """{name: (return type, [parameter types])} of every MGEN_API function, types as C text."""
    code = re.sub(r"/\*.*?\*/|//[^\n]*", " ", TEXT, flags=re.S)
    out = {}
    for ret, name, params in re.findall(r"MGEN_API\s+([^;(]*?)\s*\b(mgen_\w+)\s*\(([^)]*)\)\s*;",
                                        code):
        types = []
        for p in params.split(","):
            p = " ".join(p.split())
            if p in ("", "void"):
                continue
            m = re.fullmatch(r"(.*?[\s*])(\w+)", p)  # drop the parameter's name
            types.append(m.group(1).strip() if m else p)
        out[name] = (" ".join(ret.split()), types)
    return out


# typedef'd enums of the headers (passed as int: every enumerator fits one).
ENUMS = set(re.findall(r"typedef enum \w*\s*\{.*?\}\s*(\w+);", TEXT, flags=re.S))
SCALARS = {"int": ctypes.c_int, "unsigned": ctypes.c_uint, "unsigned int": ctypes.c_uint,
           "size_t": ctypes.c_size_t, "float": ctypes.c_float, "double": ctypes.c_double}


def ctype_of(c):
    """The ctypes type a C parameter or return type must be declared as: scalars and enums by
    size; char * as c_char_p; void *, device data (uint8_t *) and opaque handles (mgen_ctx,
    mgen_table) as c_void_p; the package's structures by POINTER; T ** as POINTER(T *)."""
    c = " ".join(c.replace("const", " ").replace("*", " * ").split())
    stars = c.count("*")
    base = c.replace("*", "").strip()
    if stars == 0:
        if base == "void":
            return None
        if base in ENUMS:
            return ctypes.c_int
        return SCALARS[base]  # KeyError: a type this mapping does not know (extend it)
    if stars == 1:
        if base == "char":
            return ctypes.c_char_p
        if base in _lib.STRUCTS:
            return ctypes.POINTER(_lib.STRUCTS[base])
        if base in SCALARS or base in ENUMS:
            return ctypes.POINTER(ctype_of(base))
        return ctypes.c_void_p  # void, uint8_t (device data), opaque handles
    return ctypes.POINTER(ctype_of(c.rsplit("*", 1)[0]))


def type_name(t):
    return "void" if t is None else t.__name__


class Library(unittest.TestCase):
    """The built libmgen.so, loaded by the package as users load it (MGEN_LIBRARY, set by
    CMake where libmgen is shared): a library that does not load is a failure, not a skip."""

    @classmethod
    def setUpClass(cls):
        path = os.environ.get("MGEN_LIBRARY")
        if not path:  # ctest sets one of the two
            raise unittest.SkipTest(os.environ.get("MGEN_LIBRARY_UNUSABLE",
                                                   "MGEN_LIBRARY is not set (run through ctest)"))
        cls.lib = marlin_gen.load(path)  # LibraryNotFound fails every test of the class
        if cls.lib._name != path:
            raise AssertionError(f"{path} did not load; the package fell back to {cls.lib._name}")

    def test_prototypes(self):
        # Every function the package declared (restype and argtypes), against mgen.h.
        header = header_functions()
        self.assertGreater(len(header), 20, "MGEN_API declarations read from mgen.h")
        declared = {name: fn for name, fn in vars(self.lib).items()
                    if isinstance(fn, ctypes._CFuncPtr)}
        self.assertGreaterEqual(len(declared), len(_lib.SIGNATURES))
        for name, fn in sorted(declared.items()):
            self.assertIn(name, header, f"{name}: no MGEN_API declaration in mgen.h")
            ret, params = header[name]
            self.assertIsNotNone(fn.argtypes, f"{name}: no argtypes (ctypes would not check)")
            want = [ctype_of(p) for p in params]
            self.assertEqual([type_name(t) for t in fn.argtypes], [type_name(t) for t in want],
                             f"{name}({', '.join(params)}): argtypes")
            self.assertEqual(list(fn.argtypes), want, f"{name}: argtypes")
            self.assertIs(fn.restype, ctype_of(ret),
                          f"{name}: restype {type_name(fn.restype)}, mgen.h returns {ret}")

    def test_package_calls_declared(self):
        # Every libmgen function the package calls has a prototype (else ctypes guesses int).
        package = os.path.join(ROOT, "runtime", "python", "marlin_gen")
        called = set()
        for top, _, files in os.walk(package):  # a call or a cached function (layers.py's)
            for f in files:
                if f.endswith(".py"):
                    with open(os.path.join(top, f)) as src:
                        called |= set(re.findall(r"\blib\.(mgen_\w+)\b", src.read()))
        self.assertIn("mgen_gemm", called)
        for name in sorted(called):
            self.assertIsNotNone(getattr(self.lib, name).argtypes, f"{name}: called, not declared")

    def test_describe_weights(self):
        # The scheme comes from the caller or the table; sizes from the library (no device).
        from marlin_gen.api import Context
        c = Context.__new__(Context)
        c.lib, c.ptr = self.lib, None
        cases = [("u4b8", 128, None, 0), ("fe2m1", 16, None, 1), ("fe2m1", 32, None, 2),
                 ("fe2m1", 32, "mxfp4", 2), ("u4", 128, None, 3), ("u4", 0, None, 3)]
        for wfmt, group, scheme, want in cases:
            w, qb, sb = c.describe_weights(256, 512, wfmt=wfmt, group=group, scheme=scheme)
            self.assertEqual((w.scheme, w.group, qb), (want, group, 256 * 512 // 2), (wfmt, group))
        # the e4m3 layout (W4A8): the same sizes, its enum in the description
        w, qb, sb = c.describe_weights(256, 512, layout="e4m3")
        self.assertEqual((w.layout, qb, sb), (2, 256 * 512 // 2, 4 * 256 * 2))
        with self.assertRaises(marlin_gen.ArgumentError):
            c.describe_weights(256, 512, layout="e5m2")
        # u4: 4 rows of 256 scales (2 bytes) and of 256 zero points (half a byte)
        self.assertEqual(c.describe_weights(256, 512, wfmt="u4", group=128)[2], 2048 + 512)
        with self.assertRaises(marlin_gen.MgenError) as cm:
            c.describe_weights(256, 512, wfmt="fe2m1", group=64)
        self.assertEqual(cm.exception.status, -5)
        self.assertIn("nvfp4: 16; mxfp4: 32", str(cm.exception))
        with self.assertRaises(marlin_gen.MgenError) as cm:  # a named scheme is the caller's
            c.describe_weights(256, 512, wfmt="fe2m1", group=32, scheme="nvfp4")
        self.assertEqual(cm.exception.status, -5)
        self.assertIn("mgen_weights_bytes", str(cm.exception))

    def test_gemm_a8_arguments(self):
        # gemm_a8's own checks (before any call): a8 uint8 [m, k], a_scales float32 [m] or [1],
        # c [m, n]; a context without a device, fake CUDA arrays.
        from marlin_gen.api import Context, QuantizedWeight
        c = Context.__new__(Context)
        c.lib, c.ptr = self.lib, None
        desc = c.describe_weights(256, 512, layout="e4m3")[0]
        wt = QuantizedWeight(desc, None, None)
        ok = dict(a8=Fake((3, 512), "|u1"), s=Fake((3,), "<f4"), c=Fake((3, 256), "<f2"))
        for changed in ({"a8": Fake((3, 512), "<f2")}, {"a8": Fake((3, 256), "|u1")},
                        {"s": Fake((2,), "<f4")}, {"s": Fake((3,), "<f2")},
                        {"c": Fake((3, 128), "<f2")}, {"a8": Fake((512,), "|u1")}):
            args = {**ok, **changed}
            with self.assertRaises(marlin_gen.ArgumentError, msg=str(changed)) as cm:
                c.gemm_a8(args["a8"], args["s"], wt, args["c"])
            self.assertIn("expected a8 uint8 [m, 512], a_scales float32 [m] or [1], c [m, 256]",
                          str(cm.exception))

    def test_moe_arguments(self):
        # The MoE bindings' own checks (before any launch) and the route's size (no device):
        # a context without a device, fake CUDA arrays.
        from marlin_gen.api import Context, MoeRoute
        c = Context.__new__(Context)
        c.lib, c.ptr = self.lib, None
        # m * topk + local_experts * (block_rows - 1), down to a multiple of block_rows (mgen.h)
        for m, topk, e, br in ((1, 8, 256, 16), (133, 2, 5, 16), (4096, 4, 128, 64)):
            want = (m * topk + e * (br - 1)) // br * br
            self.assertEqual(c.moe_route_rows(m, topk, e, br), want, (m, topk, e, br))
        with self.assertRaises(marlin_gen.MgenError) as cm:
            c.moe_route_rows(0, 2, 5, 16)
        self.assertEqual(errors.STATUS.get(cm.exception.status), "ERR_INVALID_ARG")
        rows = c.moe_route_rows(3, 2, 5, 16)
        ok = dict(sorted_ids=Fake((rows,), "<i4"), block_experts=Fake((rows // 16,), "<i4"),
                  num_padded=Fake((1,), "<i4"))
        refusals = [  # (topk_ids, changed buffers, the message's words)
            (Fake((3, 2), "<f4"), {}, "expected int32 [m, topk]"),
            (Fake((6,), "<i4"), {}, "expected int32 [m, topk]"),
            (Fake((3, 2), "<i4"), {"sorted_ids": Fake((rows - 1,), "<i4")}, "sorted_ids"),
            (Fake((3, 2), "<i4"), {"block_experts": Fake((rows // 16,), "<f4")}, "block_experts"),
            (Fake((3, 2), "<i4"), {"num_padded": Fake((2,), "<i4")}, "num_padded"),
            (Fake((3, 2), "<i4"), {"expert_map": Fake((4,), "<i4")}, "expert_map"),
        ]
        for ids, changed, words in refusals:
            args = {**ok, **changed}
            with self.assertRaises(marlin_gen.ArgumentError, msg=words) as cm:
                c.moe_route(ids, 5, 16, args["sorted_ids"], args["block_experts"],
                            args["num_padded"], expert_map=args.get("expert_map"))
            self.assertIn(words, str(cm.exception))
        # moe_gemm / moe_sum: shapes against the route (m 3, topk 2) and the weights
        desc, qb, sb = c.describe_weights(128, 256)
        route = MoeRoute(_lib.MoeRoute(m=3, topk=2, num_experts=5, local_experts=5,
                                       block_rows=16), {})
        wt = c._weight(desc, Fake((5 * qb,), "|u1"), Fake((5 * sb,), "|u1"))
        cases = [  # (a, c, a_per_pair, topk_weights, the message's words)
            (Fake((3, 256), "<f2"), Fake((6, 128), "<f2"), 1, None, "expected a [6, 256]"),
            (Fake((6, 256), "<f2"), Fake((6, 128), "<f2"), 0, None, "expected a [3, 256]"),
            (Fake((3, 256), "<f2"), Fake((3, 128), "<f2"), 0, None, "c [6, 128]"),
            (Fake((3, 256), "<f2"), Fake((6, 128), "<V2"), 0, None, "of one type"),
            (Fake((3, 256), "<f2"), Fake((6, 128), "<f2"), 0, Fake((3, 2), "<f2"), "float32"),
            (Fake((3, 256), "<f2"), Fake((6, 128), "<f2"), 0, Fake((5,), "<f4"), "6 float32"),
        ]
        for a, cc, per_pair, tw, words in cases:
            with self.assertRaises(marlin_gen.ArgumentError, msg=words) as cm:
                c.moe_gemm(route, a, wt, cc, per_pair, tw)
            self.assertIn(words, str(cm.exception))
        small = c._weight(desc, Fake((4 * qb,), "|u1"), Fake((5 * sb,), "|u1"))
        with self.assertRaises(marlin_gen.ArgumentError) as cm:  # 4 experts' bytes for 5
            c.moe_gemm(route, Fake((3, 256), "<f2"), small, Fake((6, 128), "<f2"), 0)
        self.assertIn("for 5 experts", str(cm.exception))
        with self.assertRaises(marlin_gen.ArgumentError) as cm:
            c.moe_sum(route, Fake((6, 128), "<f2"), Fake((6, 128), "<f2"))
        self.assertIn("out [3, n]", str(cm.exception))
        # A in the route's order: [route.rows, k] for moe_gemm(a_sorted=True) and moe_permute
        rows = c.moe_route_rows(3, 2, 5, 16)
        sorted_route = MoeRoute(route.desc, {}, rows)
        with self.assertRaises(marlin_gen.ArgumentError) as cm:
            c.moe_gemm(sorted_route, Fake((6, 256), "<f2"), wt, Fake((6, 128), "<f2"), 1,
                       a_sorted=True)
        self.assertIn(f"expected a [{rows}, 256]", str(cm.exception))
        permutes = [  # (a, a_per_pair, out, the message's words)
            (Fake((6, 256), "<f2"), False, Fake((rows, 256), "<f2"), "a [3, k]"),
            (Fake((3, 256), "<f2"), False, Fake((rows - 1, 256), "<f2"), f"out [{rows}, k]"),
            (Fake((3, 256), "<f2"), False, Fake((rows, 128), "<f2"), f"out [{rows}, k]"),
            (Fake((6, 256), "<i4"), True, Fake((rows, 256), "<i4"), "16-bit"),
        ]
        for a, per_pair, out, words in permutes:
            with self.assertRaises(marlin_gen.ArgumentError, msg=words) as cm:
                c.moe_permute(sorted_route, a, per_pair, out)
            self.assertIn(words, str(cm.exception))
        # An unsorted route has no list: the library's capacity is 0 (the sorted one's 80);
        # a sorted route without its buffers, or an unsorted one with them, is refused
        self.assertEqual(rows, 80)
        self.assertEqual(c.moe_route_rows(3, 2, 5, 16, unsorted=True), 0)
        with self.assertRaises(marlin_gen.ArgumentError) as cm:
            c.moe_route(Fake((3, 2), "<i4"), 5, 16, ok["sorted_ids"], None, ok["num_padded"])
        self.assertIn("or pass unsorted=True", str(cm.exception))
        with self.assertRaises(marlin_gen.ArgumentError) as cm:
            c.moe_route(Fake((3, 2), "<i4"), 5, 16, num_padded=ok["num_padded"], unsorted=True)
        self.assertIn("num_padded: an unsorted route has no sorted list", str(cm.exception))

    def test_calls(self):
        # Calls that need no device; a context fails to be created without one, and says why.
        self.assertEqual(self.lib.mgen_status_str(-5), b"unsupported format, activation or group size")
        table = self.lib.mgen_builtin_table()
        self.assertTrue(table)
        ctx = ctypes.c_void_p()
        status = self.lib.mgen_ctx_create(ctypes.byref(ctx), table, None)
        if status == 0:
            self.lib.mgen_ctx_destroy(ctx)
        else:
            self.assertIn(errors.STATUS.get(status), ("ERR_CUDA", "ERR_INVALID_ARG"),
                          self.lib.mgen_status_str(status))
            self.assertFalse(ctx.value, "*out is untouched on failure")
            # The cause, with no log callback: the thread's mgen_ctx_last_error(NULL) ...
            why = self.lib.mgen_ctx_last_error(None).decode()
            prefix = f"mgen_ctx_create: {self.lib.mgen_status_str(status).decode()}: "
            self.assertTrue(why.startswith(prefix) and len(why) > len(prefix), why)
            if status == -8:
                self.assertIn("cudaError", why, "the CUDA error's name")
            # ... and Context()'s exception carries it.
            from marlin_gen.api import Context
            with self.assertRaises(marlin_gen.MgenError) as cm:
                Context(library=self.lib._name)
            self.assertEqual(cm.exception.status, status)
            self.assertEqual(cm.exception.message, why[len(prefix):])
        # A create refused on its arguments says which, there too.
        self.assertEqual(self.lib.mgen_ctx_create(None, table, None), -2)
        self.assertEqual(self.lib.mgen_ctx_last_error(None),
                         b"mgen_ctx_create: " + self.lib.mgen_status_str(-2) + b": out is NULL")


class StubLib:
    """A libmgen whose mgen_ctx_create fails as it does without a usable driver."""

    def __init__(self, last_error):
        self.last_error, self.asked = last_error, []

    def mgen_builtin_table(self):
        return 0x1234

    def mgen_ctx_create(self, out, table, opts):
        return -8

    def mgen_ctx_last_error(self, ctx):
        self.asked.append(ctx)
        return self.last_error

    def mgen_status_str(self, status):
        return b"CUDA error"


class CreateError(unittest.TestCase):
    # Context()'s error on a failed create is mgen_ctx_last_error(NULL), read through ctypes.
    def context_error(self, last_error):
        from marlin_gen import api
        stub, load = StubLib(last_error), _lib.load
        _lib.load = lambda path=None: stub
        try:
            with self.assertRaises(marlin_gen.MgenError) as cm:
                api.Context()
        finally:
            _lib.load = load
        self.assertEqual(stub.asked, [None], "mgen_ctx_last_error(NULL), once")
        self.assertEqual(cm.exception.status, -8)
        return str(cm.exception)

    def test_cause(self):
        cause = ("no NVIDIA driver installed (libcuda.so.1: cannot open shared object file) "
                 "(cudaGetDevice: cudaErrorInsufficientDriver)")
        text = self.context_error(f"mgen_ctx_create: CUDA error: {cause}".encode())
        self.assertEqual(text, f"mgen_ctx_create: ERR_CUDA (-8): {cause}")

    def test_older_library(self):
        # A library without the message: the status's text, not "no context ...".
        text = self.context_error(b"no context (mgen_ctx is NULL)")
        self.assertEqual(text, "mgen_ctx_create: ERR_CUDA (-8): CUDA error")

    def test_prototype(self):
        # load() declares it as mgen.h has it (None passes as NULL, the text comes back as
        # bytes), with no library built: ctypes.CDLL gives a stand-in holding the declarations.
        class StubCDLL:
            def __init__(self, name):
                self._name, self.fns = name, {}

            def __getattr__(self, name):
                if not name.startswith("mgen_"):
                    raise AttributeError(name)
                return self.fns.setdefault(name, type("Fn", (), {})())

        cdll = _lib.ctypes.CDLL
        _lib.ctypes.CDLL = StubCDLL
        try:
            lib = _lib.load("libmgen-stub.so")
        finally:
            _lib.ctypes.CDLL = cdll
        ret, params = header_functions()["mgen_ctx_last_error"]
        fn = lib.fns["mgen_ctx_last_error"]
        self.assertEqual(fn.argtypes, [ctype_of(p) for p in params])
        self.assertEqual(fn.argtypes, [ctypes.c_void_p])
        self.assertIs(fn.restype, ctype_of(ret))
        self.assertIs(fn.restype, ctypes.c_char_p)


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


class CudartFromSysPath(unittest.TestCase):
    # A libmgen.so whose libcudart the loader cannot find is tried again once the one of an
    # `nvidia` package on sys.path is loaded; a relative sys.path entry is never searched.
    def load(self, first_error):
        import tempfile
        calls = []

        class StubCDLL:
            def __init__(self, name):
                calls.append(name)
                if name == "libmgen-stub.so" and calls.count(name) == 1 and first_error:
                    raise OSError(first_error)
                if name != "libmgen-stub.so" and not name.endswith("libcudart.so.13"):
                    raise OSError(f"{name}: stub: not here")  # the other candidates
                self._name = name

            def __getattr__(self, name):
                if not name.startswith("mgen_"):
                    raise AttributeError(name)
                return type("Fn", (), {})()

        cwd, path, cdll = os.getcwd(), list(sys.path), _lib.ctypes.CDLL
        with tempfile.TemporaryDirectory() as tmp:
            for site in ("rel", "abs"):
                lib_dir = os.path.join(tmp, site, "nvidia", "cu13", "lib")
                os.makedirs(lib_dir)
                open(os.path.join(lib_dir, "libcudart.so.13"), "w").close()
            os.chdir(tmp)
            sys.path[:0] = ["rel", os.path.join(tmp, "abs")]
            _lib.ctypes.CDLL = StubCDLL
            try:
                lib = _lib.load("libmgen-stub.so")
            except marlin_gen.LibraryNotFound as e:
                lib = e
            finally:
                _lib.ctypes.CDLL, sys.path[:] = cdll, path
                os.chdir(cwd)
        return lib, [os.path.relpath(c, tmp) if os.path.isabs(c) else c for c in calls]

    def test_retried(self):
        lib, calls = self.load("libcudart.so.13: cannot open shared object file: No such file")
        self.assertEqual(lib._name, "libmgen-stub.so")
        self.assertEqual(calls, ["libmgen-stub.so", os.path.join("abs", "nvidia", "cu13", "lib",
                                                                 "libcudart.so.13"),
                                 "libmgen-stub.so"])

    def test_other_error(self):
        # another failure (not libcudart's): no search, no retry, the error reported
        lib, calls = self.load("libstdc++.so.6: cannot open shared object file: No such file")
        self.assertIsInstance(lib, marlin_gen.LibraryNotFound)
        self.assertIn("libmgen-stub.so: libstdc++.so.6", str(lib))
        self.assertEqual([c for c in calls if "libcudart" in c or c == "libmgen-stub.so"],
                         ["libmgen-stub.so"])

    def test_no_error(self):
        lib, calls = self.load(None)
        self.assertEqual(calls, ["libmgen-stub.so"])

    @unittest.skipIf("MGEN_LIBRARY_UNUSABLE" in os.environ,
                     "the stand-in libraries are instrumented too (MGEN_LIBRARY_UNUSABLE)")
    def test_real_load(self):
        # Loaded for real: a library needing libcudart.so.99 fails to load until the one in
        # SITE/nvidia/cu99/lib, SITE on sys.path, is; then it finds it by its SONAME.
        site = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(FAKE_CUDART))))
        with self.assertRaisesRegex(OSError, r"^libcudart\.so\.99: "):
            _lib._open(CUDART_USER)  # sys.path without SITE: not found
        path = list(sys.path)
        sys.path.append(site)
        try:
            lib = _lib._open(CUDART_USER)
        finally:
            sys.path[:] = path
        self.assertEqual(lib.mgen_fake_cudart_user(), 42)


class FakeParameter:
    """A CUDA tensor that requires grad, as PyTorch exports one: __cuda_array_interface__ raises
    RuntimeError; __dlpack__ raises too unless detached (detach() shares the memory)."""
    REFUSED = ("Can't get __cuda_array_interface__ on Variable that requires grad. If gradients "
               "aren't required, use var.detach() to get Variable that doesn't require grad.")

    def __init__(self, shape, ptr=0x20000, requires_grad=True):
        self.shape, self.ptr, self.requires_grad = shape, ptr, requires_grad
        self.dims = (ctypes.c_int64 * len(shape))(*shape)
        self.tensor = arrays._DLTensor(data=ptr, ndim=len(shape), shape=self.dims)
        self.tensor.device.device_type = 2  # kDLCUDA
        self.tensor.dtype.code, self.tensor.dtype.bits, self.tensor.dtype.lanes = 2, 16, 1

    @property
    def __cuda_array_interface__(self):
        raise RuntimeError(self.REFUSED)

    def __dlpack__(self, stream=None):
        if self.requires_grad:
            raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p,
                                                       ctypes.c_void_p]
        return new(ctypes.addressof(self.tensor), b"dltensor", None)

    def detach(self):
        return FakeParameter(self.shape, self.ptr, requires_grad=False)


class Arrays(unittest.TestCase):
    def test_requires_grad(self):
        # A tensor that requires grad (nn.Parameter) is described through DLPack, detached.
        a = arrays.describe(FakeParameter((64, 128)), "scales")
        self.assertEqual((a.ptr, a.dtype, a.shape), (0x20000, "f16", (64, 128)))
        b = arrays.describe(FakeParameter((8, 16), ptr=0x30000, requires_grad=False), "a")
        self.assertEqual((b.ptr, b.dtype, b.shape), (0x30000, "f16", (8, 16)))

        class NoDLPack:  # the interface refused and nothing else: the refusal, named
            @property
            def __cuda_array_interface__(self):
                raise RuntimeError(FakeParameter.REFUSED)
        with self.assertRaises(marlin_gen.ArgumentError) as cm:
            arrays.describe(NoDLPack(), "w")
        self.assertIn("w: __cuda_array_interface__: Can't get", str(cm.exception))

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


class GemmBias(unittest.TestCase):
    """The GEMM calls' bias= (mgen_weights.d_bias) on a library stand-in that records the
    d_bias of the description each call is given: the bias reaches that call's description and
    no other (the weights' own stays NULL), and a wrong one is refused before any call."""

    def setUp(self):
        from marlin_gen.api import Context, MoeRoute, QuantizedWeight
        self.seen = []

        def call(*args):  # an mgen_weights passed by reference (ctypes.byref: ._obj)
            self.seen.append(next(a._obj.d_bias for a in args
                                  if isinstance(getattr(a, "_obj", None), _lib.Weights)))
            return 0

        lib = type("Lib", (), {"mgen_gemm": staticmethod(call), "mgen_gemm_a8": staticmethod(call),
                               "mgen_moe_gemm": staticmethod(call),
                               "mgen_weights_bytes": staticmethod(lambda w, qb, sb: 0)})
        self.ctx = Context.__new__(Context)
        self.ctx.lib, self.ctx.ptr = lib, None
        self.wt = QuantizedWeight(_lib.Weights(n=256, k=512), Fake((16,), "|u1"),
                                  Fake((16,), "|u1"))
        self.route = MoeRoute(_lib.MoeRoute(m=3, topk=2, num_experts=5, local_experts=5,
                                            block_rows=16), {})

    def gemm(self, bias, dtype="<f2"):
        self.ctx.gemm(Fake((3, 512), dtype), self.wt, Fake((3, 256), dtype), bias=bias)

    def test_passed_for_the_call(self):
        self.gemm(Fake((256,), "<f2", ptr=0x20000))
        self.gemm(None)
        self.ctx.gemm_a8(Fake((3, 512), "|u1"), Fake((3,), "<f4"), self.wt, Fake((3, 256), "<V2"),
                         bias=Fake((256,), "<V2", ptr=0x30000))
        self.ctx.moe_gemm(self.route, Fake((3, 512), "<f2"), self.wt, Fake((6, 256), "<f2"), 0,
                          bias=Fake((5, 256), "<f2", ptr=0x40000))
        self.assertEqual(self.seen, [0x20000, None, 0x30000, 0x40000])
        self.assertIsNone(self.wt.desc.d_bias, "a call's bias stays out of the weights'")
        # without bias=, the description's own (as marlin_gen.torch.Experts sets it)
        self.wt.desc.d_bias = 0x50000
        self.ctx.moe_gemm(self.route, Fake((3, 512), "<f2"), self.wt, Fake((6, 256), "<f2"), 0)
        self.assertEqual(self.seen[-1], 0x50000)

    def test_refused(self):
        cases = [  # (bias, the message's words)
            (Fake((256,), "<V2"), "bias bf16 [256]: expected f16 [256]"),
            (Fake((255,), "<f2"), "expected f16 [256]"),
            (Fake((1, 256), "<f2"), "expected f16 [256]"),
            (Fake((256,), "<f2", ptr=0x20002), "not 16-byte aligned"),
        ]
        for bias, words in cases:
            with self.assertRaises(marlin_gen.ArgumentError, msg=words) as cm:
                self.gemm(bias)
            self.assertIn(words, str(cm.exception))
        with self.assertRaises(marlin_gen.ArgumentError) as cm:  # c's type, not a8's
            self.ctx.gemm_a8(Fake((3, 512), "|u1"), Fake((3,), "<f4"), self.wt,
                             Fake((3, 256), "<V2"), bias=Fake((256,), "<f2"))
        self.assertIn("expected bf16 [256]", str(cm.exception))
        with self.assertRaises(marlin_gen.ArgumentError) as cm:  # a row per local expert
            self.ctx.moe_gemm(self.route, Fake((3, 512), "<f2"), self.wt, Fake((6, 256), "<f2"),
                              0, bias=Fake((256,), "<f2"))
        self.assertIn("expected f16 [5, 256]", str(cm.exception))
        self.assertEqual(self.seen, [], "refused before the library")


class UnsortedRoute(unittest.TestCase):
    """Context's unsorted MoE routes (mgen_moe_route.unsorted) on a library stand-in that
    records the route each call is given: moe_unsorted_pays asks for the sizes and returns the
    library's verdict and block_rows; moe_route(unsorted=True) hands mgen_moe_route_tokens a
    route with unsorted 1 and no list; moe_gemm passes it on; moe_permute, and moe_gemm with
    a_sorted, refuse it before the library."""

    def setUp(self):
        from marlin_gen.api import Context, QuantizedWeight
        self.calls = []

        def record(name, ret=0):
            def call(*args):
                route = next((a._obj for a in args
                              if isinstance(getattr(a, "_obj", None), _lib.MoeRoute)), None)
                self.calls.append((name, _lib.MoeRoute.from_buffer_copy(route), args))
                return ret
            return staticmethod(call)

        def pays(ctx, act, r, w, out_pays, out_rows):
            self.calls.append(("mgen_moe_unsorted_pays", _lib.MoeRoute.from_buffer_copy(r._obj),
                               ()))
            out_pays._obj.value, out_rows._obj.value = 1, 8
            return 0

        def rows(r, out):
            out._obj.value = 0 if r._obj.unsorted else 48
            return 0

        lib = type("Lib", (), {"mgen_moe_unsorted_pays": staticmethod(pays),
                               "mgen_moe_route_rows": staticmethod(rows),
                               "mgen_moe_route_tokens": record("mgen_moe_route_tokens"),
                               "mgen_moe_gemm": record("mgen_moe_gemm"),
                               "mgen_moe_permute": record("mgen_moe_permute"),
                               "mgen_weights_bytes": staticmethod(lambda w, qb, sb: 0)})
        self.ctx = Context.__new__(Context)
        self.ctx.lib, self.ctx.ptr = lib, None
        self.wt = QuantizedWeight(_lib.Weights(n=256, k=512), Fake((16,), "|u1"),
                                  Fake((16,), "|u1"))

    def test_pays(self):
        self.assertEqual(self.ctx.moe_unsorted_pays("f16", 1, 8, 256, self.wt, 64), (True, 8))
        name, r, _ = self.calls[-1]
        self.assertEqual((name, r.m, r.topk, r.num_experts, r.local_experts),
                         ("mgen_moe_unsorted_pays", 1, 8, 256, 64))

    def test_route_and_gemm(self):
        ids, emap = Fake((3, 2), "<i4", ptr=0x20000), Fake((5,), "<i4", ptr=0x30000)
        route = self.ctx.moe_route(ids, 5, 8, expert_map=emap, local_experts=4, unsorted=True)
        name, r, _ = self.calls[-1]
        self.assertEqual(name, "mgen_moe_route_tokens")
        self.assertEqual((r.unsorted, r.block_rows, r.d_topk_ids, r.d_expert_map),
                         (1, 8, 0x20000, 0x30000))
        self.assertEqual((r.d_sorted_ids, r.d_block_experts, r.d_num_padded), (None, None, None))
        self.assertTrue(route.unsorted)
        self.assertEqual(route.rows, 0)
        self.ctx.moe_gemm(route, Fake((3, 512), "<f2"), self.wt, Fake((6, 256), "<f2"), False)
        name, r, args = self.calls[-1]
        self.assertEqual((name, r.unsorted, args[3]), ("mgen_moe_gemm", 1, _lib.MOE_A_ROWS["tokens"]))
        count = len(self.calls)
        with self.assertRaises(marlin_gen.ArgumentError) as cm:
            self.ctx.moe_permute(route, Fake((3, 512), "<f2"), False, Fake((8, 512), "<f2"))
        self.assertIn("no order to permute A into", str(cm.exception))
        with self.assertRaises(marlin_gen.ArgumentError) as cm:
            self.ctx.moe_gemm(route, Fake((3, 512), "<f2"), self.wt, Fake((6, 256), "<f2"), False,
                              a_sorted=True)
        self.assertIn("a_sorted=True on an unsorted route", str(cm.exception))
        self.assertEqual(len(self.calls), count, "refused before the library")
        # a sorted route from the same call without unsorted: the flag stays 0
        buf = Fake((48,), "<i4")
        sorted_route = self.ctx.moe_route(ids, 5, 8, buf, Fake((6,), "<i4"), Fake((1,), "<i4"))
        self.assertEqual(self.calls[-1][1].unsorted, 0)
        self.assertFalse(sorted_route.unsorted)


class Version(unittest.TestCase):
    def test_version(self):
        # the CMake project's version (project(marlin_gen VERSION ...)) is the one source
        self.assertEqual(marlin_gen.__version__, VERSION)


class Errors(unittest.TestCase):
    def test_mapping(self):
        e = marlin_gen.MgenError(-5, "g_idx[5] = 1 ...", "mgen_import_gptq")
        self.assertEqual((e.status, e.name), (-5, "ERR_UNSUPPORTED_FORMAT"))
        self.assertEqual(str(e), "mgen_import_gptq: ERR_UNSUPPORTED_FORMAT (-5): g_idx[5] = 1 ...")
        self.assertEqual(marlin_gen.MgenError(-99, "x").name, "unknown status")


class Torch(unittest.TestCase):
    """The ops' registration (_op.py), what a CPU-only PyTorch can check: no GPU is needed to
    register, refuse a CPU tensor, trace the fakes and compile a graph holding the op."""

    def setUp(self):
        try:
            import torch  # noqa: F401
        except ImportError:
            self.skipTest("PyTorch is not installed: marlin_gen.torch_ops is not importable here")

    def test_ops_module(self):
        import torch
        import marlin_gen.torch  # noqa: F401  (registers marlin_gen::gemm, ::linear, ::fused_moe)
        for name in ("gemm", "linear", "fused_moe", "quantize_act", "gemm_a8"):
            op = getattr(torch.ops.marlin_gen, name).default
            self.assertEqual(op._schema.name, "marlin_gen::" + name)
            # a Library kernel, not custom_op's wrapper (its host cost: _op.py)
            self.assertFalse(torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "Autograd"),
                             name)
            self.assertTrue(torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "CUDA"))

    def test_cpu_tensor_refused(self):
        import torch
        from marlin_gen import torch_ops
        a = torch.zeros(3, 256, dtype=torch.float16)
        q = torch.zeros(16, dtype=torch.uint8)
        with self.assertRaisesRegex(marlin_gen.ArgumentError, "expected a CUDA"):
            torch_ops.gemm(a, q, q, 128, 256, 128, "u4b8", "group")
        with self.assertRaisesRegex(marlin_gen.ArgumentError, "expected a CUDA float16"):
            torch_ops.quantize_act(a)
        a8 = torch.zeros(3, 256, dtype=torch.float8_e4m3fn)
        with self.assertRaisesRegex(marlin_gen.ArgumentError, "expected a CUDA float8_e4m3fn"):
            torch_ops.gemm_a8(a8, torch.ones(3), q, q, 128, 256, 128, "u4b8", "group",
                              torch.float16)

    def test_fakes_and_compile(self):
        import torch
        from torch._subclasses.fake_tensor import FakeTensorMode
        from marlin_gen import layers, torch_ops
        with FakeTensorMode():
            a = torch.empty(5, 256, dtype=torch.bfloat16, device="cuda")
            q = torch.empty(16, dtype=torch.uint8, device="cuda")
            y = torch_ops.gemm(a, q, q, 192, 256, 128, "u4b8", "group")
            self.assertEqual((tuple(y.shape), y.dtype, y.device.type),
                             ((5, 192), torch.bfloat16, "cuda"))
            self.assertEqual(tuple(layers._linear_op(a, 0, 77).shape), (5, 77))
            q8, s8 = torch_ops.quantize_act(a)
            self.assertEqual((tuple(q8.shape), q8.dtype, tuple(s8.shape), s8.dtype),
                             ((5, 256), torch.float8_e4m3fn, (5,), torch.float32))
            y8 = torch_ops.gemm_a8(q8, s8, q, q, 192, 256, 128, "u4b8", "group", torch.bfloat16)
            self.assertEqual((tuple(y8.shape), y8.dtype), ((5, 192), torch.bfloat16))
        graphs = []

        def backend(gm, inputs):
            graphs.append(str(gm.graph))
            return gm.forward

        def f(a, q):
            return torch_ops.gemm(a, q, q, 128, 256, 128, "u4b8", "group") * 2

        compiled = torch.compile(f, backend=backend, fullgraph=True)
        with self.assertRaises(marlin_gen.ArgumentError):  # traced, then run on CPU tensors
            compiled(torch.zeros(3, 256, dtype=torch.float16), torch.zeros(16, dtype=torch.uint8))
        self.assertEqual(len(graphs), 1)
        self.assertIn("marlin_gen.gemm", graphs[0])


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
