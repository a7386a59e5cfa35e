// Copyright (c) Aspen contributors. Poplar-compatible codelet header.
// On the IPU this header defines VECTOR_AVAIL_SCALED_PTR32, VECTOR_AVAIL_SCALED_PTR64,
// VECTORLIST_AVAIL_DELTAN, ... for the layouts the target supports. The simulated IPU
// defines none of them, so codelets take their ONE_PTR / SPAN / DELTANELEMENTS forms.
#ifndef POPLAR_AVAILABLEVTYPES_H
#define POPLAR_AVAILABLEVTYPES_H
#endif
