# Poplar 3.x programs build against Aspen unchanged (label conformance, plus error and
# integration): small clients in compat/ written the way Poplar users write them.

# (1) What each public header brings in. One generated translation unit per host header of
# poplar/, popops/, poplin/, popnn/, poputil/ and poprand/ includes only that header, under
# -std=c++11, and uses what a client of Poplar's header may use without another include:
#  - every header that declares a function taking `poplar::Graph &` makes poplar::Graph,
#    program::Sequence and poplar::poplar_error complete, and brings the standard headers
#    Poplar's and PopLibs' headers do (docs/porting-from-poplar.md: <vector>, <string>,
#    <memory>, <functional>, <map>, <set>, <unordered_map>, <unordered_set>, <tuple>,
#    <iostream>, <sstream>, <algorithm>, <limits>, <cmath>, <numeric>, <cassert>, <utility>, ...;
#    <optional> from C++17, checked by compat/api_std_headers.cpp);
#  - Engine.hpp, Graph.hpp, DeviceManager.hpp, IPUModel.hpp and Device.hpp give a complete
#    poplar::Device and the same standard headers; Target.hpp and Engine.hpp give
#    poplar/exceptions.hpp;
#  - popops/ElementWise.hpp and popops/Expr.hpp give <cassert> and poplar::TypeTraits, as
#    PopLibs' do.
#  - poplin/MatMul.hpp gives poplin/Convolution.hpp (PopLibs' MatMul.hpp includes it).
# The units are built with the project (a header that stops providing something breaks the
# build); the test names each failing header.
set(_compat_device_headers poplar/Engine.hpp poplar/Graph.hpp poplar/DeviceManager.hpp poplar/IPUModel.hpp
  poplar/Device.hpp)
set(_compat_exception_headers ${_compat_device_headers} poplar/Target.hpp)
set(_compat_expr_headers popops/ElementWise.hpp popops/Expr.hpp)
set(_compat_units "")
foreach(_header IN LISTS ASPEN_PUBLIC_HOST_HEADERS)
  if(NOT _header MATCHES "^(poplar|popops|poplin|popnn|poputil|poprand)/")
    continue()
  endif()
  set(_body "")
  set(_source "")
  foreach(_dir IN LISTS ASPEN_HOST_HEADER_DIRS)
    if(EXISTS ${_dir}/${_header})
      file(READ ${_dir}/${_header} _source)
    endif()
  endforeach()
  if(_source MATCHES "poplar::Graph &|[(,] *Graph &")
    string(APPEND _body
      "void useGraphKit(poplar::Graph &g, poplar::program::Sequence &seq) {\n"
      "  try { seq.add(poplar::program::Sequence()); (void)g.getTarget(); }\n"
      "  catch (const poplar::poplar_error &e) { (void)e.what(); }\n"
      "  std::vector<std::string> names{\"a\"};\n"
      "  std::unique_ptr<int> p(new int(1));\n"
      "  std::function<int(int)> f = [](int x) { return x; };\n"
      "  std::map<std::string, int> m{{names[0], f(*p)}};\n"
      "  assert(m.size() == 1);\n"
      "  (void)std::accumulate(names.begin(), names.end(), std::string());\n"
      "  (void)std::sqrt(std::numeric_limits<float>::max());\n"
      "  (void)std::make_pair(1, 2);\n"
      "}\n")
  endif()
  if(_source MATCHES "poplar::Graph &|[(,] *Graph &" OR _header IN_LIST _compat_device_headers)
    string(APPEND _body
      "void useStandardHeaders() {\n"
      "  std::unordered_set<int> us{1, 2};\n"
      "  std::unordered_map<int, int> um{{1, 2}};\n"
      "  std::set<int> s{3, 1};\n"
      "  std::map<int, int> m{{1, 2}};\n"
      "  std::vector<int> v{3, 1, 2};\n"
      "  std::sort(v.begin(), v.end());\n"
      "  std::array<int, 2> a{{1, 2}};\n"
      "  std::tuple<int, std::string> t{1, \"x\"};\n"
      "  std::ostringstream os;\n"
      "  os << std::get<1>(t) << us.size() << um.size() << s.size() << m.size() << a[0];\n"
      "  std::cout << os.str() << std::endl;\n"
      "  assert(std::accumulate(v.begin(), v.end(), 0) == 6);\n"
      "  (void)std::numeric_limits<int>::max(); (void)CHAR_BIT; (void)std::sqrt(2.0);\n"
      "  std::function<void()> f = [] {}; f();\n"
      "  std::unique_ptr<int> p(new int(1)); (void)std::make_pair(*p, std::next(v.begin()));\n"
      "  try { throw std::runtime_error(\"x\"); } catch (const std::exception &e) { (void)e.what(); }\n"
      "}\n")
  endif()
  if(_header IN_LIST _compat_device_headers)
    string(APPEND _body
      "unsigned useDevice(const poplar::Device &d) { return d.getId() + sizeof(poplar::Device); }\n")
  endif()
  if(_header IN_LIST _compat_exception_headers)
    string(APPEND _body
      "const char *useException(const poplar::invalid_option &e) { return e.what(); }\n")
  endif()
  if(_header STREQUAL "poplin/MatMul.hpp")
    string(APPEND _body
      "poplar::Tensor useConvolution(poplar::Graph &g, const poplin::ConvParams &p) {\n"
      "  poplin::PlanningCache cache;\n"
      "  return poplin::createWeights(g, p, {}, {}, &cache);\n"
      "}\n")
  endif()
  if(_header IN_LIST _compat_expr_headers)
    string(APPEND _body
      "std::size_t useTraits() { assert(true); return poplar::TypeTraits::make<float>().size; }\n")
  endif()
  set(_unit ${CMAKE_CURRENT_BINARY_DIR}/sdk_headers/c++11/compat/${_header}.cpp)
  file(CONFIGURE OUTPUT ${_unit} CONTENT "#include <${_header}>\n${_body}")
  list(APPEND _compat_units ${_unit})
