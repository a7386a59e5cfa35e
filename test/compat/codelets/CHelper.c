/* Copyright (c) Aspen contributors.
 * A C source in a codelet build: compiled as C (C flags, C's rules: an implicit
 * conversion from void *), called from GeneratedCodeSafe.cpp. */
#include <stdlib.h>

static int scratch[4];

int compat_c_triple(int x) {
  int *p = (void *)scratch; /* C, not C++ */
  p[0] = x;
  return 3 * p[0];
}
