# gccs, the support headers every module and PopLibs may include (docs/gccs.md), label unit:
# popsolver's solver against brute force, and the other headers used as PopLibs uses them.
aspen_add_test(gccs_popsolver LABEL unit SOURCES unit/gccs_popsolver.cpp LIBS Aspen::gccs)
aspen_add_test(gccs_compat_headers LABEL conformance SOURCES compat/gccs_headers.cpp LIBS Aspen::gccs)
