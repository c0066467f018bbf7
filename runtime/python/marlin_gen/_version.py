"""_version.py -- the package's version: the CMake project's (CMakeLists.txt `project(marlin_gen
VERSION ...)`, the one source), copied here for the package; where the two differ, the CPU test
python.marlin_gen_cpu fails and build_wheel.py builds no wheel."""
__version__ = "0.1.0"
