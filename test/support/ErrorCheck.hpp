// Copyright (c) Aspen contributors.
// The check every test/error case makes: the call throws the right poplar_error
// subclass, and its message names what is at fault.
#pragma once

#include <catch2/catch.hpp>

#include <exception>
#include <functional>
#include <initializer_list>
#include <string>
#include <typeinfo>

namespace aspen::test {

/// Runs `f`, which must throw `E` (or a subclass of it) with every one of
/// `fragments` in its message. With `exact`, a subclass of `E` is a failure too.
template <class E>
void requireError(const std::function<void()> &f, std::initializer_list<std::string> fragments,
                  bool exact = false) {
  try {
    f();
  } catch (const E &e) {
    if (exact)
      CHECK(typeid(e) == typeid(E));
    const std::string what = e.what();
    for (const std::string &fragment : fragments) {
      INFO("message: " << what);
      INFO("expected to contain: " << fragment);
      CHECK(what.find(fragment) != std::string::npos);
    }
    return;
  } catch (const std::exception &e) {
    FAIL("wrong exception type (" << typeid(e).name() << "): " << e.what());
  }
  FAIL("no exception thrown");
}

/// `requireError` that also rejects a subclass of `E`.
template <class E>
void requireExactError(const std::function<void()> &f, std::initializer_list<std::string> fragments) {
  requireError<E>(f, fragments, true);
}

} // namespace aspen::test