endforeach()
add_library(compat_header_units OBJECT ${_compat_units})
set_target_properties(compat_header_units PROPERTIES CXX_STANDARD 11 CXX_STANDARD_REQUIRED ON
  CXX_EXTENSIONS OFF)
target_compile_options(compat_header_units PRIVATE -Wall -Wextra -Werror -Wno-unused-function)
target_include_directories(compat_header_units PRIVATE ${ASPEN_SDK_DIR}/include)
add_dependencies(compat_header_units aspen_sdk_headers)
add_test(NAME compat_headers_provide
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/check_headers.sh ${CMAKE_BINARY_DIR}
          ${CMAKE_GENERATOR} compat_header_units)
set_tests_properties(compat_headers_provide PROPERTIES LABELS conformance TIMEOUT 300)

# (2) Clients. Each file names the issue items it checks.
aspen_add_test(compat_api LABEL conformance
  SOURCES compat/api_headers_engine.cpp compat/api_serialize.cpp compat/api_options.cpp
          compat/api_scalar_connect.cpp compat/api_overloads.cpp compat/api_debuginfo.cpp
  LIBS nlohmann_json::nlohmann_json)
aspen_add_test(compat_errors LABEL error SOURCES error/compat_errors.cpp)
# Issue 24: Graph::serializeTensors / deserializeTensors (PopLibs' reduce_op reads a tensor file).
aspen_add_test(compat_serialize_tensors LABEL conformance SOURCES compat/serialize_tensors.cpp
  LIBS nlohmann_json::nlohmann_json)
aspen_add_test(serialize_tensors_errors LABEL error SOURCES error/serialize_tensors_errors.cpp
  LIBS nlohmann_json::nlohmann_json)
# Issue: PopLibs' sort estimators read a 2-D worklist field with getInitialValues<std::vector<T>>.
aspen_add_test(compat_introspect_worklists LABEL conformance SOURCES compat/introspect_worklists.cpp)
aspen_add_test(compat_supervisor_vertex LABEL conformance SOURCES compat/supervisor_vertex.cpp)
add_dependencies(compat_supervisor_vertex popc)

