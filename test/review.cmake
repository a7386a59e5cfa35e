# The engineering review's regression cases: hostile inputs to libgraph, the
# compiler and the runtime that once crashed or misbehaved (test/error/review_errors.cpp).
aspen_add_test(review_errors LABEL error SOURCES error/review_errors.cpp LIBS Threads::Threads)
