"""setup.py -- the wheel's tag, the one thing pyproject.toml cannot say: with libmgen.so inside
the package (build_wheel.py puts it there) the wheel is for this platform, and for any Python 3
(py3-none-linux_x86_64: the package reaches the library through ctypes, not the CPython ABI);
without it, a pure py3-none-any wheel."""
import os

from setuptools import Distribution, setup

HERE = os.path.dirname(os.path.abspath(__file__))
cmdclass, distclass = {}, Distribution
if os.path.exists(os.path.join(HERE, "marlin_gen", "libmgen.so")):
    try:
        from setuptools.command.bdist_wheel import bdist_wheel  # setuptools >= 70.1
    except ImportError:
        try:
            from wheel.bdist_wheel import bdist_wheel  # older setuptools: the wheel package's
        except ImportError:
            raise SystemExit("no bdist_wheel: setuptools older than 70.1 needs the wheel "
                             "package (Debian: python3-wheel)") from None

    class BinaryDistribution(Distribution):
        def has_ext_modules(self):
            return True  # a binary inside: installed to platlib, a wheel with a platform tag

    class PlatformWheel(bdist_wheel):
        def get_tag(self):
            return "py3", "none", super().get_tag()[2]

    cmdclass["bdist_wheel"], distclass = PlatformWheel, BinaryDistribution
setup(cmdclass=cmdclass, distclass=distclass)
