/* layout.h -- the packed weight and scale layouts: the one place their index math lives.
 *
 * Used by the GPU pack/quantize kernels (prepare.cu), the CPU reference (tests/common/ref.c)
 * and the layout tests, so that "what the kernels read" has a single definition.
 *
 * Weights. W is n x k (nn.Linear); the kernels multiply by B = W^T (k x n). B is cut into
 * 16x16 tiles, row-major over (k/16) x (n/16); four consecutive tiles form a chunk of 128
 * int32 words. Inside a chunk, word w = 4*t + j is what thread t (0..31) of a warp loads for
 * tile j: the eight 4-bit codes of its m16n8k16 B fragments for both n8 halves, interleaved
 * so that one lop3 extracts two FP16 lanes at once (marlin-bitwise-dequant.md section 2):
 *
 *     thread t = 4*c + q            tile of B (16 x 16), rows k, columns n
 *     nibble b (bits 4b..4b+3):       n:  c        c+8
 *       b0  k=2q    n=c            k=2q    b0       b2        the mma fragment order is
 *       b1  k=2q+8  n=c            k=2q+1  b4       b6        b0 b4 b1 b5 | b2 b6 b3 b7;
 *       b2  k=2q    n=c+8          k=2q+8  b1       b3        lop3 on 0x000f000f picks
 *       b3  k=2q+8  n=c+8          k=2q+9  b5       b7        (b0, b4), then (b1, b5) ...
 *       b4..b7: the same with k+1
 *
 * For the 32x32 example of marlin-w4-layout.md (element id k*32+n) thread 0 of tile 0 holds
 * [0,256,8,264,32,288,40,296] in nibbles b0..b7 (tests/runtime/test_layout.c checks the
 * document's whole table).
 *
 * Scales. Grouped: (k_packed/group) rows x n FP16 (k_packed: K padding, below); inside each row every 64-column chunk is
 * permuted so that a thread's scales are adjacent: packed position p = 8*c + 2*j + h
 * (c 0..7, j 0..3, h 0..1) holds column 16*j + 8*h + c (IST Marlin's scale_perm: column
 * p/8 + 8*(p%8)). Per channel (group 0): 1 x n, not permuted.
 *
 * fe2m1 (FP4 E2M1) uses the same words with the nibbles of each 16-bit half reversed
 * (nibble b holds what u4b8 keeps in nibble b ^ 3): the FP4 bit trick reads a code at bits
 * [15:12] of each lane and walks down with q << 4 (marlin-bitwise-dequant.md section 1), so
 * the pair of fragment register r must sit at nibbles (3 - r, 7 - r). Its scales are one byte
 * per (group, column), permuted like the 16-bit ones, followed at byte offset
 * align16(rows * n) by n FP32 column factors (mgen__fe2m1_column_offset). NVFP4's E4M3 scale
 * bytes are stored non-negative: a checkpoint's negative block scale gives its sign to the
 * block's 16 codes instead (mgen__nvfp4_stored_code / _scale; exact, E2M1 is sign and
 * magnitude), so that the kernels convert scale pairs without a sign (mgen_scales.cuh: the
 * BF16 pair, 6 -> 4 instructions). The words the kernels read hold those codes with their 32
 * bits permuted per activation type: FP16 (mgen__fe2m1_f16_bit) puts every code on the bits
 * of a byte its FP16 high byte needs, so that the dequantization takes 9 instructions for 8
 * weights instead of 11; BF16 (mgen__fe2m1_bf16_bit): BF16 wants a code's sign 7 bits above
 * its [E1 E0 M0] (bits 15 and 8..6 of a lane), a nibble has it 1 above, and the nibble order
 * costs the BF16 dequantization two shifts and two masks per fragment register; the permuted
 * word gives three of the four registers by one rotation and one mask each and the fourth by
 * two (templates/formats/fe2m1/mma_bf16.cuh: 9 instructions for 8 weights instead of 15).
 *
 * Zero points (u4, scheme ASYM: value (q - z) * s). The scale buffer holds the scales as u4b8's
 * (grouped rows permuted, per channel 1 x n in column order), then at byte offset
 * mgen__zero_offset = align16(rows * n * 2) the zero points: rows x n/2 bytes, 4 bits each,
 * in the grouped scales' packed column order also per channel. Row r, 64-column chunk i is
 * the 8 words r * n/8 + 8 i + c (c 0..7, lane/4 of the reading warp: one 32-bit load per
 * thread and row); word c holds packed positions 8c..8c+7, position 8c + 2j + h (column
 * 16j + 8h + c of the chunk) at nibble j + 4h (mgen__zero_place; the kernels' partial
 * templates/formats/u4/mma_*.cuh reads pair j's two zeros from (word >> 4j) by the code trick).
 * Codes are stored unbiased (0..15, the checkpoint's q). Grouped, padded rows (K padding) hold
 * MGEN_U4_PAD_ZERO with scale 1.0 and code MGEN_U4_PAD_CODE: (8 - 8) * 1 = 0. Per channel the
 * one zero row is the column's, so a padded code 8 stands for (8 - z) * s, not 0: there the
 * padding adds nothing only because the kernels zero-fill A past k (the exception to "either
 * side alone" below; tests/runtime/test_u4.c pins the value).
 *
 * K padding. The layout stores every weight as if K were k_packed = mgen__k_packed(k), k rounded
 * up to MGEN_LAYOUT_K_PAD, so that a kernel of any tile_k dividing it (every kernel of the
 * builtin table: tests/runtime/test_shape_rules.c) runs any k its group allows (a kernel of a
 * deeper tile_k, a multiple of the padding, runs the k that are multiples of its tile_k:
 * dispatch/select.h, mgen__k_multiple). The padded
 * positions hold what mgen_quantize makes of zero weights: codes whose value is exactly 0
 * (MGEN_U4B8_PAD_CODE, MGEN_FE2M1_PAD_CODE) and, for padded groups, the scale of an all-zero
 * group (u4b8 1.0 in the activation type; fe2m1 the checkpoint byte 0: E4M3 0, and E8M0
 * 2^-127, the smallest, so that a column's largest MXFP4 exponent, which sets its column
 * factor, is that of its real blocks; packed as u = e_max - 0). So a padded weight is exactly the weight with zero columns appended, and the CPU
 * references pack it as that (tests/common/ref.c, fp4.c). Finite scales keep 0 * scale = 0,
 * and the kernels zero-fill A past k as well: either side alone makes the padding add
 * nothing. For k a multiple of MGEN_LAYOUT_K_PAD nothing is padded. Padded K tiles come last
 * in the tile order above, so the padding is the tail of both buffers: the last
 * n * (k_packed - k) / 8 words and the last (k_packed - k) / group scale rows.
 *
 * Preconditions (checked by mgen_weights_bytes and every entry point): n a multiple of
 * MGEN_LAYOUT_DIM and k of mgen__layout_k_step(group). The kernels' tiles may ask for more n
 * (dispatch/shape_rule.h); this is what the packing itself needs, and all that weights of a
 * key without kernels are checked against.
 */
