/* test_api_gpu.c -- API misuse on a real context and real device buffers: NULL and
 * misaligned pointers, m = 0, unsupported n / k / group / format, unknown kernel names, mixed
 * activation types (BF16 A over FP16 scales and the reverse, through all three GEMM entry
 * points, on the real table's f16 and bf16 kernels: ERR_UNSUPPORTED_FORMAT naming both). Each
 * must return its documented status with a non-empty mgen_ctx_last_error, launch nothing
 * (the output stays poisoned), leave no CUDA error behind, and a valid GEMM must still work
 * afterwards (also with a bias, mgen_weights.d_bias: A = 0 and W = 0 make C the bias in every
 * row, bit for bit; a misaligned one is among the refusals). Also: context creation errors and
 * the log callback, a context over the fake table (its launchers run through a real context),
 * the built-in table's invariants, and the workspace bound (opts.max_workspaces: one workspace serving three streams, same results) and
 * opts.max_sms (a GEMM on 7 SMs: the workspace for 7, the same product).
 * Run: build/tests/test_api_gpu */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gpu_util.h"
#include "half.h"
#include "rng.h"

static mgen_ctx *ctx;
static int log_infos, log_warns;

static void log_fn(void *user, mgen_log_level level, const char *message) {
  (void)user;
  (void)message;
  log_infos += level == MGEN_LOG_INFO;
  log_warns += level == MGEN_LOG_WARN;
}

