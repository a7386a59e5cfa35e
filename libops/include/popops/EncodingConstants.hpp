// Copyright (c) Aspen contributors.
// Constants shared by the encoding and loss functions.
#ifndef POPOPS_ENCODINGCONSTANTS_HPP
#define POPOPS_ENCODINGCONSTANTS_HPP

// The index value that encodeOneHot (and the losses) treat as "no label".
#define MASKED_LABEL_CODE 0xFFFFFFFFU

// Small values added before taking a natural logarithm, per type.
#define EPS_LOG_N_FLOAT (1.17549435e-38F)
#define EPS_LOG_N_HALF (0.000000059605F)

#endif