#ifndef MGEN_LAYOUT_H
#define MGEN_LAYOUT_H

#include <stdint.h>

#if defined(__CUDACC__)
#define MGEN_HD __host__ __device__
#else
#define MGEN_HD
#endif

#define MGEN_W4_NIBBLES 8        /* codes per int32 word */
#define MGEN_W4_CHUNK_WORDS 128  /* 4 tiles x 32 threads */
#define MGEN_SCALE_CHUNK 64      /* columns per permuted scale chunk */
#define MGEN_LAYOUT_DIM 64       /* n a multiple of it: a scale chunk, a chunk of four tiles */
#define MGEN_LAYOUT_K_TILE 16    /* the tiles' depth: every group is a multiple of it */
#define MGEN_LAYOUT_K_PAD 128    /* k is padded to a multiple of it (K padding, above) */

/* What padded positions hold (K padding, above): codes of value 0 ((8 - 8) * s for u4b8, E2M1
 * +0), the scale of an all-zero group (u4b8: 1.0 of the activation type, FP16 or BF16 bits;
 * fe2m1: one byte, E4M3 0 or E8M0 0 as the checkpoint stores it). */
#define MGEN_U4B8_PAD_CODE 8
#define MGEN_FE2M1_PAD_CODE 0
#define MGEN_U4B8_PAD_SCALE_F16 0x3c00
#define MGEN_U4B8_PAD_SCALE_BF16 0x3f80
#define MGEN_FE2M1_PAD_SCALE 0x00
#define MGEN_U4_PAD_CODE 8 /* u4: code and zero equal, (q - z) * s = 0; scale as u4b8's */
#define MGEN_U4_PAD_ZERO 8

