"""_version.py -- the package's version: the CMake project's (CMakeLists.txt `project(marlin_gen
VERSION ...)`, the one source), copied here for the package and read by pyproject.toml; the CPU
test python.marlin_gen_cpu fails where the two differ."""
__version__ = "0.1.0"
