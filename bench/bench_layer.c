/* bench_layer.c -- libmgen's GEMMs in a decoder layer's sequence of kernels at decode, beside
 * cuBLAS FP16 / BF16 in the same sequence: same run, same data. bench_gemm times a GEMM after
 * itself; in an engine each GEMM follows a norm, attention or an activation, and what a
 * programmatic dependent launch overlaps (or a weight stream issued before its wait) shows
 * only there.
 *
 * One layer, nine kernels: RMSNorm -> QKV GEMM -> attention -> O GEMM -> residual add + RMSNorm
 * -> gate_up GEMM -> SiLU * mul -> down GEMM -> residual add. The five non-GEMM kernels are
 * stand-ins (layer_kernels.cu) with the real ones' memory traffic (layer_run.c runs them);
 * attention streams a KV cache of --ctx tokens per layer (2 x kv_dim x ctx x 2 bytes: K and V
 * of the GPU's KV heads, shared by the M rows) and writes M x q_dim. They are programmatic
 * dependent launches in every variant (griddepcontrol.wait first; launch_dependents where
 * --trigger says: right after the wait, or after the last write): only the GEMMs' launches
 * differ.
 * Models (one GPU's share; --print-shapes lists the GEMMs as NxK weights):
 *   llama3-8b       hidden 4096, 32 / 8 heads: qkv 6144x4096, o 4096x4096, gate_up 28672x4096,
 *                   down 4096x14336
 *   llama3-70b-tp4  hidden 8192 at tensor parallel 4, 16 / 2 heads: qkv 2560x8192, o 8192x2048,
 *                   gate_up 14336x8192, down 8192x7168 (the all-reduces left out)
 * Variants, over the same weights (layer_weights.h: a random checkpoint of --fmt, packed by
 * libmgen, and its exact 16-bit dequantization for cuBLAS) and activations:
 *   standins    the stand-ins alone, GEMMs left out
 *   cublas      cublasGemmEx on the dequantized weights (the type of --act, FP32 compute)
 *   mgen_plain  mgen_gemm from a context with plain_launches = 1
 *   mgen_pdl    mgen_gemm from a default context (programmatic dependent launches, sm_90)
 *
 * Method (bench_gemm's, for a sequence):
 * - L layers of distinct weights and KV caches (--layers; by default L >= 4 with one pass over
 *   the 4-bit weights >= 3x L2), run in sequence as a model does; time per layer = pass / L.
 * - events: CUDA events around one pass of L layers, queued behind a spin kernel that holds
 *   the GPU while the host enqueues the pass (twice the last pass's enqueue + 20 us), so the
 *   host's launch rate stays out; the median of --reps passes after --warmup.
 * - graph: the L layers captured into one CUDA graph (bench_time_graph_us), the median of
 *   --reps replays / L, as engines replay decode.
 * - GEMM us = layer us - standins us (same mode and trigger): what the four GEMMs add to a
 *   layer, overlap included; gemm_speedup = cuBLAS's GEMM us / the row's.
 * - Check, per M after its timing: layer 0 once per libmgen variant and trigger (mgen_pdl
 *   also replayed from a graph), every activation but the input poisoned (0xffff, a NaN) first;
 *   the four GEMMs' outputs and the layer's output against cuBLAS's: relative L2 error at most
 *   layer_check_tol (0.05). Both multiply exactly the same weights, so only accumulation
 *   order differs (~1e-3); a missing or wrong tile, or an input read before it was
 *   written, gives far more (or a NaN). A failure makes the exit status 1.
 *
 * Run (GPU machine, repository root; bench/run_layer_device.sh does this):
 *   cmake --build build --target bench_layer && ./build/bench/bench_layer --csv layer.csv
 * Options: --model llama3-8b|llama3-70b-tp4|all (default all)  --act f16|bf16|all (f16)
 *          --fmt gc|g32|g64|g128|nvfp4|mxfp4|... list or all (g128)  --m 1,2,4,8,16,32,64
 *          --ctx 1024  --trigger start|end|both (both)  --mode events|graph|both (both)
 *          --layers N  --reps 30  --warmup 5  --csv FILE (default stdout)  --print-shapes
 * Output: CSV gpu,model,act,fmt,ctx,layers,trigger,mode,M,variant,layer_us,standins_us,gemm_us,
 * gemm_speedup,layer_speedup,weight_GBps,kernels (weight_GBps: the variant's weight bytes per
 * layer / gemm_us; kernels: libmgen's choices for qkv;o;gate_up;down; empty: does not apply),
 * then a summary on stdout: per model, format, mode and trigger a table over M and the
 * geomean speedups of M 1-16 (the issue's >= 3.0x target) and of M >= 32 (no slowdown).
 * Exit status: 0; 1 runtime error (no device included) or a failed check; 2 usage error.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <mgen/mgen.h>

#include "bench_util.h"
#include "cli.h"
#include "layer_ckpt.h"
#include "layer_run.h"
#include "mgen_internal.h"

#define die bench_die

// --------------------------------------------------------------------------- configuration

/* One GPU's share of each model's layer: the one source of the shapes (--print-shapes). */
static const layer_model kModels[] = {
    {"llama3-8b", 4096, 4096, 1024, 14336},    /* 32 query heads, 8 KV heads */
    {"llama3-70b-tp4", 8192, 2048, 256, 7168}, /* 64 / 4 query heads, 8 / 4 KV heads, 28672 / 4 */
};
enum { NMODEL = sizeof kModels / sizeof *kModels };
enum { MODE_EVENTS, MODE_GRAPH, NMODE };
static const char *const kModeNames[NMODE] = {"events", "graph"};
static const mgen_act kActs[] = {MGEN_ACT_F16, MGEN_ACT_BF16};
enum { NACT = 2, NFMT = 16, MAXM = 16, M_MAX = 256, CTX_MAX = 1 << 17, LAYERS_MAX = 64 };
static const int kMs[] = {1, 2, 4, 8, 16, 32, 64};