# (3) CMake and link lines as Poplar users write them, and popc --version.
add_test(NAME compat_cmake_packages
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/compat/cmake_packages.sh ${ASPEN_SDK_DIR}
          ${CMAKE_CURRENT_SOURCE_DIR}/compat/client ${CMAKE_GENERATOR} ${CMAKE_CXX_COMPILER}
          ${CMAKE_BINARY_DIR})
set_tests_properties(compat_cmake_packages PROPERTIES LABELS integration TIMEOUT 300
  ENVIRONMENT "ASPEN_CACHE_DIR=${CMAKE_BINARY_DIR}/test/cache")

# (4) Issue 15 items 6 and 9 (libapi): each op's arguments as debug information in the
# report; the 1.x-era profile values.
aspen_add_test(compat_libapi LABEL conformance
  SOURCES compat/libapi_debuginfo_ops.cpp compat/libapi_profile_values.cpp
  LIBS Aspen::popops Aspen::poplin Aspen::popnn Aspen::gcl Aspen::pva nlohmann_json::nlohmann_json)
# The analyser page shows the op (layer, api, arguments) of a selected compute set or step.
if(TARGET profiling_matmul AND TARGET aspen-vision)
  add_test(NAME compat_libapi_debuginfo_browser
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/browser/libapi_debuginfo_browser.py
            $<TARGET_FILE:aspen-vision> $<TARGET_FILE:profiling_matmul> ${CMAKE_CURRENT_BINARY_DIR}/libapi_browser)
  set_tests_properties(compat_libapi_debuginfo_browser PROPERTIES LABELS browser TIMEOUT 300
    ENVIRONMENT "ASPEN_CACHE_DIR=${CMAKE_BINARY_DIR}/test/cache")
endif()
aspen_add_test(compat_libapi_errors LABEL error SOURCES error/libapi_errors.cpp LIBS Aspen::poputil)

# (5) PopLibs functions Poplar 3.x programs call that Aspen lacked (docs/poplibs-coverage.md):
# client-style programs checked against host references, and their errors.
aspen_add_test(poplibs_compat_instance_norm LABEL conformance SOURCES compat/poplibs_instance_norm.cpp
  LIBS Aspen::popops Aspen::poplin Aspen::popnn)
aspen_add_test(poplibs_added_errors LABEL error SOURCES error/poplibs_added_errors.cpp
  LIBS Aspen::popops Aspen::poplin Aspen::popnn)
aspen_add_test(poplibs_compat_fully_connected LABEL conformance SOURCES compat/poplibs_fully_connected.cpp
  LIBS Aspen::popops Aspen::poplin)
aspen_add_test(poplibs_compat_multiconv LABEL conformance SOURCES compat/poplibs_multiconv.cpp
  LIBS Aspen::popops Aspen::poplin)
aspen_add_test(poplibs_compat_debuginfo LABEL conformance SOURCES compat/poplibs_debuginfo.cpp
  LIBS Aspen::popops Aspen::poplin Aspen::popnn nlohmann_json::nlohmann_json)

# (6) PopLibs 3.x pre-planning (poplin/ConvPreplan.hpp; docs/poplibs-coverage.md): a client that
# pre-plans matMuls and a convolution, then builds and runs them; and its errors.
aspen_add_test(preplan_compat_client LABEL conformance SOURCES compat/preplan_client.cpp
  LIBS Aspen::popops Aspen::poplin)
aspen_add_test(preplan_errors LABEL error SOURCES error/preplan_errors.cpp LIBS Aspen::poplin)

# (7) popops/NaN.hpp: hasNaN and hasNaNOrInf against std::isnan / std::isfinite, and their errors.
aspen_add_test(popops_compat_nan LABEL conformance SOURCES compat/popops_nan.cpp LIBS Aspen::popops)
# popops/SelectScalarFromRows.hpp and popops/UpdateScalarInRows.hpp against a host loop.
aspen_add_test(popops_compat_scalar_in_rows LABEL conformance SOURCES compat/popops_scalar_in_rows.cpp
  LIBS Aspen::popops)
