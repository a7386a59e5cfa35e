# Tests of poplar::Tensor and the tensor-view algebra (libgraph/src/ir/TensorAlgebra.*).
aspen_add_test(tensor_views LABEL conformance SOURCES conformance/tensor_views.cpp)
aspen_add_test(tensor_errors LABEL error SOURCES error/tensor_errors.cpp)
aspen_add_test(tensor_algebra LABEL unit SOURCES unit/tensor_algebra.cpp)
aspen_add_test(tensor_views_bench LABEL bench SOURCES bench/tensor_views_bench.cpp)
