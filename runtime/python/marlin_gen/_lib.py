"""_lib.py -- loading libmgen.so and declaring its C API for ctypes (mirrors mgen.h; the
structures' sizes and offsets are checked against the C compiler's by the CPU tests). The
format enums (ACT, WFMT, SCHEME) come from the format table (_formats.py, generated)."""
import ctypes
import glob
import os
import re
import sys

from ._formats import ACT, LAYOUT, SCHEME, SCHEME_GROUPS, WFMT  # noqa: F401  (the format table)

# ---------------------------------------------------------------- enums (mgen.h, mgen_kernel.h)
DTYPE = {"u8": 1, "i32": 2, "f16": 3, "bf16": 4, "f32": 5}
GPTQ_ZEROS = {"auto": 0, "minus_one": 1, "exact": 2}
TUNE = {"never": 0, "on_miss": 1}
MOE_A_ROWS = {"tokens": 0, "pairs": 1, "sorted": 2}  # mgen_moe_a_rows: where a pair's A row is
CACHE_REPLACE = 1


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("ndim", ctypes.c_int),
                ("shape", ctypes.c_int64 * 2)]


class Weights(ctypes.Structure):
    _fields_ = [("wfmt", ctypes.c_int), ("act", ctypes.c_int), ("scheme", ctypes.c_int),
                ("group", ctypes.c_int), ("n", ctypes.c_int), ("k", ctypes.c_int),
                ("d_q", ctypes.c_void_p), ("d_scales", ctypes.c_void_p), ("layout", ctypes.c_int),
                ("d_bias", ctypes.c_void_p)]


class Gptq(ctypes.Structure):
    _fields_ = [("qweight", Tensor), ("scales", Tensor), ("qzeros", Tensor), ("g_idx", Tensor),
                ("zeros", ctypes.c_int)]


class Ct(ctypes.Structure):
    _fields_ = [("weight_packed", Tensor), ("weight_scale", Tensor),
                ("weight_zero_point", Tensor), ("weight_g_idx", Tensor)]


class Awq(ctypes.Structure):
    _fields_ = [("qweight", Tensor), ("qzeros", Tensor), ("scales", Tensor)]


LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p)


class CtxOpts(ctypes.Structure):
    _fields_ = [("device", ctypes.c_int), ("log", LOG_FN), ("log_user", ctypes.c_void_p),
                ("max_workspaces", ctypes.c_int), ("plain_launches", ctypes.c_int),
                ("max_sms", ctypes.c_int)]


class TuneResult(ctypes.Structure):
    _fields_ = [("kernel", ctypes.c_char_p), ("default_kernel", ctypes.c_char_p),
                ("us", ctypes.c_double), ("default_us", ctypes.c_double), ("m_lo", ctypes.c_int),
                ("m_hi", ctypes.c_int), ("m_timed", ctypes.c_int), ("candidates", ctypes.c_int)]


class PackSrc(ctypes.Structure):
    _fields_ = [("codes", ctypes.c_void_p), ("codes_bytes", ctypes.c_size_t),
                ("scales", ctypes.c_void_p), ("scales_bytes", ctypes.c_size_t),
                ("global_scale", ctypes.c_float), ("zeros", ctypes.c_void_p),
                ("zeros_bytes", ctypes.c_size_t)]


class MoeRoute(ctypes.Structure):
    _fields_ = [("m", ctypes.c_int), ("topk", ctypes.c_int), ("num_experts", ctypes.c_int),
                ("local_experts", ctypes.c_int), ("block_rows", ctypes.c_int),
                ("d_topk_ids", ctypes.c_void_p), ("d_expert_map", ctypes.c_void_p),
                ("d_sorted_ids", ctypes.c_void_p), ("d_block_experts", ctypes.c_void_p),
                ("d_num_padded", ctypes.c_void_p), ("unsorted", ctypes.c_int)]


