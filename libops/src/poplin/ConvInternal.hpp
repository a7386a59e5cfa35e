// Copyright (c) Aspen contributors.
// What poplin's convolution files share: parameters with every transform vector filled in,
// and their validation.
#pragma once

#include "poplin/ConvParams.hpp"

#include <string>

namespace aspen::conv {

/// `p` with every empty transform vector replaced by the identity of the right size.
poplin::ConvParams filled(const poplin::ConvParams &p);

/// Throws poputil::poplibs_error "<op>: ..." naming the first inconsistent parameter.
void validateParams(const poplin::ConvParams &params, const std::string &op);

} // namespace aspen::conv
