# Replication, several IPUs and GCL collectives (docs/replication.md).
aspen_add_test(replication_conformance_replicas LABEL conformance SOURCES compat/replication_replicas.cpp compat/replication_multi_ipu.cpp
  LIBS Aspen::gcl Aspen::popops Aspen::poputil TBB::tbb)
aspen_add_test(replication_golden_collectives LABEL golden SOURCES compat/replication_collectives.cpp
  LIBS Aspen::gcl Aspen::popops Aspen::poputil TBB::tbb)
aspen_add_test(replication_error_cases LABEL error SOURCES error/replication_errors.cpp
  LIBS Aspen::gcl Aspen::poputil)

# Benchmark (built, not run by ctest): build/test/bin/replication_bench [floats]
aspen_add_test(replication_bench LABEL bench SOURCES bench/replication_bench.cpp
  LIBS Aspen::gcl Aspen::popops Aspen::poputil TBB::tbb)
