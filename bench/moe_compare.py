"""moe_compare.py MGEN_CSV ANCHOR_CSV -- bench_moe's rows beside the vLLM Marlin MoE anchor's
(../shared/anchors/vllm-marlin-moe: vllm_marlin_moe.csv) from the same run, as a Markdown table:
per scenario (and skewed routing: SCENARIO+skew4 beside the anchor's; bench_moe's A mode,
+sorted or +rule, beside the anchor's one), M and part (route vs moe_align, gate_up vs
gemm1_gate_up, down vs gemm2_down),
marlin-gen's event time, the anchor's, marlin-gen's speedup over it, and both speedups over
cuBLAS (the faster of the anchor's grouped call and per-expert loop, at the model's own dims).
Only same-run CSVs make ratios worth reading (bench/notes/method.md). Standard library only."""
import csv
import math
import sys

# bench_moe's scenario -> the anchor's scenario, activation and format (the same model shape)
SCENARIOS = {
    "deepseek": ("deepseek-v3-like", "fp16", "u4b8_g128"),
    "mixtral": ("mixtral-8x7b-like", "fp16", "u4b8_g128"),
    "gptoss": ("gpt-oss-120b-like", "bf16", "mxfp4_g32"),
    "qwen3": ("qwen3-30b-a3b-like", "fp16", "u4b8_g128"),
}
PARTS = {"route": "moe_align", "gate_up": "gemm1_gate_up", "down": "gemm2_down"}
MODES = ("+sorted", "+rule")  # bench_moe --a-sorted, --a-rule: how A reaches the GEMM


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n")[0])
    mgen, anchor = read(sys.argv[1]), read(sys.argv[2])
    index = {(r["scenario"], r["gemm"], r["act"], r["fmt"], int(r["M"])): r for r in anchor}
    print("| scenario | M | part | marlin-gen us | graph us | vLLM MoE us | vs vLLM | "
          "marlin-gen vs cuBLAS | vLLM vs cuBLAS |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    missing = 0
    summary = {"decode": [], "large": []}  # (vs vLLM, vs cuBLAS) of the GEMM rows, uniform routing
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
        print(f"| {r['scenario']} | {r['m']} | {r['part']} | {us:.1f} | {float(r['graph_us']):.1f} "
              f"| {them:.1f} | {them / us:.2f} | {ratio(us)} | {ratio(them)} |")
        if gemm != "moe_align" and not plus:
            m = int(r["m"])
            bucket = "decode" if m <= 64 else "large" if m >= 256 else None
            if bucket:
                summary[bucket].append((them / us, best / us if best else None, r))
    # issue #49's targets: decode (M <= 64) >= 1.3x vLLM's Marlin MoE by geomean over scenarios
    # and both GEMMs; M 256-4096 >= 1.5x it and >= 0.9x the faster cuBLAS at every point
    for bucket, label in (("decode", "M 1-64"), ("large", "M 256-4096")):
        rows = summary[bucket]
        if not rows:
            continue
        geo = math.exp(sum(math.log(v) for v, _, _ in rows) / len(rows))
        cub = [(c, r) for _, c, r in rows if c is not None]
        worst = min(cub, key=lambda t: t[0]) if cub else None
        line = f"\n{label}: geomean {geo:.2f}x vLLM's Marlin MoE over {len(rows)} GEMM rows"
        if worst:
            line += (f"; lowest vs cuBLAS {worst[0]:.2f}x ({worst[1]['scenario']} M={worst[1]['m']} "
                     f"{worst[1]['part']})")
        print(line)
    if missing:
        print(f"\n{missing} marlin-gen row(s) without an anchor row (other M or scenario)")


if __name__ == "__main__":
    main()
