// Copyright (c) Aspen contributors. Support header of the gccs family (docs/gccs.md).
// Portable spellings of attributes, for headers that must compile under several compilers
// and language levels.
#ifndef GCCS_COMPILERFEATURES_HPP
#define GCCS_COMPILERFEATURES_HPP

#if defined(__has_cpp_attribute)
#define GCCS_HAS_CPP_ATTRIBUTE(x) __has_cpp_attribute(x)
#else
#define GCCS_HAS_CPP_ATTRIBUTE(x) 0
#endif

// Marks a declaration deprecated: `GC_DEPRECATED void f();`
#if GCCS_HAS_CPP_ATTRIBUTE(deprecated) && __cplusplus >= 201402L
#define GC_DEPRECATED [[deprecated]]
#define GC_DEPRECATED_MSG(msg) [[deprecated(msg)]]
#elif defined(__GNUC__)
#define GC_DEPRECATED __attribute__((deprecated))
#define GC_DEPRECATED_MSG(msg) __attribute__((deprecated(msg)))
#else
#define GC_DEPRECATED
#define GC_DEPRECATED_MSG(msg)
#endif

// A result the caller should not drop.
#if GCCS_HAS_CPP_ATTRIBUTE(nodiscard) && __cplusplus >= 201703L
#define GC_NODISCARD [[nodiscard]]
#elif defined(__GNUC__)
#define GC_NODISCARD __attribute__((warn_unused_result))
#else
#define GC_NODISCARD
#endif

// A declaration that may be unused.
#if GCCS_HAS_CPP_ATTRIBUTE(maybe_unused) && __cplusplus >= 201703L
#define GC_MAYBE_UNUSED [[maybe_unused]]
#elif defined(__GNUC__)
#define GC_MAYBE_UNUSED __attribute__((unused))
#else
#define GC_MAYBE_UNUSED
#endif

// An intended fall-through between switch cases.
#if GCCS_HAS_CPP_ATTRIBUTE(fallthrough) && __cplusplus >= 201703L
#define GC_FALLTHROUGH [[fallthrough]]
#elif defined(__GNUC__) && __GNUC__ >= 7
#define GC_FALLTHROUGH __attribute__((fallthrough))
#else
#define GC_FALLTHROUGH
#endif

// Branch hints.
#if defined(__GNUC__)
#define GC_LIKELY(x) __builtin_expect(!!(x), 1)
#define GC_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define GC_LIKELY(x) (x)
#define GC_UNLIKELY(x) (x)
#endif

#endif
