// Defines a function LinkRuntime.cpp defines too: linked into one image with it, the
// symbol is defined twice, which the linker refuses, naming both files.
float rt_axpy(float a, float x, float y) {
  return a * x - y;
}
