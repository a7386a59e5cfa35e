# Replication, several IPUs and GCL collectives (docs/replication.md).
aspen_add_test(replication_conformance_replicas LABEL conformance SOURCES compat/replication_replicas.cpp compat/replication_multi_ipu.cpp
  LIBS Aspen::gcl Aspen::popops Aspen::poputil TBB::tbb)
aspen_add_test(replication_golden_collectives LABEL golden SOURCES compat/replication_collectives.cpp
  LIBS Aspen::gcl Aspen::popops Aspen::poputil TBB::tbb)
aspen_add_test(replication_error_cases LABEL error SOURCES error/replication_errors.cpp
  LIBS Aspen::gcl Aspen::poputil)