#define EXPECT(call, status)                                                                   \
  do {                                                                                         \
    mgen_status st_ = (call);                                                                  \
    CHECK(st_ == (status), "%s: %s (%s), expected %s", #call, mgen_status_str(st_),            \
          mgen_ctx_last_error(ctx), mgen_status_str(status));                                  \
    CHECK(mgen_ctx_last_error(ctx)[0] != '\0', "%s: empty last_error", #call);                \
    CHECK(cudaGetLastError() == cudaSuccess, "%s left a CUDA error", #call);                   \
  } while (0)

/* First u4b8 kernel of (act, group) this device runs, or NULL. */
static const mgen_kernel_desc *kernel_of(int act, int group) {
  const mgen_table *t = mgen_builtin_table();
  for (size_t i = 0; i < t->count; i++)
    if (t->kernels[i].op == MGEN_OP_DENSE && t->kernels[i].group == group && t->kernels[i].act == act &&
        gpu_default_layout(&t->kernels[i]) &&
        t->kernels[i].wfmt == MGEN_WFMT_U4B8 && mgen_kernel_runs_on(&t->kernels[i], mgen_ctx_sm(ctx)))
      return &t->kernels[i];
  return NULL;
}

/* Whether `msg` names both activation types: "bf16", and "f16" other than inside "bf16". */
static int names_both_types(const char *msg) {
  int f16 = 0;
  for (const char *p = strstr(msg, "f16"); p != NULL; p = strstr(p + 1, "f16"))
    f16 |= p == msg || p[-1] != 'b';
  return f16 && strstr(msg, "bf16") != NULL;
}

/* A mixed-type call: ERR_UNSUPPORTED_FORMAT (EXPECT's checks) and a message naming both. */
#define EXPECT_MIXED(call)                                                                     \
  do {                                                                                         \
    EXPECT(call, MGEN_ERR_UNSUPPORTED_FORMAT);                                                 \
    CHECK(names_both_types(mgen_ctx_last_error(ctx)), "%s: message '%s' does not name f16 "    \
          "and bf16", #call, mgen_ctx_last_error(ctx));                                        \
  } while (0)

/* BF16 activations with FP16 scales and the reverse, on weights `w` (FP16 scales) over a
 * kernel `d` of w's key; db is the bf16 kernel of the same group. Nothing may launch. */
static void test_mixed_types(const mgen_kernel_desc *d, const mgen_kernel_desc *db, int m,
                             const char *d_a, const mgen_weights *w, char *d_c) {
  const char *choice = NULL;
  mgen_weights wb = *w;
  wb.act = MGEN_ACT_BF16; /* the same buffers, described as holding BF16 scales */
  EXPECT_MIXED(mgen_gemm(ctx, MGEN_ACT_BF16, m, d_a, w, d_c, NULL));
  EXPECT_MIXED(mgen_gemm(ctx, MGEN_ACT_F16, m, d_a, &wb, d_c, NULL));
  EXPECT_MIXED(mgen_gemm_choice(ctx, MGEN_ACT_BF16, m, w, &choice));
  EXPECT_MIXED(mgen_gemm_choice(ctx, MGEN_ACT_F16, m, &wb, &choice));
  CHECK(choice == NULL, "a failing choice wrote its out-parameter");
  EXPECT_MIXED(mgen_gemm_kernel(ctx, d->name, MGEN_ACT_BF16, m, d_a, w, d_c, NULL));
  /* Consistent call and weights, but a kernel of the other type. */
  EXPECT_MIXED(mgen_gemm_kernel(ctx, d->name, MGEN_ACT_BF16, m, d_a, &wb, d_c, NULL));
  if (db != NULL) {
    EXPECT_MIXED(mgen_gemm_kernel(ctx, db->name, MGEN_ACT_BF16, m, d_a, w, d_c, NULL));
    EXPECT_MIXED(mgen_gemm_kernel(ctx, db->name, MGEN_ACT_F16, m, d_a, &wb, d_c, NULL));
    EXPECT_MIXED(mgen_gemm_kernel(ctx, db->name, MGEN_ACT_F16, m, d_a, w, d_c, NULL));
  }
}

static void test_misuse(void) {
  const mgen_kernel_desc *d = kernel_of(MGEN_ACT_F16, 128);
  if (d == NULL) d = kernel_of(MGEN_ACT_F16, 0);
  CHECK(d != NULL, "no f16/u4b8 kernel in the table");
  if (d == NULL) return;
  const mgen_kernel_desc *db = kernel_of(MGEN_ACT_BF16, d->group);
  CHECK(db != NULL, "no bf16/u4b8 kernel of group %d in the table", d->group);
  const int n = 2 * d->tile_n * 4, k = d->tile_k * 8, m = 33;
  mgen_weights w = {.wfmt = MGEN_WFMT_U4B8, .act = MGEN_ACT_F16, .scheme = MGEN_SCHEME_GROUP,
                    .group = d->group, .n = n, .k = k};
  size_t qbytes, sbytes;
  MGEN_CHECK(ctx, mgen_weights_bytes(&w, &qbytes, &sbytes));
  char *d_a = gpu_alloc((size_t)m * k * 2 + 64), *d_c = gpu_alloc((size_t)m * n * 2 + 64);
  w.d_q = gpu_alloc(qbytes + 64);
  w.d_scales = gpu_alloc(sbytes + 64);
  CUDA_CHECK(cudaMemset(d_a, 0, (size_t)m * k * 2 + 64));
  CUDA_CHECK(cudaMemset(w.d_q, 0x88, qbytes));      /* all codes 8: W = 0 */
  CUDA_CHECK(cudaMemset(w.d_scales, 0, sbytes));
  CUDA_CHECK(cudaMemset(d_c, 0xFF, (size_t)m * n * 2 + 64));
  mgen_weights bad;

  EXPECT(mgen_gemm(ctx, w.act, m, NULL, &w, d_c, NULL), MGEN_ERR_NULL_POINTER);
  EXPECT(mgen_gemm(ctx, w.act, m, d_a, &w, NULL, NULL), MGEN_ERR_NULL_POINTER);
  EXPECT(mgen_gemm(ctx, MGEN_ACT_F16, m, d_a, NULL, d_c, NULL), MGEN_ERR_NULL_POINTER);
  bad = w, bad.d_q = NULL;
  EXPECT(mgen_gemm(ctx, bad.act, m, d_a, &bad, d_c, NULL), MGEN_ERR_NULL_POINTER);
  EXPECT(mgen_gemm(ctx, w.act, m, d_a + 2, &w, d_c, NULL), MGEN_ERR_MISALIGNED);
  EXPECT(mgen_gemm(ctx, w.act, m, d_a, &w, d_c + 8, NULL), MGEN_ERR_MISALIGNED);
  bad = w, bad.d_q = (char *)w.d_q + 4;
  EXPECT(mgen_gemm(ctx, bad.act, m, d_a, &bad, d_c, NULL), MGEN_ERR_MISALIGNED);
  bad = w, bad.d_scales = (char *)w.d_scales + 2;
  EXPECT(mgen_gemm(ctx, bad.act, m, d_a, &bad, d_c, NULL), MGEN_ERR_MISALIGNED);
  bad = w, bad.d_bias = d_a + 2; /* a bias one element off 16 bytes */
  EXPECT(mgen_gemm(ctx, bad.act, m, d_a, &bad, d_c, NULL), MGEN_ERR_MISALIGNED);
  EXPECT(mgen_gemm_kernel(ctx, d->name, bad.act, m, d_a, &bad, d_c, NULL), MGEN_ERR_MISALIGNED);
  EXPECT(mgen_gemm(ctx, w.act, 0, d_a, &w, d_c, NULL), MGEN_ERR_INVALID_ARG);
  EXPECT(mgen_gemm(ctx, w.act, -1, d_a, &w, d_c, NULL), MGEN_ERR_INVALID_ARG);
  bad = w, bad.n = n + 8; /* no tile_n divides it */
  EXPECT(mgen_gemm(ctx, bad.act, m, d_a, &bad, d_c, NULL), MGEN_ERR_UNSUPPORTED_SHAPE);
  bad = w, bad.n = 1000;
  EXPECT(mgen_gemm(ctx, bad.act, m, d_a, &bad, d_c, NULL), MGEN_ERR_UNSUPPORTED_SHAPE);
  CHECK(strstr(mgen_ctx_last_error(ctx), "n=1000") != NULL, "%s", mgen_ctx_last_error(ctx));
  bad = w, bad.k = k + 8;
  EXPECT(mgen_gemm_kernel(ctx, d->name, bad.act, m, d_a, &bad, d_c, NULL), MGEN_ERR_UNSUPPORTED_SHAPE);
  bad = w, bad.group = 96;
  EXPECT(mgen_gemm(ctx, bad.act, m, d_a, &bad, d_c, NULL), MGEN_ERR_UNSUPPORTED_FORMAT);
  bad = w, bad.wfmt = MGEN_WFMT_FE2M1;
  EXPECT(mgen_gemm(ctx, bad.act, m, d_a, &bad, d_c, NULL), MGEN_ERR_UNSUPPORTED_FORMAT);
  bad = w, bad.wfmt = MGEN_WFMT_U4; /* u4b8's scheme: u4's is ASYM */
  EXPECT(mgen_gemm(ctx, bad.act, m, d_a, &bad, d_c, NULL), MGEN_ERR_UNSUPPORTED_FORMAT);
  bad = w, bad.group = d->group == 0 ? 128 : 0;
  if (kernel_of(MGEN_ACT_F16, bad.group) != NULL)
    EXPECT(mgen_gemm_kernel(ctx, d->name, bad.act, m, d_a, &bad, d_c, NULL), MGEN_ERR_UNSUPPORTED_FORMAT);
  EXPECT(mgen_gemm_kernel(ctx, "mgen_sm80_f16_u4b8_g128_1x1x1_s1_w1_swnone", w.act, m, d_a, &w, d_c, NULL),
         MGEN_ERR_UNKNOWN_KERNEL);
  EXPECT(mgen_gemm_kernel(ctx, NULL, w.act, m, d_a, &w, d_c, NULL), MGEN_ERR_NULL_POINTER);
  EXPECT(mgen_quantize(ctx, NULL, &w, NULL), MGEN_ERR_NULL_POINTER);
  EXPECT(mgen_quantize(ctx, d_a + 1, &w, NULL), MGEN_ERR_MISALIGNED);
  EXPECT(mgen_pack(ctx, NULL, w.d_scales, &w, NULL), MGEN_ERR_NULL_POINTER);
  test_mixed_types(d, db, m, d_a, &w, d_c);

  /* Nothing above launched: the output still holds the poison. */
  CUDA_CHECK(cudaDeviceSynchronize());
  unsigned char *host = malloc((size_t)m * n * 2);
  CUDA_CHECK(cudaMemcpy(host, d_c, (size_t)m * n * 2, cudaMemcpyDeviceToHost));
  size_t touched = 0;
  for (size_t i = 0; i < (size_t)m * n * 2; i++) touched += host[i] != 0xFF;
  CHECK(touched == 0, "%zu bytes of C written by failing calls", touched);

  /* A valid call still works (A = 0, W = 0: C = 0 exactly). */
  MGEN_CHECK(ctx, mgen_gemm_kernel(ctx, d->name, w.act, m, d_a, &w, d_c, NULL));
  MGEN_CHECK(ctx, mgen_gemm(ctx, w.act, m, d_a, &w, d_c, NULL));
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(host, d_c, (size_t)m * n * 2, cudaMemcpyDeviceToHost));
  touched = 0;
  for (size_t i = 0; i < (size_t)m * n * 2; i++) touched += host[i] != 0;
  CHECK(touched == 0, "C = 0 expected, %zu non-zero bytes", touched);
  /* With a bias b: every row of C is b bit for bit (0 + b, rounded once, is b), whichever
   * columns, rows, tiles or split sums the kernel has; b in [-7.375, 7.625], never 0. */
  uint16_t *bias = malloc(sizeof *bias * (size_t)n), *d_bias = gpu_alloc(sizeof *bias * (size_t)n);
  for (int j = 0; j < n; j++) bias[j] = half_from_double((j % 61 - 30) * 0.25 + 0.125);
  CUDA_CHECK(cudaMemcpy(d_bias, bias, sizeof *bias * (size_t)n, cudaMemcpyHostToDevice));
  mgen_weights wbias = w;
  wbias.d_bias = d_bias;
  for (int call = 0; call < 2; call++) {
    CUDA_CHECK(cudaMemset(d_c, 0xFF, (size_t)m * n * 2));
    if (call == 0)
      MGEN_CHECK(ctx, mgen_gemm_kernel(ctx, d->name, w.act, m, d_a, &wbias, d_c, NULL));
    else
      MGEN_CHECK(ctx, mgen_gemm(ctx, w.act, m, d_a, &wbias, d_c, NULL));
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(host, d_c, (size_t)m * n * 2, cudaMemcpyDeviceToHost));
    const uint16_t *c16 = (const uint16_t *)host;
    size_t wrong = 0;
    for (size_t i = 0; i < (size_t)m * n; i++) wrong += c16[i] != bias[i % (size_t)n];
    CHECK(wrong == 0, "%s with a bias, A = 0, W = 0: %zu elements of C are not the bias",
          call == 0 ? d->name : "mgen_gemm", wrong);
  }
  CUDA_CHECK(cudaFree(d_bias));
  free(bias);
  /* The same buffers as BF16 (zero bits are zero in both types) through the bf16 kernels. */
  if (db != NULL) {
    mgen_weights wb = w;
    wb.act = MGEN_ACT_BF16;
    CUDA_CHECK(cudaMemset(d_c, 0xFF, (size_t)m * n * 2));
    MGEN_CHECK(ctx, mgen_gemm_kernel(ctx, db->name, MGEN_ACT_BF16, m, d_a, &wb, d_c, NULL));
    MGEN_CHECK(ctx, mgen_gemm(ctx, MGEN_ACT_BF16, m, d_a, &wb, d_c, NULL));
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(host, d_c, (size_t)m * n * 2, cudaMemcpyDeviceToHost));
    touched = 0;
    for (size_t i = 0; i < (size_t)m * n * 2; i++) touched += host[i] != 0;
    CHECK(touched == 0, "bf16: C = 0 expected, %zu non-zero bytes", touched);
  }
  free(host);
  CUDA_CHECK(cudaFree(d_a));
  CUDA_CHECK(cudaFree(d_c));
  CUDA_CHECK(cudaFree(w.d_q));
  CUDA_CHECK(cudaFree(w.d_scales));
}

