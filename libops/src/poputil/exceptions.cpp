// Copyright (c) Aspen contributors.
#include "poputil/exceptions.hpp"

namespace poputil {

poplibs_error::poplibs_error(const std::string &s) : std::runtime_error(s), type("poplibs_error") {}
poplibs_error::poplibs_error(const char *s) : std::runtime_error(s), type("poplibs_error") {}

} // namespace poputil
