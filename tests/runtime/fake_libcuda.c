/* fake_libcuda.c -- a "libcuda.so.1" with no driver API in it: on LD_LIBRARY_PATH it makes the
 * CUDA runtime find a driver that is installed but unusable (cudaErrorInsufficientDriver), as on
 * a GPU machine with a driver older than the runtime. tests/scripts/broken_driver.sh uses it to
 * check that the GPU tests and the demo fail there instead of reporting "skipped". */
int mgen_fake_libcuda_marker;
