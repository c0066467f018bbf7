#!/usr/bin/env python3
"""fit_cost_models.py -- coordinate search over the two kernel families' cost-model constants
against what runtime.test_cost_sweep measures (the default choice over the fastest swept kernel,
geometric mean, and the share of picks within 3% of the fastest default kernel).

  python3 bench/fit_cost_models.py [--build build] [--ctest CTEST] [--check | --search]
                                   [--only NAME,...]

--check   rebuilds the test from copies of the two model sources with their constants as they
          are and compares its figures with the built test binary's: the pipeline below is the
          test's own (tests/CMakeLists.txt registers this as tools.fit_cost_models).
--search  (default) multiplies one constant at a time by the steps of three rounds (x0.6..1.6,
          x0.85..1.18, x0.95..1.05), keeps a move when it lowers ln(geo) - 0.01 share, and prints
          each kept move and the final constants. Nothing is written: put the values you keep
          into runtime/src/families/{mma,wgmma}.c (fe2m1's factors: runtime/src/formats/fe2m1.c) by
          hand and say why in their comments.
--a8      the same search for the W4A8 keys' figures (the test's second summary line) over the
          wgmma model's A8_* constants (its other constants are the 16-bit keys' fit).
--moe     the same search for the moe op's choice (runtime.test_moe_choice: the committed moe
          cover against its sweep) over the wgmma model's MOE_* constants; the objective is
          ln(geo) + 0.25 ln(worst) of pick over the fastest swept.
The constants are the `#define NAME number` lines named in CONSTANTS below. The test's command
(manifest and sweep files) comes from CTest, its compile and link lines from Ninja
(`ninja -t commands`), so the build directory must be a Ninja build with the test built.
Each evaluation recompiles the two sources and relinks (~1 s). Exit status: 0; 1 a failed
check or step; 77 no Ninja build here (CTest reports it skipped).
"""
import argparse
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "runtime", "src")
# source (under runtime/src, without .c): its constants; a weight format's dequantization
# factors live in its description (formats/<format>.c)
CONSTANTS = {
    "families/mma": ["UNIT_CYCLES", "STEP_DEPTH", "REDUCE_SLICE_NS", "REDUCE_TRIP_NS",
                     "LAUNCH_NS"],
    "families/wgmma": ["TENSOR_STAGE_NS", "TENSOR_STAGE_FIXED_NS", "STAGE_NS",
                       "STAGE_NS_PER_TILE", "STAGE_NS_PER_WG", "STAGE_NS_PER_GROUP", "REDUCE_NS",
                       "LAUNCH_NS", "A8_STAGE_NS", "A8_STAGE_NS_PER_TILE", "A8_TENSOR_STAGE_NS",
                       "A8_TENSOR_STAGE_FIXED_NS", "A8_REDUCE_NS", "MOE_STAGE_NS",
                       "MOE_STAGE_NS_PER_ROWS", "MOE_TILE_NS"],
    "formats/fe2m1": ["FE2M1_DEQUANT", "MXFP4_SCALED", "FE2M1_STAGE"],
}
class Objective:
    """What a search fits: the test that measures it, the summary line the test prints (named
    groups: geo, and share (a percentage) or worst), the prefix of the constants it moves unless
    --only says (None: the constants no other objective owns), and the loss it minimizes."""

    def __init__(self, test, summary, prefix):
        self.test, self.summary, self.prefix = test, re.compile(summary), prefix

    def figures(self, m):
        if "worst" in self.summary.groupindex:
            return float(m.group("geo")), float(m.group("worst"))
        return float(m.group("geo")), float(m.group("share")) / 100.0

    def loss(self, figures):
        if "worst" in self.summary.groupindex:
            return math.log(figures[0]) + 0.25 * math.log(figures[1])
        return math.log(figures[0]) - 0.01 * figures[1]

    def shown(self, figures):
        if "worst" in self.summary.groupindex:
            return f"{figures[0]:.4f} / {figures[1]:.3f} worst"
        return f"{figures[0]:.4f} / {100 * figures[1]:.1f}%"


