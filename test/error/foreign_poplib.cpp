// Copyright (c) Aspen contributors.
// A stand-in for a PopLibs library built from source (libpopops.so, libpopnn.so of another
// build): it does not define Aspen's aspen_library_<name> marker (poplibs_builds_errors.cpp).
extern "C" int foreign_poplib_answer() {
  return 42;
}
