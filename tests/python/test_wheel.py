"""test_wheel.py CMAKE BUILD_DIR VERSION {cpu|gpu} -- the wheel, built as README says
(`cmake --build BUILD_DIR --target wheel`), then installed and imported where the source tree is
not on the path and MGEN_LIBRARY is unset (wheel_probe.py, in a fresh interpreter).
cpu (python.wheel): README shows that command; one wheel,
  BUILD_DIR/dist/marlin_gen-VERSION-py3-none-<this platform>.whl
  (VERSION: the CMake project's); its WHEEL file says that tag and not purelib; its METADATA
  requires torch and safetensors for the extra `torch`, nothing otherwise; libmgen.so is
  inside, as marlin_gen/libmgen.so, needs libcudart.so.<major> (NEEDED) and carries none: its
  RUNPATH starts with $ORIGIN/../nvidia/cu<major>/lib (nvidia-cuda-runtime's layout: PyTorch's
  CUDA runtime, beside the package in site-packages); installed with pip into a fresh venv
  (--no-index --no-deps), it imports with __version__ == VERSION and loads libmgen.so from
  inside the installed package (marlin_gen.load(), and the file the process maps); with a
  libcudart placed in the venv's site-packages as nvidia-cuda-runtime places it, libmgen.so
  loads that one, not the system's.
gpu (gpu.python_wheel; 77 without PyTorch or a GPU): installed with pip --target into two
  directories: one with torch's `nvidia` package directory linked beside marlin_gen (as pip
  installs both into one site-packages) where the probe loads libmgen before importing torch,
  and one without it (marlin_gen apart from torch, as a venv with --system-site-packages)
  where torch comes first; in each a u4b8 quantize + GEMM runs against its reference, and the
  process maps ONE libcudart file (/proc/self/maps: distinct device and inode), the one torch's
  package brings where it brings one (both orders: libmgen found it through its RUNPATH, or
  took torch's by its SONAME).
The wheel is built with the standard library alone (build_wheel.py): its RECORD lists every
other entry with its sha256 and size, and building it again gives the same bytes.
Skips (77, with the reason) where this Python cannot make a venv with pip (Debian:
python3-venv; scripts/install-deps.sh installs it)."""
import base64
import csv
import glob
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

CMAKE, BUILD, VERSION, MODE = sys.argv[1:5]
HERE = os.path.dirname(os.path.abspath(__file__))
PLATFORM = sysconfig.get_platform().replace("-", "_").replace(".", "_")
failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)
    return ok