static layer_fmt fmts[NFMT]; /* the format table's, in its order */
static int nfmt;

typedef struct opts {
  int model_mask, act_mask, fmt_mask, trig_mask, mode_mask;
  int ms[MAXM], nms, ctx, layers, reps, warmup, print_shapes;
  const char *csv;
} opts;

static const char kUsage[] =
    "usage: bench_layer [--model llama3-8b|llama3-70b-tp4|all] [--act f16|bf16|all]\n"
    "                   [--fmt gc|g32|g64|g128|nvfp4|mxfp4|...|all] [--m M,...] [--ctx N]\n"
    "                   [--trigger start|end|both] [--mode events|graph|both] [--layers N]\n"
    "                   [--reps N] [--warmup N] [--csv FILE] [--print-shapes]\n"
    "A decoder layer's kernels at decode (stand-ins around libmgen's or cuBLAS's four GEMMs),\n"
    "per layer time and GEMM time beside cuBLAS. --print-shapes lists the models' GEMMs (no GPU).\n"
    "Exit status: 0; 1 runtime error or a failed check; 2 usage error.\n";

/* A "name,name,all" choice as a mask over n items (all: every one). */
static int choice_mask(const char *option, const char *arg, const char *names, int n) {
  const int i = cli_choice(option, arg, names);
  return i == n ? (1 << n) - 1 : 1 << i;
}

