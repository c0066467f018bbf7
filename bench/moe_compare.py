"""moe_compare.py MGEN_CSV ANCHOR_CSV -- bench_moe's rows beside the vLLM Marlin MoE anchor's
(../shared/anchors/vllm-marlin-moe: vllm_marlin_moe.csv) from the same run, as a Markdown table:
per scenario (and skewed routing: SCENARIO+skew4 beside the anchor's; bench_moe's A mode,
+sorted or +rule, beside the anchor's one), M and part (route vs moe_align, gate_up vs
gemm1_gate_up, down vs gemm2_down),
marlin-gen's event time, the anchor's, marlin-gen's speedup over it, and both speedups over
cuBLAS (the faster of the anchor's grouped call and per-expert loop, at the model's own dims).
Only same-run CSVs make ratios worth reading (bench/notes/method.md). Standard library only,
and readme_figures.py beside it (its CSV reader).

  moe_compare.py MGEN_CSV ANCHOR_CSV [ANCHOR_DETAIL_CSV]
                                                 the table, then each bucket's summary
  moe_compare.py --check README [--root DIR]     README's MoE figures against the CSVs it names

ANCHOR_DETAIL_CSV (the anchor's vllm_marlin_moe_detail.csv): its moe_align rows say how many
experts the anchor's routing made active per (scenario, M). The two harnesses draw their routes
from different generators, so at decode one may stream an expert more than the other (Mixtral
M = 4: 6 against 5, 20% more weight bytes). With it, the decode bucket also gets its geomean per
active expert, each row's speedup times bench_moe's active experts over the anchor's: what
the speedup would be at equal routes where the GEMM streams its weights (time proportional to
the active experts; an estimate, printed beside the measured one, never instead of it).

--check: README.md's MoE paragraph (from "MoE layers" to the next blank line) names bench_moe's
CSV and the anchor's (bench/results/*.csv or .csv.xz, the anchor's with "anchor" in its name)
and quotes the two geomeans ("**X.XXx** vLLM's at M 1-64 and **Y.YYx** at M 256-4096"); exit 0
where both are what these CSVs give, else 1 naming the figure (2: the paragraph, a CSV or a
figure not found)."""
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from readme_figures import BadInput, read_csv as read  # noqa: E402  (beside this file: .csv or .csv.xz)

# bench_moe's scenario -> the anchor's scenario, activation and format (the same model shape)
SCENARIOS = {
    "deepseek": ("deepseek-v3-like", "fp16", "u4b8_g128"),
    "mixtral": ("mixtral-8x7b-like", "fp16", "u4b8_g128"),
    "gptoss": ("gpt-oss-120b-like", "bf16", "mxfp4_g32"),
    "qwen3": ("qwen3-30b-a3b-like", "fp16", "u4b8_g128"),
}
PARTS = {"route": "moe_align", "gate_up": "gemm1_gate_up", "down": "gemm2_down"}
MODES = ("+unsorted", "+sorted", "+rule")  # bench_moe --unsorted (outermost), --a-sorted, --a-rule


def active_experts(detail):
    """{(anchor scenario, M): active experts} from the anchor's detail CSV's moe_align rows."""
    active = {}
    for r in detail:
        if r.get("gemm") == "moe_align":
            try:
                active[(r["scenario"], int(r["M"]))] = int(r["n_active_experts"])
            except (KeyError, TypeError, ValueError):
                raise BadInput("the anchor's detail CSV, line %d: M %r, n_active_experts %r: "
                               "not whole numbers" % (r["_line"], r.get("M"),
                                                      r.get("n_active_experts")))
    return active