/* The K the packed layout stores for a weight of depth k: k rounded up to MGEN_LAYOUT_K_PAD
 * (64-bit, so that it can be checked against the limits for any int k). */
static inline MGEN_HD long long mgen__k_packed(long long k) {
  return (k + MGEN_LAYOUT_K_PAD - 1) / MGEN_LAYOUT_K_PAD * MGEN_LAYOUT_K_PAD;
}

/* What k must be a multiple of for weights of group `group`: the group (scale rows cover whole
 * groups, and every group is whole tiles); per channel (group 0), where no group sets it,
 * MGEN_LAYOUT_DIM (issue #14's contract; the tiles alone would take MGEN_LAYOUT_K_TILE). */
static inline MGEN_HD int mgen__layout_k_step(int group) { return group > 0 ? group : MGEN_LAYOUT_DIM; }

/* Source element of nibble `nibble` (0..7) of packed word `word` (0..n_total*k_packed/8-1):
 * B[*k][*n] = W[*n][*k], a padded position where *k >= the weight's k. n_total is the
 * weight's n (a multiple of 64). */
static inline MGEN_HD void mgen__w4_source(int n_total, int word, int nibble, int *k, int *n) {
  const int j = word & 3;           /* tile within the chunk */
  const int t = (word >> 2) & 31;   /* thread of the warp */
  const int chunk = word >> 7;
  const int tile = chunk * 4 + j;
  const int tiles_n = n_total / 16;
  const int kb = tile / tiles_n, nt = tile % tiles_n;
  const int q = t & 3, c = t >> 2;
  *k = 16 * kb + 2 * q + (nibble >> 2) + 8 * (nibble & 1);
  *n = 16 * nt + c + 8 * ((nibble >> 1) & 1);
}

/* Inverse of mgen__w4_source: the packed word and nibble that hold B[k][n] = W[n][k]. */
static inline MGEN_HD void mgen__w4_position(int n_total, int k, int n, int *word, int *nibble) {
  const int kk = k & 15, nn = n & 15;
  const int tile = (k >> 4) * (n_total / 16) + (n >> 4);
  const int t = 4 * (nn & 7) + ((kk & 7) >> 1); /* thread 4c + q */
  *word = (tile >> 2) * MGEN_W4_CHUNK_WORDS + 4 * t + (tile & 3);
  *nibble = (kk >> 3) | ((nn >> 3) << 1) | ((kk & 1) << 2);
}

/* The same for fe2m1 words (nibbles reversed within each 16-bit half). */
static inline MGEN_HD void mgen__w4_source_fe2m1(int n_total, int word, int nibble, int *k, int *n) {
  mgen__w4_source(n_total, word, nibble ^ 3, k, n);
}

/* Scale rows of a weight of depth k: k_packed / group (the padded groups included), or 1 per
 * channel (group 0). */
static inline MGEN_HD int mgen__scale_rows(int k, int group) {
  return group > 0 ? (int)(mgen__k_packed(k) / group) : 1;
}

/* Byte offset of the FP32 column factors in an fe2m1 scale buffer of a weight n x k: after
 * mgen__scale_rows x n bytes of group scales, rounded up to 16 bytes. */
static inline MGEN_HD long long mgen__fe2m1_column_offset(int n, int k, int group) {
  return ((long long)mgen__scale_rows(k, group) * n + 15) / 16 * 16;
}

/* Source column of packed scale position p (0..n-1) of a grouped scale row; positions in
 * chunk 64*i..64*i+63 come from the columns of the same chunk. */
static inline MGEN_HD int mgen__scale_source_col(int p) {
  const int r = p & (MGEN_SCALE_CHUNK - 1);
  const int c = r >> 3, j = (r >> 1) & 3, h = r & 1;
  return (p - r) + 16 * j + 8 * h + c;
}

/* NVFP4 as stored: the E4M3 block scale byte `scale` without its sign, and a code [S E1 E0 M0]
 * of its block with that sign moved in (layout comment above). Every NVFP4 packer goes through
 * these two (prepare_fe2m1.cu; the CPU reference tests/common/fp4.c). */
static inline MGEN_HD uint32_t mgen__nvfp4_stored_scale(uint32_t scale) { return scale & 0x7fu; }
static inline MGEN_HD uint32_t mgen__nvfp4_stored_code(uint32_t code, uint32_t scale) {
  return (code ^ ((scale >> 4) & 8u)) & 0xfu; /* scale bit 7 -> code bit 3 */
}