def skip(why):
    print(f"SKIPPED: {why}")
    sys.exit(77)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        print(f"FAIL: {' '.join(cmd)} exited {r.returncode}:\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
        sys.exit(1)
    return r.stdout


def build_wheel():
    with open(os.path.join(HERE, "..", "..", "README.md")) as f:
        check(re.search(r"(?m)^cmake --build build --target wheel\b", f.read()) is not None,
              "README's Python section builds the wheel with the command run here")
    run([CMAKE, "--build", BUILD, "--target", "wheel"])
    wheels = glob.glob(os.path.join(BUILD, "dist", "*.whl"))
    name = f"marlin_gen-{VERSION}-py3-none-{PLATFORM}.whl"
    check([os.path.basename(w) for w in wheels] == [name],
          f"the build's dist/ holds one wheel, {name} "
          f"(has {sorted(map(os.path.basename, wheels))})")
    if not wheels:
        sys.exit(1)
    with open(wheels[0], "rb") as f:
        first = f.read()
    run([CMAKE, "--build", BUILD, "--target", "wheel"])
    with open(wheels[0], "rb") as f:
        check(f.read() == first, "building the wheel again gives the same bytes")
    return wheels[0]


def check_record(z, names):
    """RECORD names every other entry once, with the sha256 and size of what the wheel holds."""
    record = f"marlin_gen-{VERSION}.dist-info/RECORD"
    rows = list(csv.reader(io.StringIO(z.read(record).decode())))
    listed = {r[0]: r[1:] for r in rows}
    check(len(listed) == len(rows) and sorted(listed) == sorted(names) and listed[record] == ["", ""],
          f"RECORD lists each of the wheel's {len(names)} entries once, itself without a hash")
    bad = []
    for name in names:
        if name == record:
            continue
        data = z.read(name)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        if listed.get(name) != [f"sha256={digest}", str(len(data))]:
            bad.append(name)
    check(not bad, f"RECORD's sha256 and size match every entry (differ: {bad})")


def probe(python, mode, env_path, cwd):
    env = {k: v for k, v in os.environ.items() if k not in ("MGEN_LIBRARY", "PYTHONPATH")}
    if env_path:
        env["PYTHONPATH"] = env_path
    out = run([python, os.path.join(HERE, "wheel_probe.py"), mode], env=env, cwd=cwd)
    return json.loads(out.strip().splitlines()[-1])


def check_installed(got, site):
    pkg = os.path.dirname(got["package"])
    check(os.path.realpath(pkg) == os.path.realpath(os.path.join(site, "marlin_gen")),
          f"marlin_gen imports from the installed wheel ({pkg})")
    check(got["version"] == VERSION,
          f"marlin_gen.__version__ {got['version']} == CMake's {VERSION}")
    check(got["library"] == os.path.join(pkg, "libmgen.so"),
          f"marlin_gen.load() took the package's libmgen.so ({got['library']})")
    check([os.path.realpath(p) for p in got["mapped"]] == [os.path.realpath(got["library"])],
          f"the process maps that libmgen.so and no other ({got['mapped']})")


def readelf(lib):
    text = run(["readelf", "-d", lib])
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^]]+)\]", text)
    runpath = re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[([^]]*)\]", text)
    return needed, runpath[0].split(":") if runpath else []


def cpu(wheel, tmp):
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        check_record(z, names)
        meta = z.read(f"marlin_gen-{VERSION}.dist-info/WHEEL").decode()
        metadata = z.read(f"marlin_gen-{VERSION}.dist-info/METADATA").decode()
        requires = re.findall(r"(?m)^Requires-Dist: (.*)$", metadata)
        extra = [m.group(1) for r in requires
                 for m in [re.fullmatch(r"""(\w+)\s*;\s*extra == ['"]torch['"]""", r)] if m]
        check("Provides-Extra: torch" in metadata.splitlines() and len(extra) == len(requires)
              and sorted(extra) == ["safetensors", "torch"],
              f"the extra torch (and nothing else) requires torch and safetensors ({requires})")
        check("marlin_gen/libmgen.so" in names, "marlin_gen/libmgen.so is inside the wheel")
        check(not [n for n in names if "libcudart" in n], "the wheel carries no libcudart")
        check(f"Tag: py3-none-{PLATFORM}" in meta.splitlines() and "Root-Is-Purelib: false" in meta,
              f"WHEEL says Tag: py3-none-{PLATFORM}, Root-Is-Purelib: false")
        lib = z.extract("marlin_gen/libmgen.so", os.path.join(tmp, "unzipped"))
    needed, runpath = readelf(lib)
    cudart = [n for n in needed if re.fullmatch(r"libcudart\.so\.\d+", n)]
    check(len(cudart) == 1, f"libmgen.so needs one libcudart.so.<major> ({needed})")
    if cudart:
        want = f"$ORIGIN/../nvidia/cu{cudart[0].rsplit('.', 1)[1]}/lib"
        check(runpath[:1] == [want], f"its RUNPATH starts with {want} ({':'.join(runpath)})")
    venv = os.path.join(tmp, "venv")
    r = subprocess.run([sys.executable, "-m", "venv", venv], capture_output=True, text=True)
    if r.returncode != 0:
        if "ensurepip" in r.stdout + r.stderr:
            skip(f"{sys.executable} makes no venv with pip (Debian: python3-venv)")
        print(f"FAIL: {sys.executable} -m venv exited {r.returncode}:\n{r.stdout}{r.stderr}")
        sys.exit(1)
    python = os.path.join(venv, "bin", "python")
    run([python, "-m", "pip", "install", "--no-index", "--no-deps", "--disable-pip-version-check",
         "-q", wheel])
    site = run([python, "-c", "import sysconfig; print(sysconfig.get_path('platlib'))"]).strip()
    got = probe(python, "load", None, tmp)
    check_installed(got, site)
    check(len(got["cudart"]) == 1, f"loading it maps one libcudart ({got['cudart']})")
    if cudart and len(got["cudart"]) == 1:
        # PyTorch's CUDA runtime as nvidia-cuda-runtime installs it beside the package (a copy of
        # the one just loaded): libmgen.so must take that one, not the system's.
        lib_dir = os.path.join(site, "nvidia", f"cu{cudart[0].rsplit('.', 1)[1]}", "lib")
        os.makedirs(lib_dir)
        shutil.copyfile(got["cudart"][0], os.path.join(lib_dir, cudart[0]))
        again = probe(python, "load", None, tmp)
        check(again["cudart"] == [os.path.join(lib_dir, cudart[0])],
              f"with {lib_dir}/{cudart[0]} there, libmgen.so loads it ({again['cudart']})")


