"""readme_python.py ROOT (--compile | --run) -- README.md's Python examples as a user copies them.

--compile (test scripts.readme_python, cpu): every ```python block of README.md compiles as
printed, and the first block of its "## Python" section is a whole program (it imports
marlin_gen and torch and checks its own result with an assert); a copy with a syntax error
planted must be refused, so the check can fail.
--run (test gpu.readme_python, gpu): that first block runs as a program (the package from
ROOT/runtime/python, the library from $MGEN_LIBRARY) and exits 0, printing its error against
the unquantized weights. Exit 77 where PyTorch is missing or sees no CUDA device."""
import os
import subprocess
import sys


def blocks(text):
    """(line, source) of each ```python block, and the index of the first in "## Python"."""
    out, first_python, section, lines = [], None, "", text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            section = line[3:].strip()
        if line.strip() == "```python":
            start, body = i + 1, []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            if i == len(lines):
                raise SystemExit(f"README.md:{start}: a ```python block that never ends")
            if section == "Python" and first_python is None:
                first_python = len(out)
            out.append((start, "\n".join(body) + "\n"))
        i += 1
    return out, first_python


def compile_all(found, first):
    if not found:
        raise SystemExit("README.md has no ```python block")
    for line, src in found:
        try:
            compile(src, f"README.md:{line}", "exec")
        except SyntaxError as e:
            raise SystemExit(f"README.md:{line}: the Python block does not compile: {e}")
    if first is None:
        raise SystemExit('README.md: no ```python block in its "## Python" section')
    line, src = found[first]
    for need in ("import marlin_gen", "torch", "assert "):
        if need not in src:
            raise SystemExit(f"README.md:{line}: the first Python example is not a whole program "
                             f"that checks its result (no '{need}')")
    return line, src


def main():
    root, mode = sys.argv[1], sys.argv[2]
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        text = f.read()
    found, first = blocks(text)
    line, src = compile_all(found, first)
    if mode == "--compile":
        # The check can fail: the same blocks with one broken must be refused.
        broken = [(l, s + "def (\n") if i == 0 else (l, s) for i, (l, s) in enumerate(found)]
        try:
            compile_all(broken, first)
        except SystemExit:
            print(f"readme_python: {len(found)} Python blocks compile; the example at "
                  f"README.md:{line} is a whole program; a broken copy is refused")
            return 0
        raise SystemExit("readme_python: a block with a syntax error passed the check")
    if mode != "--run":
        raise SystemExit(f"readme_python: unknown mode {mode}")
    try:
        import torch
    except ImportError:
        print("SKIPPED: PyTorch is not installed")
        return 77
    if not torch.cuda.is_available():
        print("SKIPPED: PyTorch sees no CUDA device")
        return 77
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(root, "runtime", "python")] + [p for p in [env.get("PYTHONPATH")] if p])
    run = subprocess.run([sys.executable, "-c", src], env=env, capture_output=True, text=True,
                         timeout=300)
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    if run.returncode != 0 or "relative error against the unquantized weights" not in run.stdout:
        raise SystemExit(f"readme_python: the example at README.md:{line} failed "
                         f"(exit {run.returncode})")
    print(f"readme_python: the example at README.md:{line} ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