static int stub_launches, stub_prepares, stub_result;
static int stub_launch(const mgen_launch_args *args, void *stream) {
  (void)args;
  (void)stream;
  stub_launches++;
  return stub_result;
}
static int stub_prepare(void) { return stub_prepares++, 0; }

static void test_contexts(void) {
  int devices = 0;
  CUDA_CHECK(cudaGetDeviceCount(&devices));
  mgen_ctx *other = (mgen_ctx *)0x1;
  mgen_ctx_opts opts = {.device = devices, .log = log_fn};
  CHECK(mgen_ctx_create(&other, mgen_builtin_table(), &opts) == MGEN_ERR_INVALID_ARG, "bad device");
  CHECK(other == (mgen_ctx *)0x1 && log_warns == 1, "untouched, warned (%d)", log_warns);
  opts.device = -2;
  CHECK(mgen_ctx_create(&other, mgen_builtin_table(), &opts) == MGEN_ERR_INVALID_ARG, "device -2");

  static const mgen_kernel_desc future[] = {{.name = "future", .sm_min = 1000, .tile_m = 16,
                                             .tile_n = 64, .tile_k = 64, .launch = stub_launch}};
  static const mgen_table future_table = {future, 1, 0, "future"};
  CHECK(mgen_ctx_create(&other, &future_table, NULL) == MGEN_ERR_NO_KERNEL, "sm_1000 kernel");

  /* A context over fake descriptors: prepare at creation, the launcher through mgen_gemm. */
  static const mgen_kernel_desc stub[] = {
      {.name = "stub_g128", .family = MGEN_FAMILY_MMA, .act = MGEN_ACT_F16,
       .wfmt = MGEN_WFMT_U4B8, .group = 128, .layout = MGEN_LAYOUT_MMA, .tile_m = 16,
       .tile_n = 64, .tile_k = 64,
       .sm_min = 0, .launch = stub_launch, .prepare = stub_prepare}};
  static const mgen_table stub_table = {stub, 1, 0, "stub"};
  opts.device = 0;
  log_infos = 0;
  MGEN_CHECK(other, mgen_ctx_create(&other, &stub_table, &opts));
  CHECK(stub_prepares == 1 && log_infos == 1, "prepared %d, logged %d", stub_prepares, log_infos);
  CHECK(strcmp(mgen_ctx_last_error(other), "") == 0, "fresh context has no error");
  char *buf = gpu_alloc(1 << 16);
  mgen_weights w = {.wfmt = MGEN_WFMT_U4B8, .act = MGEN_ACT_F16, .scheme = MGEN_SCHEME_GROUP,
                    .group = 128, .n = 64, .k = 128, .d_q = buf, .d_scales = buf + 8192};
  MGEN_CHECK(other, mgen_gemm(other, w.act, 3, buf, &w, buf, NULL));
  CHECK(stub_launches == 1, "launched %d", stub_launches);
  stub_result = (int)cudaErrorLaunchOutOfResources;
  mgen_status st = mgen_gemm(other, w.act, 3, buf, &w, buf, NULL);
  CHECK(st == MGEN_ERR_CUDA && strstr(mgen_ctx_last_error(other), "stub_g128") != NULL,
        "%s: %s", mgen_status_str(st), mgen_ctx_last_error(other));
  stub_result = 0;
  mgen_ctx_destroy(other);
  CUDA_CHECK(cudaFree(buf));
}

