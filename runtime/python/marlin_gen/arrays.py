"""arrays.py -- device arrays from any object exposing __cuda_array_interface__ (CuPy, Numba,
PyTorch CUDA tensors) or DLPack (__dlpack__): pointer, dtype, shape, checked to be CUDA and
contiguous (the library reads tensors as stored, row-major)."""
import ctypes

from .errors import ArgumentError

# typestr (little-endian) -> mgen_dtype name; "<V2" is how some exporters spell bfloat16
_TYPESTR = {"|u1": "u8", "<i4": "i32", "<f2": "f16", "<f4": "f32", "<V2": "bf16"}
_ITEMSIZE = {"u8": 1, "i32": 4, "f16": 2, "bf16": 2, "f32": 4}
# DLPack (code, bits) -> name: kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4
_DLPACK = {(1, 8): "u8", (0, 32): "i32", (2, 16): "f16", (4, 16): "bf16", (2, 32): "f32"}
_KDLCUDA = 2


class Array:
    """A described device array: .ptr, .dtype (mgen_dtype name), .shape; .owner keeps what the
    description borrows from (the object, or a DLPack capsule) alive."""

    def __init__(self, ptr, dtype, shape, owner):
        self.ptr, self.dtype, self.shape, self.owner = ptr, dtype, tuple(shape), owner

    @property
    def nbytes(self):
        count = _ITEMSIZE[self.dtype]
        for d in self.shape:
            count *= d
        return count


def _contiguous(shape, strides, itemsize):
    expect = itemsize
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != expect:
            return False
        expect *= n
    return True


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


def _export(obj):
    """obj.__dlpack__() and what it came from. PyTorch exports no tensor that requires grad
    ("use tensor.detach()"); its detached tensor shares the storage, so it describes the same
    memory."""
    try:
        return obj.__dlpack__(), obj
    except RuntimeError:
        if not callable(getattr(obj, "detach", None)):
            raise
        detached = obj.detach()
        return detached.__dlpack__(), detached


def _from_dlpack(obj, name):
    capsule, source = _export(obj)
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    # A DLManagedTensor starts with its DLTensor. The capsule is not consumed (not renamed),
    # so its destructor frees the tensor once `Array.owner` lets go of it.
    t = _DLTensor.from_address(get(capsule, b"dltensor"))
    if t.device.device_type != _KDLCUDA:
        raise ArgumentError(f"{name}: DLPack device type {t.device.device_type} is not CUDA (2)")
    dtype = _DLPACK.get((t.dtype.code, t.dtype.bits)) if t.dtype.lanes == 1 else None
    if dtype is None:
        raise ArgumentError(f"{name}: DLPack dtype (code {t.dtype.code}, {t.dtype.bits} bits, "
                            f"{t.dtype.lanes} lanes) is not one of u8, i32, f16, bf16, f32")
    shape = [t.shape[i] for i in range(t.ndim)]
    if t.strides and not _contiguous(shape, [t.strides[i] * _ITEMSIZE[dtype] for i in
                                              range(t.ndim)], _ITEMSIZE[dtype]):
        raise ArgumentError(f"{name}: not contiguous (row-major) in memory")
    return Array((t.data or 0) + t.byte_offset, dtype, shape, (obj, source, capsule))


def describe(obj, name="array"):
    """The Array of `obj`; ArgumentError for anything that is not a contiguous CUDA array of a
    supported dtype."""
    if isinstance(obj, Array):
        return obj
    try:
        cai = obj.__cuda_array_interface__
    except AttributeError:
        cai = None
    except RuntimeError as e:
        # PyTorch refuses the interface of a tensor that requires grad (an nn.Parameter) with a
        # RuntimeError; DLPack describes it
        if not hasattr(obj, "__dlpack__"):
            raise ArgumentError(f"{name}: __cuda_array_interface__: {e}") from e
        cai = None
    if cai is not None:
        typestr = cai["typestr"]
        dtype = _TYPESTR.get(typestr)
        if dtype is None:
            raise ArgumentError(f"{name}: typestr {typestr!r} is not one of {sorted(_TYPESTR)}")
        shape = tuple(int(d) for d in cai["shape"])
        strides = cai.get("strides")
        if strides is not None and not _contiguous(shape, strides, _ITEMSIZE[dtype]):
            raise ArgumentError(f"{name}: not contiguous (row-major) in memory")
        return Array(int(cai["data"][0] or 0), dtype, shape, obj)
    if hasattr(obj, "__dlpack__"):
        return _from_dlpack(obj, name)
    raise ArgumentError(f"{name}: {type(obj).__name__} has neither __cuda_array_interface__ "
                        "nor __dlpack__")
