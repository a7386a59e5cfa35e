// A unit test as add_unit_test builds it: TEST_WITH_TARGET or TEST_WITHOUT_TARGET is defined,
// and a device variant arrives as `-- --device-type <variant>`.
#include <string>
int main(int argc, char **argv) {
#if defined(TEST_WITH_TARGET)
  return argc == 4 && std::string(argv[1]) == "--" && std::string(argv[2]) == "--device-type" ? 0 : 1;
#elif defined(TEST_WITHOUT_TARGET)
  (void)argv;
  return argc == 1 ? 0 : 1;
#else
  return 3;
#endif
}
