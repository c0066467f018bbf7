"""build_wheel.py -- the wheel of marlin_gen with libmgen.so inside, built offline through
setuptools' own build backend (what `pip wheel --no-build-isolation` calls; no pip, no network:
setuptools, plus the wheel package where setuptools is older than 70.1). The CMake target
`wheel` runs it (runtime/python/CMakeLists.txt):
  python3 build_wheel.py --library LIB --version V --stage DIR --out DIST
copies the package's sources and LIB (as marlin_gen/libmgen.so) into DIR, a scratch directory
it empties first and removes after (setuptools writes build/ and *.egg-info beside the sources:
never the source tree), and writes DIST/marlin_gen-V-py3-none-<platform>.whl, replacing older
marlin_gen wheels there. V is the CMake project's version: a marlin_gen/_version.py that says
otherwise is an error, not a wheel with the wrong version."""
import argparse
import glob
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = ["pyproject.toml", "setup.py"]


def fail(msg):
    sys.exit(f"build_wheel.py: {msg}")


def package_version():
    with open(os.path.join(HERE, "marlin_gen", "_version.py")) as f:
        m = re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M)
    return m.group(1) if m else None


def stage(library, stage_dir):
    if os.path.exists(stage_dir):
        if not os.path.exists(os.path.join(stage_dir, "setup.py")):
            fail(f"{stage_dir} exists and is not a wheel stage: not emptying it")
        shutil.rmtree(stage_dir)
    os.makedirs(os.path.join(stage_dir, "marlin_gen"))
    for name in SOURCES:
        shutil.copy2(os.path.join(HERE, name), stage_dir)
    for path in glob.glob(os.path.join(HERE, "marlin_gen", "*.py")):
        shutil.copy2(path, os.path.join(stage_dir, "marlin_gen"))
    # copyfile: the file itself where LIB is a link (libmgen.so -> libmgen.so.0.1 ...)
    shutil.copyfile(library, os.path.join(stage_dir, "marlin_gen", "libmgen.so"))


def build(stage_dir, out):
    try:
        import setuptools.build_meta as backend
    except ImportError:
        fail(f"{sys.executable} has no setuptools (Debian: apt-get install python3-setuptools "
             "python3-wheel)")
    os.makedirs(out, exist_ok=True)
    for old in glob.glob(os.path.join(out, "marlin_gen-*.whl")):
        os.remove(old)
    cwd = os.getcwd()
    os.chdir(stage_dir)  # the backend builds the project in the working directory
    try:
        name = backend.build_wheel(os.path.abspath(out))
    except SystemExit as e:  # setup.py's and setuptools' errors (no bdist_wheel: setup.py)
        fail(f"setuptools could not build the wheel: {e}")
    finally:
        os.chdir(cwd)
    return os.path.join(out, name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--library", required=True, help="the libmgen.so to put inside")
    ap.add_argument("--version", required=True, help="the CMake project's version")
    ap.add_argument("--stage", required=True, help="scratch directory (emptied)")
    ap.add_argument("--out", required=True, help="where the wheel goes")
    args = ap.parse_args()
    have = package_version()
    if have != args.version:
        fail(f"marlin_gen/_version.py says {have}, the CMake project {args.version}: "
             "make them the same")
    if not os.path.isfile(args.library):
        fail(f"no library at {args.library}")
    stage_dir = os.path.abspath(args.stage)
    stage(args.library, stage_dir)
    wheel = build(stage_dir, args.out)
    shutil.rmtree(stage_dir)  # two more copies of the library (staged, and setuptools' build/)
    print(wheel)


if __name__ == "__main__":
    main()