def compare(mgen, anchor, out=print, detail=None):
    """Prints the table and the summary through `out`; returns {bucket label: geomean}.
    detail: the anchor's detail rows (active_experts), for the decode geomean per active expert."""
    active = active_experts(detail) if detail is not None else {}
    index = {(r["scenario"], r["gemm"], r["act"], r["fmt"], int(r["M"])): r for r in anchor}
    out("| scenario | M | part | marlin-gen us | graph us | vLLM MoE us | vs vLLM | "
        "marlin-gen vs cuBLAS | vLLM vs cuBLAS |")
    out("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    missing = 0
    summary = {"decode": [], "large": []}  # (vs vLLM, vs cuBLAS) of the GEMM rows, uniform routing
    per_expert = []  # decode rows' vs vLLM times bench_moe's active experts over the anchor's
    for r in mgen:
        scenario = r["scenario"]
        for mode in MODES:
            scenario = scenario.removesuffix(mode)
        base, plus, routing = scenario.partition("+")  # "deepseek+skew4": skewed routing
        if r["part"] not in PARTS or base not in SCENARIOS:
            continue
        name, act, fmt = SCENARIOS[base]
        name += plus + routing
        gemm = PARTS[r["part"]]
        key = (name, gemm, "-" if gemm == "moe_align" else act, "-" if gemm == "moe_align" else fmt,
               int(r["m"]))
        a = index.get(key)
        if a is None:
            missing += 1
            continue
        us, them = float(r["us"]), float(a["us"])
        cublas = [float(a[c]) for c in ("baseline_us", "baseline_loop_us") if a.get(c)]
        best = min(cublas) if cublas else None
        ratio = lambda t: f"{best / t:.2f}" if best else "-"
        out(f"| {r['scenario']} | {r['m']} | {r['part']} | {us:.1f} | {float(r['graph_us']):.1f} "
            f"| {them:.1f} | {them / us:.2f} | {ratio(us)} | {ratio(them)} |")
        if gemm != "moe_align" and not plus:
            m = int(r["m"])
            bucket = "decode" if m <= 64 else "large" if m >= 256 else None
            if bucket:
                summary[bucket].append((them / us, best / us if best else None, r))
            theirs = active.get((name, m))
            if bucket == "decode" and theirs:
                per_expert.append(them / us * int(r["active_experts"]) / theirs)
    # issue #49's targets: decode (M <= 64) >= 1.3x vLLM's Marlin MoE by geomean over scenarios
    # and both GEMMs; M 256-4096 >= 1.5x it and >= 0.9x the faster cuBLAS at every point
    geomeans = {}
    for bucket, label in (("decode", "M 1-64"), ("large", "M 256-4096")):
        rows = summary[bucket]
        if not rows:
            continue
        geo = math.exp(sum(math.log(v) for v, _, _ in rows) / len(rows))
        geomeans[label] = geo
        cub = [(c, r) for _, c, r in rows if c is not None]
        worst = min(cub, key=lambda t: t[0]) if cub else None
        line = f"\n{label}: geomean {geo:.2f}x vLLM's Marlin MoE over {len(rows)} GEMM rows"
        if worst:
            line += (f"; lowest vs cuBLAS {worst[0]:.2f}x ({worst[1]['scenario']} M={worst[1]['m']} "
                     f"{worst[1]['part']})")
        out(line)
        if bucket == "decode" and active:
            if len(per_expert) == len(rows):
                pe = math.exp(sum(math.log(v) for v in per_expert) / len(per_expert))
                out("  per active expert (the anchor's routes activate other counts): "
                    f"geomean {pe:.2f}x")
            else:
                out(f"  per active expert: {len(rows) - len(per_expert)} decode row(s) without the "
                    "anchor's active experts (no geomean)")
        misses = sorted((c, r) for c, r in cub if c < 0.9)
        if misses:
            out("  under 0.9x cuBLAS: " + ", ".join(f"{r['scenario']} M={r['m']} {r['part']} {c:.2f}x"
                                                    for c, r in misses))
    if missing:
        out(f"\n{missing} marlin-gen row(s) without an anchor row (other M or scenario)")
    return geomeans


def check(readme, root):
    """README's MoE figures against the CSVs its MoE paragraph names; the exit status."""
    with open(readme) as f:
        text = f.read()
    start = text.find("MoE layers")
    if start < 0:
        print(f"moe_compare: {readme}: no paragraph starting 'MoE layers'", file=sys.stderr)
        return 2
    end = text.find("\n\n", start)
    para = " ".join(text[start:end if end >= 0 else len(text)].split())
    csvs = re.findall(r"bench/results/[\w.-]+\.csv(?:\.xz)?", para)
    anchors = [c for c in csvs if "anchor" in os.path.basename(c)]
    mgens = [c for c in csvs if "anchor" not in os.path.basename(c)]
    if len(anchors) != 1 or len(mgens) != 1:
        print(f"moe_compare: {readme}: the MoE paragraph names {len(mgens)} bench_moe CSV(s) and "
              f"{len(anchors)} anchor CSV(s), not one each: {csvs}", file=sys.stderr)
        return 2
    quoted = re.search(r"\*\*(\d+\.\d\d)x\*\* vLLM's at M 1-64 and \*\*(\d+\.\d\d)x\*\* at M 256-4096", para)
    if not quoted:
        print(f"moe_compare: {readme}: the MoE paragraph quotes no '**X.XXx** vLLM's at M 1-64 and "
              "**Y.YYx** at M 256-4096'", file=sys.stderr)
        return 2
    try:
        geo = compare(read(os.path.join(root, mgens[0])), read(os.path.join(root, anchors[0])),
                      out=lambda *_: None)
    except BadInput as e:
        print(f"moe_compare: {e}", file=sys.stderr)
        return 2
    status = 0
    for label, said in zip(("M 1-64", "M 256-4096"), quoted.groups()):
        got = f"{geo[label]:.2f}" if label in geo else "none"
        if got != said:
            print(f"moe_compare: {readme}: {label} says {said}x, {mgens[0]} beside {anchors[0]} gives "
                  f"{got}x", file=sys.stderr)
            status = 1
    return status


def main():
    args = sys.argv[1:]
    if args[:1] == ["--check"] and len(args) in (2, 4) and (len(args) == 2 or args[2] == "--root"):
        root = args[3] if len(args) == 4 else "."
        sys.exit(check(args[1], root))
    if len(args) not in (2, 3) or args[0].startswith("--"):
        sys.exit(__doc__.split("\n")[0])
    try:
        compare(read(args[0]), read(args[1]), detail=read(args[2]) if len(args) == 3 else None)
    except BadInput as e:
        sys.exit(f"moe_compare: {e}")


if __name__ == "__main__":
    main()
