// A unit test as add_unit_test builds it: TEST_WITH_TARGET or TEST_WITHOUT_TARGET is defined,
// a device variant arrives as `-- --device-type <variant>`, after `--run_test=<suite>` when the
// test names SUITES.
#include <string>
int main(int argc, char **argv) {
#if defined(TEST_WITH_TARGET)
  int a = 1;
  if (argc > a && std::string(argv[a]).rfind("--run_test=", 0) == 0)
    ++a;
  return argc == a + 3 && std::string(argv[a]) == "--" && std::string(argv[a + 1]) == "--device-type" ? 0 : 1;
#elif defined(TEST_WITHOUT_TARGET)
  (void)argv;
  return argc == 1 ? 0 : 1;
#else
  return 3;
#endif
}
