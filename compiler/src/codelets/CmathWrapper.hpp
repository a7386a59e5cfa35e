// Copyright (c) Aspen contributors.
// Embedded as <cmath> in the codelet include directory (compiler/CMakeLists.txt): the
// host's <cmath>, then its <math.h>, which makes the float overloads global too, as the
// IPU toolchain's <cmath> does. So `sqrt(x)`, `exp(x)`, `atan2(y, x)` of a float are
// float, unqualified as with `std::`, and `-Werror -Wdouble-promotion` codelets build.
#ifndef ASPEN_CODELET_CMATH
#define ASPEN_CODELET_CMATH
#include_next <cmath>
#include <math.h>
#endif