STRUCTS = {"mgen_tensor": Tensor, "mgen_weights": Weights, "mgen_gptq": Gptq, "mgen_ct": Ct, "mgen_awq": Awq,
           "mgen_ctx_opts": CtxOpts, "mgen_tune_result": TuneResult, "mgen_pack_src": PackSrc,
           "mgen_moe_route": MoeRoute}

_P = ctypes.c_void_p
_I = ctypes.c_int
# name: (argument types); every function returns an mgen_status (int)
SIGNATURES = {
    "mgen_ctx_create": [ctypes.POINTER(_P), _P, ctypes.POINTER(CtxOpts)],
    "mgen_weights_bytes": [ctypes.POINTER(Weights), ctypes.POINTER(ctypes.c_size_t),
                           ctypes.POINTER(ctypes.c_size_t)],
    "mgen_quantize": [_P, _P, ctypes.POINTER(Weights), _P],
    "mgen_quantize_act": [_P, _I, _I, _I, _P, _P, ctypes.POINTER(ctypes.c_float), _P],
    "mgen_pack": [_P, _P, _P, ctypes.POINTER(Weights), _P],
    "mgen_pack_weights": [_P, ctypes.POINTER(PackSrc), ctypes.POINTER(Weights), _P],
    "mgen_import_awq": [_P, ctypes.POINTER(Awq), ctypes.POINTER(Weights), _P],
    "mgen_import_gptq": [_P, ctypes.POINTER(Gptq), ctypes.POINTER(Weights), _P],
    "mgen_import_ct": [_P, ctypes.POINTER(Ct), ctypes.POINTER(Weights), _P],
    "mgen_pack_fp4": [_P, _P, ctypes.c_size_t, _P, ctypes.c_size_t, ctypes.c_float,
                      ctypes.POINTER(Weights), _P],
    "mgen_gemm": [_P, _I, _I, _P, ctypes.POINTER(Weights), _P, _P],
    "mgen_gemm_a8": [_P, _I, _I, _P, ctypes.POINTER(ctypes.c_float), _I, ctypes.POINTER(Weights),
                     _P, _P],
    "mgen_gemm_choice": [_P, _I, _I, ctypes.POINTER(Weights), ctypes.POINTER(ctypes.c_char_p)],
    "mgen_tune": [_P, _I, ctypes.POINTER(Weights), _P, ctypes.POINTER(TuneResult)],
    "mgen_ctx_set_tune": [_P, _I, _I],
    "mgen_cache_load": [_P, ctypes.c_char_p, ctypes.POINTER(_I)],
    "mgen_cache_save": [_P, ctypes.c_char_p, ctypes.c_uint],
    "mgen_moe_route_rows": [ctypes.POINTER(MoeRoute), ctypes.POINTER(_I)],
    "mgen_moe_route_tokens": [_P, ctypes.POINTER(MoeRoute), _P],
    "mgen_moe_gemm_choice": [_P, _I, ctypes.POINTER(MoeRoute), ctypes.POINTER(Weights),
                             ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(_I)],
    "mgen_moe_gemm": [_P, _I, ctypes.POINTER(MoeRoute), _I, _P, ctypes.POINTER(Weights),
                      ctypes.POINTER(ctypes.c_float), _P, _P],
    "mgen_moe_gemm_a_sorted": [_P, _I, ctypes.POINTER(MoeRoute), ctypes.POINTER(Weights),
                               ctypes.POINTER(_I)],
    "mgen_moe_unsorted_pays": [_P, _I, ctypes.POINTER(MoeRoute), ctypes.POINTER(Weights),
                               ctypes.POINTER(_I), ctypes.POINTER(_I)],
    "mgen_moe_permute": [_P, ctypes.POINTER(MoeRoute), _I, _I, _P, _P, _P],
    "mgen_moe_sum": [_P, _I, ctypes.POINTER(MoeRoute), _I, _P, _P, _P],
}


class LibraryNotFound(OSError):
    """libmgen.so could not be loaded; the message lists every place tried and why."""