/* fe2m1 for BF16: the bit of a BF16 word that holds bit i of the word as laid out above (the
 * nibble order). Bit b of nibble 3 - r (lane 0) or 7 - r (lane 1), the code bit b (0 M0, 1 E0,
 * 2 E1, 3 S) of fragment register r's lane, goes where rotating the word left by the
 * register's amount puts it on its BF16 position (16 lane + 6 + b, the sign 16 lane + 15):
 * r = 0, 1, 2 by 0, 4, 10, and r = 3 by 6, its E1 by 14 (the rotations of
 * templates/formats/fe2m1/mma_bf16.cuh; tests/runtime/test_fp4.c checks the two against each
 * other).
 * Those 32 targets are distinct, so this is a permutation (tests/runtime/test_layout.c). */
static inline MGEN_HD int mgen__fe2m1_bf16_bit(int i) {
  const int nibble = i >> 2, b = i & 3, lane = nibble >> 2, r = (lane ? 7 : 3) - nibble;
  const int target = 16 * lane + (b == 3 ? 15 : 6 + b);
  const int rot = r == 0 ? 0 : r == 1 ? 4 : r == 2 ? 10 : b == 2 ? 14 : 6;
  return (target - rot) & 31;
}

/* fe2m1 for FP16: the same for FP16 words. A code's FP16 is its lane's high byte
 * [S 0 0 0 E1 E0 M0 0] over a zero low byte, so the packer puts every code in a byte: the
 * codes of fragment registers 0 and 1 on those bits ("A": sign at bit 7, E1 E0 M0 at 3..1 of
 * the byte), registers 2 and 3 on the other four ("B": sign at 0, E1 E0 M0 at 6..4), lane l
 * of registers 0 and 2 in byte 2 l + 1 (where the lane's high byte is), of registers 1 and 3
 * in byte 2 l (moved up a byte by templates/formats/fe2m1/mma_f16.cuh's byte permute). */
static inline MGEN_HD int mgen__fe2m1_f16_bit(int i) {
  const int nibble = i >> 2, b = i & 3, lane = nibble >> 2, r = (lane ? 7 : 3) - nibble;
  const int in_byte = r < 2 ? (b == 3 ? 7 : 1 + b) : (b == 3 ? 0 : 4 + b);
  return 8 * (2 * lane + (r % 2 == 0 ? 1 : 0)) + in_byte;
}

/* The bit of the words for BF16 (bf16 != 0) or FP16 kernels that holds bit i of a word in the
 * nibble order, and such a word as those kernels read it (every fe2m1 packer's last step). */
static inline MGEN_HD int mgen__fe2m1_bit(int bf16, int i) {
  return bf16 ? mgen__fe2m1_bf16_bit(i) : mgen__fe2m1_f16_bit(i);
}
static inline MGEN_HD uint32_t mgen__fe2m1_word(int bf16, uint32_t w) {
  uint32_t out = 0;
  for (int i = 0; i < 32; i++) out |= ((w >> i) & 1u) << mgen__fe2m1_bit(bf16, i);
  return out;
}