OBJECTIVES = {
    # the 16-bit keys' dense choice (test_cost_sweep's first summary line)
    "dense": Objective("test_cost_sweep",
                       r"pick / fastest swept = (?P<geo>[0-9.]+) \(geometric mean\); within 3% of "
                       r"the fastest default: \d+ \((?P<share>[0-9.]+)%\)", None),
    # the W4A8 keys' figures (the e4m3 layout, its own A8_* constants)
    "a8": Objective("test_cost_sweep",
                    r"W4A8, \d+ points: pick over the fastest swept (?P<geo>[0-9.]+) \(geometric "
                    r"mean\); within 3% of the fastest default \d+ \((?P<share>[0-9.]+)%\)", "A8_"),
    # the moe op's choice (test_moe_choice): geometric mean and worst of pick over the fastest
    "moe": Objective("test_moe_choice",
                     r"pick / fastest swept = (?P<geo>[0-9.]+) \(geometric mean\), "
                     r"(?P<worst>[0-9.]+) \(worst\)", "MOE_"),
}
OWNED = tuple(o.prefix for o in OBJECTIVES.values() if o.prefix)

def fail(msg, code=1):
    print(f"fit_cost_models: {msg}", file=sys.stderr)
    sys.exit(code)


def define_re(name):
    return re.compile(r"(#define %s )([0-9.]+)" % re.escape(name))