def candidates(path=None):
    """Where the library is looked for, in order: the argument, $MGEN_LIBRARY, next to this
    package, then the dynamic loader's search path ("libmgen.so"). Each is tried once more
    where its libcudart was not found and sys.path has one (cudart_from_sys_path)."""
    out = []
    if path:
        out.append(str(path))
    if os.environ.get("MGEN_LIBRARY"):
        out.append(os.environ["MGEN_LIBRARY"])
    out.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "libmgen.so"))
    out.append("libmgen.so")
    return out


# dlerror()'s "libcudart.so.13: cannot open shared object file: ..." (its words translated by
# the locale, so only the leading name)
_NO_CUDART = re.compile(r"^(libcudart\.so\.\d+): ")


def cudart_from_sys_path(error):
    """The libcudart.so.N that `error` (a failed load of libmgen.so) names as not found, loaded
    from an `nvidia` package on sys.path (nvidia-cuda-runtime, PyTorch's: nvidia/cu13/lib,
    nvidia/cuda_runtime/lib), as PyTorch loads it: the wheel's RUNPATH reaches that package only
    in the same site-packages, not from a venv with --system-site-packages or a --user install.
    Once loaded, libmgen.so's dependency resolves to it by its SONAME (and PyTorch's too: one
    runtime). Only absolute entries of sys.path (not the working directory). The path loaded,
    or None."""
    m = _NO_CUDART.search(str(error))
    if not m:
        return None
    for entry in sys.path:
        if not os.path.isabs(entry):
            continue
        for path in sorted(glob.glob(os.path.join(glob.escape(entry), "nvidia", "*", "lib",
                                                  m.group(1)))):
            try:
                ctypes.CDLL(path)
            except OSError:
                continue
            return path
    return None


def _open(cand):
    try:
        return ctypes.CDLL(cand)
    except OSError as e:
        if cudart_from_sys_path(e) is None:
            raise
    return ctypes.CDLL(cand)


def load(path=None):
    """Loads the library and declares its functions; raises LibraryNotFound."""
    tried = []
    for cand in candidates(path):
        if os.sep in cand and not os.path.exists(cand):
            tried.append(f"{cand}: no such file")
            continue
        try:
            lib = _open(cand)
        except OSError as e:
            tried.append(f"{cand}: {e}")
            continue
        missing = [name for name in list(SIGNATURES) + ["mgen_status_str", "mgen_ctx_last_error"]
                   if not hasattr(lib, name)]
        if missing:
            tried.append(f"{cand}: not libmgen, or too old (lacks {', '.join(missing)})")
            continue
        for name, args in SIGNATURES.items():
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = args, ctypes.c_int
        lib.mgen_status_str.argtypes, lib.mgen_status_str.restype = [_I], ctypes.c_char_p
        lib.mgen_ctx_last_error.argtypes, lib.mgen_ctx_last_error.restype = [_P], ctypes.c_char_p
        lib.mgen_builtin_table.argtypes, lib.mgen_builtin_table.restype = [], _P
        lib.mgen_ctx_destroy.argtypes, lib.mgen_ctx_destroy.restype = [_P], None
        return lib
    raise LibraryNotFound("marlin_gen: cannot load libmgen.so (build it with CMake, then pass "
                          "its path, set MGEN_LIBRARY, or copy it next to the package):\n  "
                          + "\n  ".join(tried))


def scheme_of(wfmt, group):
    """The scale scheme of weights (wfmt, group) by the format table: the weight format's only
    scheme, else the one with that group size (the table gives a (wfmt, group) pair at most
    one); None where none has it."""
    schemes = [name for name, (w, _) in SCHEME_GROUPS.items() if w == wfmt]
    if len(schemes) == 1:
        return schemes[0]  # its group is the library's to check, with its message
    for name in schemes:
        if group in SCHEME_GROUPS[name][1]:
            return name
    return None
