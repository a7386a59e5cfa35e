# fp8 (QUARTER with metadata, issue 15 items 5 and 8; docs/fp8.md).
aspen_add_test(fp8_conformance LABEL conformance SOURCES conformance/fp8_conversion.cpp)
aspen_add_test(fp8_errors LABEL error SOURCES error/fp8_errors.cpp LIBS Aspen::popops Aspen::poputil
  Aspen::poplar_test)
aspen_add_test(fp8_compat LABEL conformance SOURCES compat/fp8_cast.cpp LIBS Aspen::popops Aspen::poputil)
# Issue 24: QUARTER_METADATA on the host and poplar_test's quarter buffers (docs/fp8.md), and
# slices() of a one-element tensor (docs/poplibs-from-source.md, "Session 24").
aspen_add_test(compat_quarter_metadata_host LABEL conformance SOURCES compat/quarter_metadata_host.cpp
  LIBS Aspen::popops Aspen::poplar_test)
