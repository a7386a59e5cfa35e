/* Copyright (c) Aspen contributors.
 * A C source calling the overloaded IPU builtins of <ipu_builtins.h> (C overloads, as
 * Graphcore's header declares them with clang's overloadable attribute), called from
 * IpuBuiltins.cpp. */
#include <ipu_builtins.h>

/* out[i] = max(|a[i]|, |b[i]|) + (a[i] < b[i] ? 1 : 0), two lanes at a time. */
void compat_c_absmax(const float *a, const float *b, float *out, unsigned n) {
  const float2 *a2 = (const float2 *)a, *b2 = (const float2 *)b;
  float2 *out2 = (float2 *)out;
  for (unsigned i = 0; i < n / 2; ++i) {
    const float2 m = __builtin_ipu_absmax(a2[i], b2[i]);
    const float2 lt = __builtin_ipu_cmplt(a2[i], b2[i]);
    const float2 one = {1.0f, 1.0f};
    out2[i] = m + __builtin_ipu_and(lt, one);
  }
}