/* The generated table: unique names, sorted by key, fields consistent with the name. */
static void test_builtin_table(void) {
  const mgen_table *t = mgen_builtin_table();
  CHECK(t->generator != NULL && strncmp(t->generator, "marlin-gen", 10) == 0, "generator");
  for (size_t i = 0; i < t->count; i++) {
    const mgen_kernel_desc *d = &t->kernels[i];
    CHECK(d->name != NULL && mgen_table_find(t, d->name) == (int)i, "name %zu unique", i);
    CHECK(d->launch != NULL && d->tile_m > 0 && d->tile_n > 0 && d->tile_k > 0 && d->sm_min >= 80,
          "%s fields", d->name);
    if (i == 0) continue;
    const mgen_kernel_desc *e = &t->kernels[i - 1];
    const int key[] = {e->op - d->op, e->act - d->act, e->wfmt - d->wfmt, e->group - d->group,
                       e->family - d->family, e->tile_m - d->tile_m, e->tile_n - d->tile_n,
                       e->tile_k - d->tile_k};
    int order = 0;
    for (size_t j = 0; j < sizeof key / sizeof key[0] && order == 0; j++) order = key[j];
    CHECK(order <= 0, "table not sorted at %s", d->name);
  }
}

/* C of one GEMM per stream on `streams` streams, on a context limited to `max_workspaces`
 * (0: the default) and `max_sms` (0: all); returns the workspace counts the context reports.
 * The GEMM has a K long enough that its blocks reduce across the workspace. */
