/* fake_cudart.c -- stand-ins for test_marlin_gen.py's real load through cudart_from_sys_path:
 * built as libcudart.so.99 in an nvidia package's layout (nvidia/cu99/lib), and, with
 * MGEN_FAKE_CUDART_USER, as a library that needs it and has no RUNPATH to it, so that it loads
 * only where marlin_gen's loader has loaded that libcudart first. */
#ifdef MGEN_FAKE_CUDART_USER
int mgen_fake_cudart(void);
int mgen_fake_cudart_user(void) { return mgen_fake_cudart() + 1; }
#else
int mgen_fake_cudart(void) { return 41; }
#endif