/* W4A8 words (FP8 E4M3 activations, issue #52: the e4m3 layout). FP8 wgmma
 * (k = 32) takes from thread t = 4 c + q of a warp's 16 rows (c, c + 8) four registers of four
 * E4M3 bytes: register 0 row c, k = 4 q + i in byte i; register 1 the same of row c + 8;
 * registers 2 and 3 those of k + 16. The words keep the mma layout's chunks and tiles, a word
 * per (tile (kb, nt), thread t): tile kb of a 32-deep step gives registers 0 and 1, tile kb + 1
 * registers 2 and 3; inside a chunk tile-major, word 32 j + t (the mma layout: 4 t + j;
 * mgen__e4m3_mma_word), since a wgmma consumer's warp reads one tile of each chunk: its 32
 * lanes read 128 consecutive bytes, one shared-memory wavefront, where the mma order's
 * 16-byte lane stride takes four. A word holds other elements of its tile than the mma
 * layout's: k = 16 kb + 4 q + i, n = 16 nt + c + 8 h for code slot 4 h + i (0..7; h: "A"
 * codes, register 0 or 2, and "B" codes, 1 or 3).
 * A slot's 4 bits are placed so that the dequantization moves the least (constants:
 * templates/formats/mgen_dequant_consts.h, MGEN_E4M3_*):
 *   u4b8: the code as f = q >= 8 ? q - 8 : 15 - q, [S M2 M1 M0] for S ? -(M + 1) : M = q - 8
 *         (sign and magnitude, the negative ones one off, so that -8 fits); slot A i: M at
 *         bits 8 i + 2..0, S at 8 i + 7; slot B i: M at 8 i + 6..4, S at 8 i + 11 (mod 32, bit
 *         3 of the next byte). A register is then (x & 0x87878787) + ((x >> 7) & 0x01010101),
 *         x the word (A) or the word rotated right by 4 (B): byte [S 0 0 0 M + S] is E4M3
 *         (q - 8) * 2^-9 (subnormals, 8 * 2^-9 the least normal), exactly.
 *   fe2m1 (MXFP4 only): [S E1 E0 M0]: slot A i: E1 E0 M0 at bits 4 i + 2..0, S at 8 i + 7;
 *         slot B i: E1 E0 M0 at 16 + 4 i + 2..0, S at 8 i + 3. The magnitudes are then the
 *         byte-permute selectors of the two registers (word & 0x7777 and its high half) into
 *         the table of the E4M3 bytes of their block's eight magnitudes times 2^(6 - u), u the
 *         block's stored E8M0 offset (mgen_scales.cuh, ScalesE8M0: u = e_max(column) - e); slot
 *         A's signs are in place, B's 4 bits below. That folds the block scale into the weights
 *         exactly: every E2M1 value times 2^(6 - u) is an E4M3 normal or zero for u <= 11
 *         (MGEN_MXFP4_E4M3_U_MAX; 6 x 2^6 = 384 < 448). The packer stores min(u, 11), and a
 *         block more than 11 binades below its column's largest takes its codes rounded to that
 *         floor (mgen__mxfp4_e4m3_code). NVFP4 has no W4A8 form: its E4M3 scale times an E2M1
 *         value needs up to 5 significant bits, E4M3 has 4.
 *   u4:    the code q itself (0..15, unbiased; the zero points stay in the scale buffer as the
 *         mma layout's, "Zero points" above): slot A i at bits 8 i + 3..0, slot B i at
 *         8 i + 7..4. A register is then the bytes of word & 0x0f0f0f0f (A) or of
 *         (word & 0xf0f0f0f0) >> 4 (B), from which the dequantization makes q - z in sign and
 *         magnitude (templates/formats/u4/mma_e4m3.cuh). */
#define MGEN_MXFP4_E4M3_U_MAX 11
static inline MGEN_HD uint32_t mgen__u4b8_e4m3_field(uint32_t q) { return q >= 8 ? q - 8 : 15 - q; }

/* Which codes a W4A8 word holds: the `kind` of mgen__e4m3_bit and mgen__e4m3_word. */
#define MGEN_E4M3_WORDS_U4B8 0
#define MGEN_E4M3_WORDS_FE2M1 1
#define MGEN_E4M3_WORDS_U4 2

/* Where bit j (0..3: M0 (u4b8 M0, u4 q's bit 0) .. S (u4 q's bit 3)) of code slot `slot` sits
 * in a W4A8 word of codes `kind`. */
static inline MGEN_HD int mgen__e4m3_bit(int kind, int slot, int j) {
  const int i = slot & 3, h = slot >> 2, byte = 8 * i;
  if (kind == MGEN_E4M3_WORDS_U4) return byte + 4 * h + j;
  if (kind == MGEN_E4M3_WORDS_U4B8)
    return h == 0 ? (j == 3 ? byte + 7 : byte + j) : (j == 3 ? (byte + 11) & 31 : byte + 4 + j);
  if (h == 0) return j == 3 ? byte + 7 : 4 * i + j;
  return j == 3 ? byte + 3 : 16 + 4 * i + j;
}

/* E2M1 magnitude code c (0..7) in halves: 0 1 2 3 4 6 8 12. */
static inline MGEN_HD int mgen__e2m1_halves(int c) { return c < 5 ? c : c == 5 ? 6 : c == 6 ? 8 : 12; }

/* The fe2m1 code that the e4m3 layout stores for E2M1 code `code` of a block at E8M0 offset
 * u: the code itself for u <= MGEN_MXFP4_E4M3_U_MAX, else the code nearest to its value times
 * 2^(U_MAX - u) (ties to the even code, E2M1's own rounding), which the kernels read at
 * offset U_MAX. The GPU packers (prepare_fe2m1.cu) and test_w4a8_gpu's reference call it;
 * test_dequant_e4m3 checks it against a search over the E2M1 values. */
