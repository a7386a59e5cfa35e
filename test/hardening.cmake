# Issue 16 (hardening): sanitizer findings, the compile cache healing itself, the version in
# executables, aspen.poisonUninitialisedMemory.
aspen_add_test(hardening_unit LABEL unit SOURCES unit/hardening_unit.cpp LIBS Threads::Threads)
target_compile_definitions(hardening_unit PRIVATE ASPEN_TEST_PROJECT_VERSION="${PROJECT_VERSION}")
aspen_add_test(hardening_errors LABEL error SOURCES error/hardening_errors.cpp LIBS Aspen::popops)
