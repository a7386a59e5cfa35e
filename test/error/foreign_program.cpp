// Copyright (c) Aspen contributors.
// Stands for a program linked against PopLibs built from source: it needs libpopops.so by that
// build's SONAME (plain "libpopops.so"), and its run path finds Aspen's SDK lib/ first, as
// LD_LIBRARY_PATH with Aspen's lib/ ahead of PopLibs' would (poplibs_builds_errors.cpp).
extern "C" int foreign_program_answer() {
  return 7;
}
