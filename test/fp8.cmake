# fp8 (QUARTER with metadata, issue 15 items 5 and 8; docs/fp8.md).
aspen_add_test(fp8_conformance LABEL conformance SOURCES conformance/fp8_conversion.cpp)
aspen_add_test(fp8_errors LABEL error SOURCES error/fp8_errors.cpp LIBS Aspen::popops Aspen::poputil)
aspen_add_test(fp8_compat LABEL conformance SOURCES compat/fp8_cast.cpp LIBS Aspen::popops Aspen::poputil)
