/* bucket.c -- M buckets (see bucket.h for the edges and why). */
#include "dispatch/bucket.h"

#include <limits.h>

/* Upper bounds, ascending; the last bucket is open. Data, not branches. */
static const int kUpper[MGEN__BUCKET_COUNT] = {
    1,    2,    4,    8,    16,   32,   48,   64,    96,    128,   192,   256,    384,
    512,  768,  1024, 1536, 2048, 3072, 4096, 6144,  8192,  12288, 16384, INT_MAX};

int mgen__bucket_of(int m) {
  /* Binary search for the first upper bound >= m. */
  int lo = 0, hi = MGEN__BUCKET_COUNT - 1;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (kUpper[mid] >= m) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

int mgen__bucket_range(int b, int *lo, int *hi) {
  if (b < 0 || b >= MGEN__BUCKET_COUNT) return -1;
  *lo = b == 0 ? 1 : kUpper[b - 1] + 1;
  *hi = kUpper[b];
  return 0;
}

int mgen__bucket_find(int lo, int hi) {
  int b = mgen__bucket_of(lo), blo, bhi;
  if (lo < 1 || mgen__bucket_range(b, &blo, &bhi) != 0) return -1;
  return blo == lo && bhi == hi ? b : -1;
}

int mgen__bucket_rep(int b, int n, int k) {
  int lo, hi;
  if (mgen__bucket_range(b, &lo, &hi) != 0) return 1;
  long long rep = hi == INT_MAX ? MGEN__BUCKET_OPEN_REP : hi;
  long long widest = n > k ? n : k;
  if (widest > 0 && rep * widest > INT_MAX) rep = INT_MAX / widest;
  return rep < 1 ? 1 : (int)rep;
}