static opts parse_args(int argc, char **argv) {
  enum { OPT_MODEL = CLI_OPT_FIRST_FREE, OPT_ACT, OPT_FMT, OPT_M, OPT_CTX, OPT_TRIGGER, OPT_MODE,
         OPT_LAYERS, OPT_REPS, OPT_WARMUP, OPT_CSV, OPT_PRINT };
  static const struct option kOptions[] = {
      {"model", required_argument, NULL, OPT_MODEL}, {"act", required_argument, NULL, OPT_ACT},
      {"fmt", required_argument, NULL, OPT_FMT}, {"m", required_argument, NULL, OPT_M},
      {"ctx", required_argument, NULL, OPT_CTX}, {"trigger", required_argument, NULL, OPT_TRIGGER},
      {"mode", required_argument, NULL, OPT_MODE}, {"layers", required_argument, NULL, OPT_LAYERS},
      {"reps", required_argument, NULL, OPT_REPS}, {"warmup", required_argument, NULL, OPT_WARMUP},
      {"csv", required_argument, NULL, OPT_CSV}, {"print-shapes", no_argument, NULL, OPT_PRINT},
      CLI_STD_OPTIONS, {NULL, 0, NULL, 0}};
  opts o = {.model_mask = (1 << NMODEL) - 1, .act_mask = 1, .trig_mask = 3, .mode_mask = 3,
            .ctx = 1024, .reps = 30, .warmup = 5};
  char fmt_names[256], model_names[128] = "", act_names[64] = "";
  int g128 = 0;
  for (int i = 0, w, s, g; nfmt < NFMT && mgen__format_at(i, &w, &s, &g); i++, nfmt++) {
    char shortname[32];
    fmts[i] = (layer_fmt){w, s, g, ""};
    mgen__format_name(MGEN__FORMAT_BENCH, w, s, g, fmts[i].name, sizeof fmts[i].name);
    mgen__format_name(MGEN__FORMAT_SHORT, w, s, g, shortname, sizeof shortname);
    if (strcmp(shortname, "g128") == 0) g128 = i;
  }
  o.fmt_mask = 1 << g128;
  mgen__format_short_list(fmt_names, sizeof fmt_names - 4);
  strcat(fmt_names, ",all");
  for (int i = 0; i < NMODEL; i++) strcat(strcat(model_names, kModels[i].name), ",");
  strcat(model_names, "all");
  for (int t = 0; t < NACT; t++) strcat(strcat(act_names, mgen__act_name((int)kActs[t])), ",");
  strcat(act_names, "all");
  cli_item items[NFMT + 1];
  int c;
  cli_begin("bench_layer", kUsage);
  while ((c = cli_next(argc, argv, "h", kOptions)) != -1) {
    switch (c) {
    case 1: cli_usage_error("unexpected argument", optarg);
    case OPT_MODEL: o.model_mask = choice_mask("--model", optarg, model_names, NMODEL); break;
    case OPT_ACT: o.act_mask = choice_mask("--act", optarg, act_names, NACT); break;
    case OPT_TRIGGER:
      o.trig_mask = choice_mask("--trigger", optarg, "start,end,both", NTRIG);
      break;
    case OPT_MODE: o.mode_mask = choice_mask("--mode", optarg, "events,graph,both", NMODE); break;
    case OPT_M: o.nms = cli_int_list("--m", optarg, o.ms, MAXM, 1, M_MAX); break;
    case OPT_CTX: o.ctx = cli_int("--ctx", optarg, 1, CTX_MAX); break;
    case OPT_LAYERS: o.layers = cli_int("--layers", optarg, 1, LAYERS_MAX); break;
    case OPT_REPS: o.reps = cli_int("--reps", optarg, 1, 10000); break;
    case OPT_WARMUP: o.warmup = cli_int("--warmup", optarg, 0, 10000); break;
    case OPT_CSV: o.csv = optarg; break;
    case OPT_PRINT: o.print_shapes = 1; break;
    case OPT_FMT:
      o.fmt_mask = 0;
      for (int i = 0, n = cli_list("--fmt", optarg, items, NFMT + 1); i < n; i++)
        o.fmt_mask |= choice_mask("--fmt", items[i], fmt_names, nfmt);
      for (int f = 0; f < nfmt; f++)
        if ((o.fmt_mask & (1 << f)) && !layer_ckpt_scheme_known(fmts[f].scheme))
          cli_usage_error("--fmt: bench_layer makes no random weights (layer_ckpt.c) for",
                          fmts[f].name);
      break;
    }
  }
  if (!o.nms) {
    o.nms = (int)(sizeof kMs / sizeof *kMs);
    memcpy(o.ms, kMs, sizeof kMs);
  }
  if (o.reps < 20)
    fprintf(stderr, "bench_layer: warning: --reps %d < 20: medians are noisy\n", o.reps);
  return o;
}

/* The models' GEMMs and KV caches, from kModels: no GPU needed. */
static void print_shapes(const opts *o) {
  for (int i = 0; i < NMODEL; i++) {
    if (!(o->model_mask & (1 << i))) continue;
    const layer_model *md = &kModels[i];
    printf("%s: hidden %d", md->name, md->hidden);
    for (int g = 0, n, k; g < NGEMM; g++) {
      layer_gemm_shape(md, g, &n, &k);
      printf(", %s %dx%d", layer_gemm_names[g], n, k);
    }
    printf(", kv cache %zu bytes per layer at ctx %d\n", layer_kv_bytes(md, o->ctx), o->ctx);
  }
}

