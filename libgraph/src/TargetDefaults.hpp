// Copyright (c) Aspen contributors.
// Default target parameters per IPU architecture, shared by poplar::Target,
// poplar::IPUModel and the DeviceManager's simulated devices.
#pragma once

#include "ir/TargetData.hpp"

#include <string>

namespace aspen {

/// The parameters of one full-size IPU of architecture `arch` ("ipu1", "ipu2",
/// "ipu21"), as an IPU_MODEL target. Throws invalid_machine_model naming an
/// unknown architecture.
ir::TargetData ipuTargetDefaults(const std::string &arch);

/// The architecture of a system name given to Target::createIPUTarget: an
/// architecture itself ("ipu2"), or a system ("IPU-POD16", "M2000", "C2",
/// "Bow-2000", ...). Returns "" when the name is not known.
std::string archForSystem(const std::string &system);

/// The CPU target: one tile per IPU, large memory, host-compiled codelets.
ir::TargetData cpuTargetData(bool accurateHalf, unsigned numIPUs);

/// Throws invalid_machine_model when a parameter makes no sense (zero tiles,
/// zero memory, ...), naming the parameter.
void validateTargetData(const ir::TargetData &data);

} // namespace aspen