static inline MGEN_HD uint32_t mgen__mxfp4_e4m3_code(uint32_t code, int u) {
  if (u <= MGEN_MXFP4_E4M3_U_MAX) return code;
  const int d = u - MGEN_MXFP4_E4M3_U_MAX;
  if (d > 8) return code & 8u; /* 12 halves * 2^-9 rounds to +-0 */
  /* the magnitude c whose halves * 2^d is nearest the code's halves */
  const int want = mgen__e2m1_halves((int)(code & 7u));
  int best = 0, best_diff = 1 << 30;
  for (int c = 0; c < 8; c++) {
    const int v = mgen__e2m1_halves(c) << d, diff = v > want ? v - want : want - v;
    if (diff < best_diff || (diff == best_diff && !(c & 1))) best = c, best_diff = diff;
  }
  return (code & 8u) | (uint32_t)best;
}

/* The mma layout's word of the same tile and thread as W4A8 word `word` (32 j + t in its chunk). */
static inline MGEN_HD int mgen__e4m3_mma_word(int word) {
  return (word & ~(MGEN_W4_CHUNK_WORDS - 1)) | ((word & 31) << 2) | ((word >> 5) & 3);
}

/* The element of slot `slot` of W4A8 word `word`: B[*k][*n] = W[*n][*k], as mgen__w4_source. */
static inline MGEN_HD void mgen__e4m3_source(int n_total, int word, int slot, int *k, int *n) {
  int k0, n0;
  mgen__w4_source(n_total, mgen__e4m3_mma_word(word), 0, &k0, &n0); /* k0 = 16 kb + 2 q, n0 = 16 nt + c */
  *k = (k0 & ~15) + 4 * ((k0 & 15) >> 1) + (slot & 3);
  *n = n0 + 8 * (slot >> 2);
}

/* The W4A8 word of eight codes of `kind`, slot s's code codes[s] (u4b8 and u4: q, 0..15;
 * fe2m1: [S E1 E0 M0]). */
static inline MGEN_HD uint32_t mgen__e4m3_word(int kind, const uint8_t codes[8]) {
  uint32_t w = 0;
  for (int s = 0; s < 8; s++) {
    const uint32_t f = kind == MGEN_E4M3_WORDS_U4B8 ? mgen__u4b8_e4m3_field(codes[s] & 15u) : codes[s] & 15u;
    for (int j = 0; j < 4; j++) w |= ((f >> j) & 1u) << mgen__e4m3_bit(kind, s, j);
  }
  return w;
}

/* Inverse of mgen__scale_source_col: packed position of column `col`. */
static inline MGEN_HD int mgen__scale_packed_pos(int col) {
  const int r = col & (MGEN_SCALE_CHUNK - 1);
  const int c = r & 7, h = (r >> 3) & 1, j = (r >> 4) & 3;
  return (col - r) + 8 * c + 2 * j + h;
}

/* Zero points (layout comment above): the byte offset of the zero rows in the scale buffer of
 * a u4 weight n x k with scales of `scale_bytes` (2), after mgen__scale_rows x n scales rounded
 * up to 16 bytes; and where column `col`'s zero of a row sits: the 32-bit word in its row
 * (n/8 words a row) and the nibble in it. */
static inline MGEN_HD long long mgen__zero_offset(int n, int k, int group, int scale_bytes) {
  return ((long long)mgen__scale_rows(k, group) * n * scale_bytes + 15) / 16 * 16;
}
static inline MGEN_HD void mgen__zero_place(int col, int *word, int *nibble) {
  const int p = mgen__scale_packed_pos(col);
  const int r = p & 7; /* 2j + h */
  *word = p >> 3;      /* 8 * chunk + c */
  *nibble = (r >> 1) + 4 * (r & 1);
}
/* Inverse of mgen__zero_place: the column whose zero is nibble `nibble` of word `word` of a
 * zero row (the packers' loop: prepare_u4.cu, tests/common/ref_u4.c). */
static inline MGEN_HD int mgen__zero_source_col(int word, int nibble) {
  return mgen__scale_source_col(8 * word + 2 * (nibble & 3) + (nibble >> 2));
}

#endif /* MGEN_LAYOUT_H */