class Pipeline:
    """The test's command and its build lines, with the two model sources swapped for copies."""

    def __init__(self, build, objective, ctest="ctest"):
        self.build = os.path.abspath(build)
        self.objective = objective
        test = objective.test
        ninja_file = os.path.join(self.build, "build.ninja")
        if shutil.which("ninja") is None or not os.path.exists(ninja_file):
            fail(f"{self.build} is not a Ninja build (or ninja is missing)", 77)
        self.tmp = tempfile.mkdtemp(prefix="fit_cost_")
        # The listing reads a copy of the build's CTestTestfile.cmake tree: ctest run on the
        # build itself rewrites its Testing/Temporary/LastTest.log, where scripts/ctest-skips.sh
        # reads why the tests of the run this one is part of skipped.
        listing = os.path.join(self.tmp, "testfiles")
        for top, _, files in os.walk(self.build):
            if "CTestTestfile.cmake" in files:
                dest = os.path.join(listing, os.path.relpath(top, self.build))
                os.makedirs(dest, exist_ok=True)
                shutil.copy(os.path.join(top, "CTestTestfile.cmake"), dest)
        shown = subprocess.run([ctest, "--test-dir", listing, "-R", f"^runtime.{test}$",
                                "--show-only=json-v1"], capture_output=True, text=True, check=True)
        tests = json.loads(shown.stdout).get("tests", [])
        if len(tests) != 1:
            fail(f"CTest has no runtime.{test} in " + self.build)
        self.command = tests[0]["command"]
        lines = subprocess.run(["ninja", "-C", self.build, "-t", "commands",
                                f"tests/{test}"],
                               capture_output=True, text=True, check=True).stdout.splitlines()
        self.sources = {f: open(os.path.join(SRC, f + ".c")).read() for f in CONSTANTS}
        self.compile, self.objects, link = {}, {}, None
        for line in lines:
            words = shlex.split(line.split("&&")[1] if line.startswith(":") else line)
            if "-c" in words:
                src = words[words.index("-c") + 1]
                for f in CONSTANTS:
                    if src.endswith(f"/{f}.c"):
                        self.objects[f] = words[words.index("-o") + 1]
                        self.compile[f] = self._redirect(words, src, f)
            elif f"tests/{test}" in words:
                link = words
        if set(self.compile) != set(CONSTANTS) or link is None:
            fail("ninja -t commands gave no compile lines for " + ", ".join(CONSTANTS) +
                 " or no link line")
        self.binary = os.path.join(self.tmp, test)
        copies = {obj: self._copy(f, ".o") for f, obj in self.objects.items()}
        self.link = [self.binary if w == f"tests/{test}" else copies.get(w, w)
                     for w in link]

    def _redirect(self, words, src, family):
        out, skip = [], False
        for w in words:
            if skip:
                skip = False
                continue
            if w in ("-MD",):
                continue
            if w in ("-MT", "-MF"):
                skip = True
                continue
            out.append(w)
        out[out.index(src)] = self._copy(family, ".c")
        out[out.index("-o") + 1] = self._copy(family, ".o")
        # the copies include their neighbours ("wgmma.h", "mma.h") by the source's directory
        return out + ["-I", os.path.dirname(os.path.join(SRC, family))]

    def _copy(self, source, ext):
        return os.path.join(self.tmp, os.path.basename(source) + ext)

    def constants(self):
        values = {}
        for f, names in CONSTANTS.items():
            for n in names:
                m = define_re(n).search(self.sources[f])
                if m is None:
                    fail(f"{f}.c has no '#define {n} <number>'")
                values[(f, n)] = float(m.group(2))
        return values

    def measure(self, values, binary=None):
        if binary is None:
            for f in CONSTANTS:
                text = self.sources[f]
                for n in CONSTANTS[f]:
                    text = define_re(n).sub(lambda m: m.group(1) + repr(values[(f, n)]), text)
                with open(self._copy(f, ".c"), "w") as out:
                    out.write(text)
                subprocess.run(self.compile[f], cwd=self.build, check=True)
            subprocess.run(self.link, cwd=self.build, check=True)
            binary = self.binary
        run = subprocess.run([binary] + self.command[1:], capture_output=True, text=True)
        m = self.objective.summary.search(run.stdout + run.stderr)
        if m is None:
            tail = "\n".join((run.stdout + run.stderr).splitlines()[-8:])
            fail(f"no summary line from {binary} (exit {run.returncode}); its last lines:\n{tail}")
        return self.objective.figures(m)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--ctest", default="ctest", help="the ctest program (CTest passes its own)")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--search", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated constant names to search")
    ap.add_argument("--a8", action="store_true",
                    help="fit the W4A8 figures (the A8_* constants unless --only says)")
    ap.add_argument("--moe", action="store_true",
                    help="fit the moe op's choice (the MOE_* constants unless --only says)")
    args = ap.parse_args()
    goal = OBJECTIVES["moe" if args.moe else "a8" if args.a8 else "dense"]
    p = Pipeline(args.build, goal, args.ctest)
    try:
        values = p.constants()
        figures = p.measure(values)
        if args.check:
            built = p.measure(values, binary=p.command[0])
            ok = figures == built
            print(f"fit_cost_models: rebuilt from copies {goal.shown(figures)}, the built test "
                  f"{goal.shown(built)}: {'the same' if ok else 'DIFFERENT'}")
            # and the copies are what is measured: each source's launch cost (a format's first
            # factor) x3 moves the figures
            for f, names in CONSTANTS.items():
                n = "LAUNCH_NS" if "LAUNCH_NS" in names else names[0]
                moved = p.measure({**values, (f, n): 3 * values[(f, n)]})
                print(f"fit_cost_models: {f}.c {n} x3: {goal.shown(moved)}")
                ok = ok and moved != figures
            sys.exit(0 if ok else 1)
        only = set(filter(None, args.only.split(",")))
        keys = [k for k in values
                if (k[1] in only if only else k[1].startswith(goal.prefix) if goal.prefix
                    else not k[1].startswith(OWNED))]
        print(f"start: {goal.shown(figures)}", flush=True)
        best = goal.loss(figures)
        for steps in ((0.6, 0.8, 1.25, 1.6), (0.85, 0.93, 1.07, 1.18), (0.95, 0.98, 1.02, 1.05)):
            moved = True
            while moved:
                moved = False
                for k in keys:
                    for s in steps:
                        trial = dict(values)
                        trial[k] = round(values[k] * s, 4)
                        fig = p.measure(trial)
                        if goal.loss(fig) < best - 1e-6:
                            best, values, figures, moved = goal.loss(fig), trial, fig, True
                            print(f"{k[0]}.{k[1]} = {trial[k]}: {goal.shown(fig)}",
                                  flush=True)
        print(f"final: {goal.shown(figures)}")
        for (f, n), v in values.items():
            print(f"  {f}.c {n} {v}")
    finally:
        shutil.rmtree(p.tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