# popops/NormaliseImage.hpp against a host loop, for unsigned char, half and float images.
aspen_add_test(popops_compat_normalise_image LABEL conformance SOURCES compat/popops_normalise_image.cpp
  LIBS Aspen::popops)

# (8) Issue 26: what real programs still stopped on. The standard headers Poplar's headers bring
# (api_std_headers.cpp uses them having included only Poplar/PopLibs headers), the headers
# Poplar ships (CodeletFileType, ReplicatedStreamMode, replication_factor, gcl/TileAllocation),
# the older signatures, popnn ops on popops' codelets only, and the reports; and their errors.
aspen_add_test(compat_host_api LABEL conformance
  SOURCES compat/api_std_headers.cpp compat/api_host_headers.cpp compat/api_signatures.cpp
          compat/popnn_on_popops_codelets.cpp compat/reports_client.cpp
  LIBS Aspen::popops Aspen::poplin Aspen::popnn Aspen::poprand Aspen::gcl Aspen::pva)
aspen_add_test(compat_host_api_errors LABEL error SOURCES error/host_api_errors.cpp
  LIBS Aspen::popops Aspen::poputil Aspen::gcl Aspen::popfloat)
# popnn's recurrent layers (popnn/Lstm.hpp, Gru.hpp, Rnn.hpp, Recurrent.hpp) against host references with
# finite-difference gradients, float and half; and their errors.
aspen_add_test(popnn_compat_recurrent LABEL conformance
  SOURCES compat/popnn_lstm.cpp compat/popnn_gru.cpp compat/popnn_rnn.cpp compat/popnn_recurrent.cpp
  LIBS Aspen::popops Aspen::poplin Aspen::popnn)
aspen_add_test(popnn_rnn_errors LABEL error SOURCES error/popnn_rnn_errors.cpp
  LIBS Aspen::popops Aspen::poplin Aspen::popnn)
# popfloat's half conversions (every half bit pattern against its formula) and names.
aspen_add_test(popfloat_compat_cast_to_half LABEL conformance SOURCES compat/popfloat_cast_to_half.cpp
  LIBS Aspen::popops Aspen::popfloat)
# popfloat's gfloat casts against a host reference listing every value of each format.
aspen_add_test(popfloat_compat_gfloat_cast LABEL conformance SOURCES compat/popfloat_gfloat_cast.cpp
  LIBS Aspen::popops Aspen::popfloat)
# (9) Issue 21: codelets as Graphcore's popc builds them (test/compat/codelets/: clang's dialect,
# vertex names, popc's generated code, its command line), built with popc and addCodelets, run on
# the IPUModel and a DeviceManager IPU device against host loops.
aspen_add_test(compat_codelets_dialect LABEL integration SOURCES compat/codelets_dialect.cpp)
add_dependencies(compat_codelets_dialect popc)
aspen_add_test(compat_codelets_link LABEL integration SOURCES compat/codelets_link.cpp)
add_dependencies(compat_codelets_link popc)
# Item 6: the IPU builtins backed by the runtime (tile and worker ids, the cycle counter, the
# hardware random number generators), against the mapping, a host generator and the profile.
aspen_add_test(compat_codelets_builtins_rt LABEL integration SOURCES compat/codelets_builtins_rt.cpp
  LIBS TBB::tbb nlohmann_json::nlohmann_json)
add_dependencies(compat_codelets_builtins_rt popc)
# Issue 24: Engine::getReport and libpva's vertex and compute-set views, as PopLibs' tests use them.
aspen_add_test(compat_engine_get_report LABEL conformance SOURCES compat/engine_get_report.cpp LIBS Aspen::pva)
# Which build runs where: the IPUModel the cpu build, a DeviceManager IPU device the IPU build
# (__IPU__ defined) unless it is IPU assembly.
aspen_add_test(compat_codelets_targets LABEL integration SOURCES compat/codelets_targets.cpp)
add_dependencies(compat_codelets_targets popc)