// --------------------------------------------------------------------------- results

/* One (model, act, format, trigger, mode, M): the four variants' microseconds per layer. */
typedef struct point {
  int model, act, fmt, trig, mode, m;
  double us[NVAR];
} point;

typedef struct results {
  point *v;
  size_t len, cap;
} results;

static void add_point(results *r, point p) {
  if (r->len == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 64;
    if (!(r->v = realloc(r->v, r->cap * sizeof *r->v))) die("out of host memory");
  }
  r->v[r->len++] = p;
}

/* What the GEMMs add to a layer: the variant's time less the stand-ins' alone. */
static double gemm_us(const point *p, int v) { return p->us[v] - p->us[V_STANDINS]; }

/* ",x" with 3 decimals, or "," where x is not a number (a field that does not apply). */
static void put(FILE *f, double x) {
  if (isfinite(x)) fprintf(f, ",%.3f", x);
  else fputc(',', f);
}

static void emit_point(FILE *csv, layer_bench *b, const layer_set *s, const opts *o,
                       const point *p) {
  for (int v = 0; v < NVAR; v++) {
    const int gemms = v != V_STANDINS;
    const double g = gemms ? gemm_us(p, v) : NAN;
    char kernels[512];
    layer_kernel_names(b, s, v, p->m, kernels, sizeof kernels);
    fprintf(csv, "%s,%s,%s,%s,%d,%d,%s,%s,%d,%s", b->gpu, s->md->name, mgen__act_name(s->act),
            s->fmt->name, o->ctx, s->layers, layer_trigger_names[p->trig], kModeNames[p->mode],
            p->m, layer_variant_names[v]);
    put(csv, p->us[v]);
    put(csv, p->us[V_STANDINS]);
    put(csv, g);
    put(csv, gemms && g > 0 ? gemm_us(p, V_CUBLAS) / g : NAN);
    put(csv, gemms ? p->us[V_CUBLAS] / p->us[v] : NAN);
    put(csv, gemms && g > 0 ? (v == V_CUBLAS ? s->wbytes16 : s->wbytes4) / g * 1e-3 : NAN);
    fprintf(csv, ",%s\n", kernels);
  }
  fflush(csv);
  fprintf(
      stderr,
      "  %s %-4s %s M=%-3d trigger %-5s %-6s standins %7.2f cublas %7.2f plain %7.2f pdl %7.2f us"
      "  GEMMs over cuBLAS: plain %.2fx pdl %.2fx\n",
      s->md->name, mgen__act_name(s->act), s->fmt->name, p->m, layer_trigger_names[p->trig],
      kModeNames[p->mode], p->us[V_STANDINS], p->us[V_CUBLAS], p->us[V_MGEN_PLAIN],
      p->us[V_MGEN_PDL], gemm_us(p, V_CUBLAS) / gemm_us(p, V_MGEN_PLAIN),
      gemm_us(p, V_CUBLAS) / gemm_us(p, V_MGEN_PDL));
}

/* Geometric mean of cuBLAS's GEMM time (which 0) or layer time (1) over variant v's, over the
 * points of one table with lo <= M <= hi; 0 where there are none (or a GEMM time <= 0). */
static double geomean(const results *r, const point *key, int v, int which, int lo, int hi) {
  double sum = 0;
  int n = 0;
  for (size_t i = 0; i < r->len; i++) {
    const point *p = &r->v[i];
    if (p->model != key->model || p->act != key->act || p->fmt != key->fmt ||
        p->trig != key->trig || p->mode != key->mode || p->m < lo || p->m > hi)
      continue;
    const double num = which ? p->us[V_CUBLAS] : gemm_us(p, V_CUBLAS),
                 den = which ? p->us[v] : gemm_us(p, v);
    if (!(num > 0 && den > 0)) return 0;
    sum += log(num / den), n++;
  }
  return n ? exp(sum / n) : 0;
}

