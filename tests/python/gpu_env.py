"""gpu_env.py -- what the package's GPU tests need before anything else: the package from the
source tree ROOT (argv[1]) first on sys.path, this folder next (the tests' helpers), and
PyTorch with a CUDA device, plus any other modules named; otherwise the test is skipped: it
prints "SKIPPED: <why>" and exits 77, as ctest's SKIP_RETURN_CODE expects.
    torch = gpu_env.require("safetensors")"""
import importlib
import os
import sys


def skip(why):
    print(f"SKIPPED: {why}")
    sys.exit(77)


def require(*modules):
    """Sets up sys.path and returns the torch module, or skips the test."""
    sys.path.insert(0, os.path.join(sys.argv[1], "runtime", "python"))
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        torch = importlib.import_module("torch")
        for name in modules:
            importlib.import_module(name)
    except ImportError as e:
        skip(e)
    if not torch.cuda.is_available():
        skip("no CUDA device")
    return torch
