"""errors.py -- the library's statuses as Python exceptions (mgen.h, MGEN_STATUS_MAP; the CPU
tests check this table against the header)."""

# value: name, as in MGEN_STATUS_MAP (without the MGEN_ prefix)
STATUS = {
    0: "OK", -1: "ERR_INVALID_ARG", -2: "ERR_NULL_POINTER", -3: "ERR_MISALIGNED",
    -4: "ERR_UNSUPPORTED_SHAPE", -5: "ERR_UNSUPPORTED_FORMAT", -6: "ERR_NO_KERNEL",
    -7: "ERR_UNKNOWN_KERNEL", -8: "ERR_CUDA", -9: "ERR_NO_MEMORY", -10: "ERR_BUFFER_TOO_SMALL",
    -11: "ERR_CACHE_FORMAT", -12: "ERR_IO", -13: "ERR_CACHE_MISMATCH",
    -14: "ERR_STREAM_CAPTURING", -15: "ERR_WRONG_DEVICE",
}


class MgenError(RuntimeError):
    """A failing libmgen call: .status (the mgen_status value), .name ("ERR_INVALID_ARG"),
    .message (the library's last-error text: what was wrong, naming the argument)."""

    def __init__(self, status, message, call=""):
        self.status = int(status)
        self.name = STATUS.get(self.status, "unknown status")
        self.message = message
        super().__init__(f"{call + ': ' if call else ''}{self.name} ({self.status}): {message}")


class ArgumentError(MgenError, ValueError):
    """An argument the bindings refuse before calling the library (a non-CUDA or
    non-contiguous array, an unknown name); status ERR_INVALID_ARG."""

    def __init__(self, message, call=""):
        super().__init__(-1, message, call)