static void summary(const layer_bench *b, const opts *o, const results *r, const layer_check *cs) {
  int cuda_rt = 0, cublas_v = 0;
  CUDA_CHECK(cudaRuntimeGetVersion(&cuda_rt));
  CUBLAS_CHECK(cublasGetVersion(b->cublas, &cublas_v));
  printf("\n# bench_layer summary\n");
  printf("device: %s, %d SMs, sm_%d, L2 %.1f MB; CUDA runtime %d, cuBLAS %d; libmgen %d\n", b->gpu,
         b->sms, b->sm, b->l2 / 1e6, cuda_rt, cublas_v, mgen_version_number());
  printf("timing: median of %d after %d warm-up; KV cache of %d tokens per layer; stand-ins are "
         "PDL in every variant%s\n",
         o->reps, o->warmup, o->ctx, b->sm < 90 ? " (no PDL before sm_90: plain = pdl)" : "");
  printf("check: %d outputs vs cuBLAS on the same dequantized weights (tolerance %.2f): "
         "%d failed, max error %.3g\n",
         cs->runs, layer_check_tol, cs->failed, cs->max_err);
  for (size_t i = 0; i < r->len; i++) {
    const point *key = &r->v[i];
    int first = 1; /* a table starts at its first point */
    for (size_t j = 0; j < i && first; j++) {
      const point *p = &r->v[j];
      first = !(p->model == key->model && p->act == key->act && p->fmt == key->fmt &&
                p->trig == key->trig && p->mode == key->mode);
    }
    if (!first) continue;
    printf("\n%s %s %s, %s, trigger %s: us per layer; GEMMs = layer - stand-ins; "
           "speedup = cuBLAS / libmgen\n\n",
           kModels[key->model].name, mgen__act_name(kActs[key->act]), fmts[key->fmt].name,
           key->mode == MODE_GRAPH ? "graph replay" : "events", layer_trigger_names[key->trig]);
    printf("| M | stand-ins | cuBLAS | plain | PDL | GEMMs cuBLAS | plain | PDL "
           "| GEMM speedup plain | PDL "
           "| layer speedup PDL |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t j = i; j < r->len; j++) {
      const point *p = &r->v[j];
      if (p->model != key->model || p->act != key->act || p->fmt != key->fmt ||
          p->trig != key->trig || p->mode != key->mode)
        continue;
      printf("| %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2fx | %.2fx | %.2fx |\n",
             p->m, p->us[V_STANDINS], p->us[V_CUBLAS], p->us[V_MGEN_PLAIN], p->us[V_MGEN_PDL],
             gemm_us(p, V_CUBLAS), gemm_us(p, V_MGEN_PLAIN), gemm_us(p, V_MGEN_PDL),
             gemm_us(p, V_CUBLAS) / gemm_us(p, V_MGEN_PLAIN),
             gemm_us(p, V_CUBLAS) / gemm_us(p, V_MGEN_PDL), p->us[V_CUBLAS] / p->us[V_MGEN_PDL]);
    }
    printf("\ngeomean M 1-16: GEMM speedup plain %.2fx, PDL %.2fx, layer PDL %.2fx; "
           "M 32-%d: GEMM speedup PDL %.2fx, layer PDL %.2fx (0: none measured)\n",
           geomean(r, key, V_MGEN_PLAIN, 0, 1, 16), geomean(r, key, V_MGEN_PDL, 0, 1, 16),
           geomean(r, key, V_MGEN_PDL, 1, 1, 16), M_MAX, geomean(r, key, V_MGEN_PDL, 0, 32, M_MAX),
           geomean(r, key, V_MGEN_PDL, 1, 32, M_MAX));
  }
}

// --------------------------------------------------------------------------- main

static void log_cb(void *user, mgen_log_level level, const char *message) {
  (void)user;
  fprintf(stderr, "libmgen %s: %s\n", level == MGEN_LOG_WARN ? "warning" : "info", message);
}

/* Every M of one (model, act, format): each trigger and mode, the four variants, then the check. */
static void bench_set(layer_bench *b, layer_set *s, const opts *o, int mi, int t, FILE *csv,
                      results *res, layer_check *cs) {
  for (int i = 0; i < o->nms; i++) {
    const int m = o->ms[i];
    for (int trig = 0; trig < NTRIG; trig++)
      for (int mode = 0; mode < NMODE; mode++) {
        if (!(o->trig_mask & (1 << trig)) || !(o->mode_mask & (1 << mode))) continue;
        point p = {.model = mi, .act = t, .fmt = (int)(s->fmt - fmts), .trig = trig,
                   .mode = mode, .m = m};
        for (int v = 0; v < NVAR; v++)
          p.us[v] = layer_time(b, s, v, m, trig == TRIG_START, mode == MODE_GRAPH);
        emit_point(csv, b, s, o, &p);
        add_point(res, p);
      }
    layer_check_m(b, s, m, o->trig_mask, cs);
  }
}

