// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_STREAMCALLBACK_HPP
#define POPLAR_STREAMCALLBACK_HPP

#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace poplar {

/// A host object that supplies (host-to-device) or receives (device-to-host)
/// the data of a stream, connected with `Engine::connectStreamToCallback`.
///
/// For a host-to-device copy the engine calls `prefetch(p)` first; if it
/// returns `Result::NotAvailable` it calls `fetch(p)`; then `complete()`.
/// For a device-to-host copy it calls `fetch(p)` with the data, then `complete()`.
/// `p` points at a buffer of exactly the stream's size in bytes.
class StreamCallback {
public:
  enum class Result { Success, NotAvailable };
  virtual ~StreamCallback() {}
  /// Fill `p` now if the data is ready; `NotAvailable` makes the engine call `fetch`.
  virtual Result prefetch(void *p) = 0;
  /// Fill (host-to-device) or consume (device-to-host) the buffer at `p`.
  virtual void fetch(void *p) = 0;
  /// The transfer that used the last prefetched or fetched buffer has finished.
  virtual void complete() = 0;
  /// Prefetched data will not be used (kept for source compatibility; not called by Aspen).
  virtual void invalidatePrefetched() {}
};

/// A callback with only `fetch`: `prefetch` always says `NotAvailable`.
class LegacyStreamCallback : public StreamCallback {
public:
  Result prefetch(void *) override final { return Result::NotAvailable; }
  void complete() override {}
};

/// What `Engine::connectStreamToCallback` takes: a `StreamCallback` object
/// (`std::unique_ptr<MyCallback>`) or any callable taking `void *`
/// (a lambda, a function pointer, `std::function<void(void *)>`).
/// Example: `engine.connectStreamToCallback("in", [&](void *p) { fill(p); });`
class StreamCallbackHandle {
public:
  /// Wraps a callable `f(void *)` as a callback whose `fetch` calls it. An empty
  /// `std::function` (or null function pointer) wraps to nothing, which
  /// `Engine::connectStreamToCallback` rejects.
  template <class F, typename std::enable_if<
                         std::is_constructible<std::function<void(void *)>, F>::value &&
                             !std::is_same<typename std::decay<F>::type, StreamCallbackHandle>::value,
                         int>::type = 0>
  StreamCallbackHandle(F &&f) {
    std::function<void(void *)> function(std::forward<F>(f));
    if (function)
      callback_.reset(new FunctionCallback(std::move(function)));
  }

  /// Takes ownership of a callback object.
  template <class C, typename std::enable_if<std::is_base_of<StreamCallback, C>::value, int>::type = 0>
  StreamCallbackHandle(std::unique_ptr<C> callback) : callback_(std::move(callback)) {}

  StreamCallbackHandle(StreamCallbackHandle &&) = default;
  StreamCallbackHandle &operator=(StreamCallbackHandle &&) = default;

  /// Gives up the wrapped callback (used by the engine).
  std::unique_ptr<StreamCallback> release() { return std::move(callback_); }

private:
  class FunctionCallback : public LegacyStreamCallback {
  public:
    explicit FunctionCallback(std::function<void(void *)> f) : f_(std::move(f)) {}
    void fetch(void *p) override { f_(p); }

  private:
    std::function<void(void *)> f_;
  };
  std::unique_ptr<StreamCallback> callback_;
};

} // namespace poplar

#endif