def nvidia_dir():
    """The `nvidia` package directory holding PyTorch's CUDA runtime (cu13/lib or
    cuda_runtime/lib), or None where PyTorch came without one."""
    import importlib.util
    spec = importlib.util.find_spec("nvidia")
    for d in (spec.submodule_search_locations or []) if spec else []:
        if glob.glob(os.path.join(d, "*", "lib", "libcudart.so.*")):
            return d
    return None


def gpu(wheel, tmp):
    nvidia = nvidia_dir()
    for order, beside in (("mgen-first", True), ("torch-first", False)):
        site = os.path.join(tmp, order)
        run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps",
             "--disable-pip-version-check", "-q", "--target", site, wheel])
        if beside and nvidia:
            os.symlink(nvidia, os.path.join(site, "nvidia"))
        got = probe(sys.executable, order, site, tmp)
        print(f"{order}: {json.dumps(got)}")
        check_installed(got, site)
        check(got["torch_before"] == (order == "torch-first"),
              f"{order}: PyTorch imported before libmgen loaded: {got['torch_before']}")
        check(got["worst"] <= 1.0,
              f"{order}: GEMM within its bound (worst |error|/bound {got['worst']:.3f})")
        check(len(got["cudart"]) == 1, f"{order}: one libcudart in the process ({got['cudart']})")
        if nvidia:
            pip_cudart = {os.path.realpath(p)
                          for p in glob.glob(os.path.join(nvidia, "*", "lib", "libcudart.so.*"))}
            check(set(map(os.path.realpath, got["cudart"])) <= pip_cudart,
                  f"{order}: it is PyTorch's ({sorted(pip_cudart)})")
            if beside:
                check(got["cudart_before"] == got["cudart"],
                      f"{order}: libmgen found it itself (RUNPATH), before torch came "
                      f"({got['cudart_before']})")
        else:
            print(f"note: PyTorch brought no nvidia CUDA runtime package here (torch's libcudart: "
                  f"{got['cudart']}); the RUNPATH's $ORIGIN/../nvidia entry was not exercised")


def main():
    if MODE not in ("cpu", "gpu"):
        sys.exit(f"test_wheel.py: unknown mode {MODE!r}")
    if MODE == "gpu":
        try:
            import torch
        except ImportError:
            skip("PyTorch is not installed")
        if not torch.cuda.is_available():
            skip("no CUDA device")
    wheel = build_wheel()
    with tempfile.TemporaryDirectory(prefix="mgen-wheel.") as tmp:
        (cpu if MODE == "cpu" else gpu)(wheel, tmp)
    if failures:
        print(f"test_wheel ({MODE}): {len(failures)} check(s) failed")
        sys.exit(1)
    print(f"test_wheel ({MODE}): every check passed")


if __name__ == "__main__":
    main()