int main(int argc, char **argv) {
  opts o = parse_args(argc, argv);
  if (o.print_shapes) {
    print_shapes(&o);
    return 0;
  }
  int count = 0;
  char why[256] = "";
  mgen_status st = mgen_device_count(&count, why, sizeof why);
  if (st != MGEN_OK) die("CUDA cannot start here: %s", why);
  if (count == 0) die("no CUDA device here%s%s: nothing measured", *why ? ": " : "", why);

  layer_bench b = {0};
  struct cudaDeviceProp prop;
  bench_device_name(b.gpu, sizeof b.gpu, &prop);
  b.sm = 10 * prop.major + prop.minor;
  b.sms = prop.multiProcessorCount;
  b.l2 = (size_t)prop.l2CacheSize;
  CUDA_CHECK(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
  CUBLAS_CHECK(cublasCreate(&b.cublas));
  CUBLAS_CHECK(cublasSetStream(b.cublas, b.stream));
  for (int pdl = 0; pdl < 2; pdl++) {
    mgen_ctx_opts mo = {.device = -1, .log = log_cb, .plain_launches = !pdl};
    if ((st = mgen_ctx_create(&b.ctx[pdl], mgen_builtin_table(), &mo)) != MGEN_OK)
      die("%s", mgen_ctx_last_error(NULL));
  }
  CUDA_CHECK(cudaDeviceSynchronize()); /* the contexts' setup may use the legacy stream */
  bench_timer_init(&b.timer, b.stream, o.reps, o.warmup, (size_t)64 << 20);
  FILE *csv = o.csv ? fopen(o.csv, "w") : stdout;
  if (!csv) die("cannot write %s", o.csv);
  fprintf(csv, "gpu,model,act,fmt,ctx,layers,trigger,mode,M,variant,layer_us,standins_us,gemm_us,"
               "gemm_speedup,layer_speedup,weight_GBps,kernels\n");

  results res = {0};
  layer_check cs;
  int mmax = 0; /* the check's host copies: the largest M, the widest activation */
  size_t width = 0;
  for (int i = 0; i < o.nms; i++) mmax = o.ms[i] > mmax ? o.ms[i] : mmax;
  for (int mi = 0; mi < NMODEL; mi++)
    for (int g = 0, n, k; g < NGEMM; g++) {
      layer_gemm_shape(&kModels[mi], g, &n, &k);
      width = (size_t)n > width ? (size_t)n : width; /* outputs: hidden, qkv, gate_up */
    }
  layer_check_init(&cs, (size_t)mmax, width);
  for (int mi = 0; mi < NMODEL; mi++)
    for (int t = 0; t < NACT; t++)
      for (int f = 0; f < nfmt; f++) {
        if (!(o.model_mask & (1 << mi)) || !(o.act_mask & (1 << t)) || !(o.fmt_mask & (1 << f)))
          continue;
        layer_set s;
        layer_set_make(&b, &s, &kModels[mi], kActs[t], &fmts[f], mmax, o.ctx, o.layers,
                       1000 * (uint64_t)mi + 10 * (uint64_t)f);
        bench_set(&b, &s, &o, mi, t, csv, &res, &cs);
        layer_set_free(&s);
      }
  if (csv != stdout && fclose(csv)) die("cannot write %s", o.csv);
  summary(&b, &o, &res, &cs);

  layer_check_free(&cs);
  free(res.v);
  bench_timer_free(&b.timer);
  for (int i = 0; i < 2; i++) mgen_ctx_destroy(b.ctx[i]);
  CUBLAS_CHECK(cublasDestroy(b.cublas));
  CUDA_CHECK(cudaStreamDestroy(b.stream));
  if (cs.failed) {
    fprintf(stderr, "bench_layer: %d outputs failed the check\n", cs.failed);
    return 1;
  }
  return 0;
}
