# gccs, the support headers every module and PopLibs may include (docs/gccs.md), and the Poplar
# API PopLibs needs (issue 24, docs/poplibs-from-source.md):
# popsolver's solver against brute force, and the other headers used as PopLibs uses them.
aspen_add_test(gccs_popsolver LABEL unit SOURCES unit/gccs_popsolver.cpp LIBS Aspen::gccs)
aspen_add_test(gccs_compat_headers LABEL conformance SOURCES compat/gccs_headers.cpp LIBS Aspen::gccs)

# Issue 24 item 2: the Poplar API gaps building PopLibs found (conformance), and their errors.
aspen_add_test(poplibs_compat_api_gaps LABEL conformance SOURCES compat/poplibs_api_gaps.cpp
  compat/poplibs_std_from_type.cpp compat/poplibs_std_from_interval.cpp)
aspen_add_test(poplibs_api_gap_errors LABEL error SOURCES error/poplibs_gap_errors.cpp)

# Issue 24: libpoplar_test, the host helpers PopLibs' tests use (include/poplar_test/Util.hpp).
aspen_add_test(poplar_test_util LABEL unit SOURCES unit/poplar_test_util.cpp LIBS Aspen::poplar_test)
