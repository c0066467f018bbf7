"""build_wheel.py -- the wheel of marlin_gen with libmgen.so inside, written with the standard
library alone (zipfile; the wheel format, PEP 427/491): no setuptools, no wheel package, no pip,
no network, so any Python 3.8+ the CMake build found can make it. The CMake target `wheel` runs
it (runtime/python/CMakeLists.txt):
  python3 build_wheel.py --library LIB --version V --out DIST
writes DIST/marlin_gen-V-py3-none-<platform>.whl (replacing older marlin_gen wheels there): the
package's marlin_gen/*.py, LIB as marlin_gen/libmgen.so, and the dist-info (METADATA from
PROJECT below, WHEEL, RECORD). py3-none-<platform>: the package reaches the library through
ctypes, not the CPython ABI, so one wheel serves every Python 3 of this platform. V is the
CMake project's version: a marlin_gen/_version.py that says otherwise is an error, not a wheel
with the wrong version. Entries are written in a fixed order with a fixed time stamp: the same
inputs give the same bytes."""
import argparse
import base64
import glob
import hashlib
import os
import re
import sys
import sysconfig
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))

# The distribution's metadata (core metadata 2.1), the one place it is stated.
PROJECT = {
    "Name": "marlin_gen",
    "Summary": "4-bit weight-only GEMM kernels (libmgen) for NVIDIA GPUs, through ctypes",
    "Requires-Python": ">=3.8",
    "License": "Apache-2.0",
}
EXTRAS = {  # marlin_gen.torch / torch_ops (torch.library op) and checkpoints' tensors
    "torch": ["torch", "safetensors"],
}
STAMP = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip entry can say


def fail(msg):
    sys.exit(f"build_wheel.py: {msg}")


def package_version():
    with open(os.path.join(HERE, "marlin_gen", "_version.py")) as f:
        m = re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M)
    return m.group(1) if m else None


def platform_tag():
    return re.sub(r"[-.]", "_", sysconfig.get_platform())


def metadata(version):
    lines = ["Metadata-Version: 2.1"]
    lines += [f"{k}: {v}" for k, v in [("Name", PROJECT["Name"]), ("Version", version)]]
    lines += [f"{k}: {v}" for k, v in PROJECT.items() if k != "Name"]
    for extra, reqs in EXTRAS.items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {r}; extra == "{extra}"' for r in reqs]
    return "\n".join(lines) + "\n"


def wheel_file(tag):
    return ("Wheel-Version: 1.0\nGenerator: marlin_gen build_wheel.py\n"
            f"Root-Is-Purelib: false\nTag: {tag}\n")


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def entries(library, version, tag):
    """(name in the wheel, bytes, mode) in the order they are written; RECORD last."""
    out = []
    for path in sorted(glob.glob(os.path.join(HERE, "marlin_gen", "*.py"))):
        with open(path, "rb") as f:
            out.append((f"marlin_gen/{os.path.basename(path)}", f.read(), 0o644))
    with open(library, "rb") as f:  # the file itself where LIB is a link (libmgen.so -> ...)
        out.append(("marlin_gen/libmgen.so", f.read(), 0o755))
    info = f"{PROJECT['Name']}-{version}.dist-info"
    out.append((f"{info}/METADATA", metadata(version).encode(), 0o644))
    out.append((f"{info}/WHEEL", wheel_file(tag).encode(), 0o644))
    record = [record_line(n, d) for n, d, _ in out] + [f"{info}/RECORD,,"]
    out.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode(), 0o644))
    return out


def write(path, items):
    tmp = path + ".part"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data, mode in items:
            info = zipfile.ZipInfo(name, STAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o100000 | mode) << 16  # a regular file and its permissions
            z.writestr(info, data)
    os.replace(tmp, path)  # never a half-written wheel under the final name


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--library", required=True, help="the libmgen.so to put inside")
    ap.add_argument("--version", required=True, help="the CMake project's version")
    ap.add_argument("--out", required=True, help="where the wheel goes")
    args = ap.parse_args()
    have = package_version()
    if have != args.version:
        fail(f"marlin_gen/_version.py says {have}, the CMake project {args.version}: "
             "make them the same")
    if not os.path.isfile(args.library):
        fail(f"no library at {args.library}")
    tag = f"py3-none-{platform_tag()}"
    os.makedirs(args.out, exist_ok=True)
    for old in glob.glob(os.path.join(args.out, f"{PROJECT['Name']}-*.whl")):
        os.remove(old)
    wheel = os.path.join(args.out, f"{PROJECT['Name']}-{args.version}-{tag}.whl")
    write(wheel, entries(args.library, args.version, tag))
    print(wheel)


if __name__ == "__main__":
    main()
