/* mgen_demo_no_cuda.c -- build/bench/mgen_demo in a build configured without a CUDA compiler:
 * the README's quick start ends by running the demo, so this says why there is no library, no
 * kernels and no demo, and what to set, instead of leaving the shell's "No such file".
 *
 * Exit status: 1 (the quick start did not build what it promises; the CPU tests still run).
 */
#include <stdio.h>

int main(void) {
  fprintf(stderr, "mgen_demo: this build has only the generator and the CPU tests: %s, then "
                  "configure and build again\n", MGEN_NO_CUDA);
  return 1;
}