static void gemms_on_streams(int max_workspaces, int max_sms, int streams, const uint16_t *h_w,
                             const uint16_t *h_a, int m, int n, int k, uint16_t *h_c,
                             int *allocated, int *limit, size_t *bytes_each) {
  mgen_ctx *c = NULL;
  mgen_ctx_opts opts = {.device = -1, .max_workspaces = max_workspaces, .max_sms = max_sms};
  MGEN_CHECK(c, mgen_ctx_create(&c, mgen_builtin_table(), &opts));
  mgen_weights w = {.wfmt = MGEN_WFMT_U4B8, .act = MGEN_ACT_F16, .scheme = MGEN_SCHEME_GROUP,
                    .group = 128, .n = n, .k = k};
  size_t qb, sb;
  MGEN_CHECK(c, mgen_weights_bytes(&w, &qb, &sb));
  void *d_w = gpu_alloc((size_t)n * k * 2), *d_a = gpu_alloc((size_t)m * k * 2);
  w.d_q = gpu_alloc(qb), w.d_scales = gpu_alloc(sb);
  gpu_upload(d_w, h_w, (size_t)n * k * 2);
  gpu_upload(d_a, h_a, (size_t)m * k * 2);
  MGEN_CHECK(c, mgen_quantize(c, d_w, &w, NULL));
  cudaStream_t s[4];
  void *d_c[4];
  for (int i = 0; i < streams; i++) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    d_c[i] = gpu_alloc((size_t)m * n * 2);
    CUDA_CHECK(cudaMemsetAsync(d_c[i], 0xFF, (size_t)m * n * 2, s[i]));
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int rep = 0; rep < 3; rep++) /* interleaved: the streams take the workspaces in turn */
    for (int i = 0; i < streams; i++)
      MGEN_CHECK(c, mgen_gemm(c, w.act, m, d_a, &w, d_c[i], s[i]));
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < streams; i++) {
    CUDA_CHECK(cudaMemcpy(h_c + (size_t)i * m * n, d_c[i], (size_t)m * n * 2,
                          cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaStreamDestroy(s[i]));
    CUDA_CHECK(cudaFree(d_c[i]));
  }
  MGEN_CHECK(c, mgen_ctx_workspaces(c, bytes_each, allocated, limit));
  CUDA_CHECK(cudaFree(d_w));
  CUDA_CHECK(cudaFree(d_a));
  CUDA_CHECK(cudaFree(w.d_q));
  CUDA_CHECK(cudaFree(w.d_scales));
  mgen_ctx_destroy(c);
}

/* mgen.h's workspace size on `sms` SMs: FP32 partials for sms * the largest 2 * blocks_per_sm *
 * block tile area, and an int counter per block slot. */
static size_t workspace_bytes(int sms, size_t area, size_t blocks) {
  return 4 * (size_t)sms * area + 4 * (size_t)sms * blocks;
}

static void test_workspaces(void) {
  enum { M = 17, N = 4096, K = 11008, STREAMS = 3 };
  uint16_t *h_w = malloc((size_t)N * K * 2), *h_a = malloc((size_t)M * K * 2);
  uint16_t *one = malloc((size_t)STREAMS * M * N * 2), *many = malloc((size_t)STREAMS * M * N * 2);
  rng r;
  rng_seed(&r, rng_test_seed("test_api_gpu.workspaces"));
  for (size_t i = 0; i < (size_t)N * K; i++) h_w[i] = half_from_double(rng_uniform(&r, -1, 1));
  for (size_t i = 0; i < (size_t)M * K; i++) h_a[i] = half_from_double(rng_uniform(&r, -1, 1));
  int allocated, limit;
  size_t bytes;
  gemms_on_streams(1, 0, STREAMS, h_w, h_a, M, N, K, one, &allocated, &limit, &bytes);
  CHECK(allocated == 1 && limit == 2, "max_workspaces 1: %d allocated, limit %d", allocated,
        limit);
  gemms_on_streams(0, 0, STREAMS, h_w, h_a, M, N, K, many, &allocated, &limit, &bytes);
  CHECK(allocated == STREAMS && limit == 8, "default: %d allocated (%d streams), limit %d",
        allocated, STREAMS, limit);
  /* Every stream's C is the same, bit for bit, whichever workspace served it. */
  CHECK(memcmp(one, many, (size_t)M * N * 2) == 0, "one workspace vs many: C differs");
  for (int i = 1; i < STREAMS; i++)
    CHECK(memcmp(one, one + (size_t)i * M * N, (size_t)M * N * 2) == 0 &&
              memcmp(many, many + (size_t)i * M * N, (size_t)M * N * 2) == 0,
          "stream %d's C differs from stream 0's", i);
  CHECK(half_to_double(one[0]) == half_to_double(one[0]), "C is not NaN (poison overwritten)");
  /* The size mgen.h states: FP32 partials for SMs * the largest 2 * blocks_per_sm * block tile
   * area (both families: two slots per block), and an int counter per block slot, over the
   * builtin table. */
  size_t area = 1, blocks = 1;
  const mgen_table *t = mgen_builtin_table();
  for (size_t i = 0; i < t->count; i++) {
    const size_t b = t->kernels[i].blocks_per_sm > 0 ? (size_t)t->kernels[i].blocks_per_sm : 1;
    const size_t f = 2;
    if (f * b * t->kernels[i].tile_m * t->kernels[i].tile_n > area)
      area = f * b * t->kernels[i].tile_m * t->kernels[i].tile_n;
    if (b > blocks) blocks = b;
  }
  struct cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const size_t want = workspace_bytes(prop.multiProcessorCount, area, blocks);
  CHECK(bytes == want, "workspace %zu bytes, mgen.h's formula gives %zu", bytes, want);
  printf("test_api_gpu: workspace %zu bytes (%.2f MiB) each on %d SMs\n", bytes,
         bytes / 1048576.0, prop.multiProcessorCount);
  /* max_sms: grids and workspaces for that many SMs, the same product (another split of K, so
   * equal within rounding, not bit for bit); more SMs than the device has means all of them. */
  enum { FEW = 7 };
  uint16_t *few = malloc((size_t)M * N * 2);
  gemms_on_streams(0, FEW, 1, h_w, h_a, M, N, K, few, &allocated, &limit, &bytes);
  CHECK(bytes == workspace_bytes(FEW, area, blocks),
        "max_sms %d: workspace %zu bytes, the formula gives %zu", FEW, bytes,
        workspace_bytes(FEW, area, blocks));
  /* Another kernel may serve it (the cost model sees 7 SMs), with group scales rounded in
   * FP16 instead of FP32: ~1e-3 of the output's scale, far below what a wrong sum gives. */
  double rms = 0;
  for (size_t i = 0; i < (size_t)M * N; i++) rms += half_to_double(one[i]) * half_to_double(one[i]);
  rms = sqrt(rms / ((double)M * N));
  int off = 0;
  for (size_t i = 0; i < (size_t)M * N; i++) {
    const double a = half_to_double(one[i]), b = half_to_double(few[i]);
    off += !(fabs(a - b) <= 2e-3 * fabs(a) + 4e-3 * rms); /* NaN (poison left) counts */
  }
  CHECK(off == 0, "max_sms %d: %d of %d outputs differ from the all-SM GEMM's", FEW, off, M * N);
  gemms_on_streams(0, 1 << 20, 1, h_w, h_a, M, N, K, few, &allocated, &limit, &bytes);
  CHECK(bytes == want && memcmp(one, few, (size_t)M * N * 2) == 0,
        "max_sms above the device's SMs: workspace %zu (all SMs: %zu), C %s", bytes, want,
        memcmp(one, few, (size_t)M * N * 2) == 0 ? "equal" : "differs");
  free(few);
  mgen_ctx *none = (mgen_ctx *)0x1;
  mgen_ctx_opts bad = {.device = -1, .max_workspaces = 5};
  CHECK(mgen_ctx_create(&none, mgen_builtin_table(), &bad) == MGEN_ERR_INVALID_ARG &&
            none == (mgen_ctx *)0x1, "max_workspaces 5");
  free(h_w), free(h_a), free(one), free(many);
}

int main(void) {
  gpu_require_device("test_api_gpu");
  mgen_ctx_opts opts = {.device = -1, .log = log_fn};
  const mgen_table *table = mgen_builtin_table();
  if (table->count > 0) {
    MGEN_CHECK(ctx, mgen_ctx_create(&ctx, table, &opts));
    CHECK(mgen_ctx_sm(ctx) >= 80 && log_infos == 1, "sm %d, info logs %d", mgen_ctx_sm(ctx), log_infos);
    test_misuse();
    test_builtin_table();
    test_workspaces();
    mgen_ctx_destroy(ctx);
    ctx = NULL;
  } else {
    printf("test_api_gpu: the built-in table is empty; only the context tests run\n");
    mgen_ctx *none = (mgen_ctx *)0x1;
    CHECK(mgen_ctx_create(&none, table, NULL) == MGEN_ERR_NO_KERNEL && none == (mgen_ctx *)0x1,
          "empty table: ERR_NO_KERNEL");
  }
  log_warns = 0;
  test_contexts();
  return check_exit("test_api_gpu");
}
