// Copyright (c) Aspen contributors. Poplar-compatible codelet header.
// `half`: IEEE 754 binary16, two bytes, arithmetic rounded to half after each
// operation, as the IPU's half arithmetic does.
//
// Built by the codelet compiler (clang >= 15, docs/codelets.md) `half` is clang's
// built-in `_Float16`, as Graphcore's popc has it: a floating-point type with every
// implicit conversion (`half h = in;` from an `Input<float>`), vectors of it
// (`half4`, <ipudef.h>) and the <cmath> functions (`std::sqrt(h)` is a half).
// Elsewhere (GCC, the host programs' own tests of these headers) it is a class with
// the same storage and rounding:
//
//   half a = 1.5f, b = 2;        // from float / int
//   half c = a * b;              // half op half -> half
//   float f = a * 0.5f;          // half op float -> float
//   half d = 0.25_h;             // literal
//
// With the class, `cond ? h : 0` is ambiguous (half and int convert both ways);
// write `cond ? h : half(0)`. A half passed to printf must be cast to float first.
#ifndef POPLAR_HALFFLOAT_HPP
#define POPLAR_HALFFLOAT_HPP

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

// clang's _Float16 (x86 since clang 15): the built-in half. libclang 14, which only
// parses codelets to find their vertex types, has no _Float16 on x86 and sees
// `__fp16` instead (with native half arguments, see Introspect.cpp).
#if defined(__clang__) && defined(__FLT16_MAX__) && !defined(ASPEN_HALF_CLASS)
#define ASPEN_HALF_BUILTIN 1
typedef _Float16 half;
#elif defined(__clang__) && defined(__ASPEN_INTROSPECTION__) && !defined(ASPEN_HALF_CLASS)
#define ASPEN_HALF_BUILTIN 1
typedef __fp16 half;
#endif

// GCC's _Float16 gives exact, fast conversions to the class; other compilers use the
// portable code below.
#if !defined(ASPEN_HALF_BUILTIN) && defined(__FLT16_MAX__) && defined(__GNUC__) && !defined(__clang__) &&    \
    !defined(ASPEN_HALF_SOFTWARE)
#define ASPEN_HALF_USE_FLOAT16 1
#endif

namespace poplar {

namespace aspen_detail {

inline std::uint32_t floatBits(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  return x;
}
inline float floatFromBits(std::uint32_t x) {
  float f;
  std::memcpy(&f, &x, sizeof f);
  return f;
}

/// float -> binary16 bits, round to nearest, ties to even (portable version).
inline std::uint16_t softFloatToHalf(float value) {
  const std::uint32_t x = floatBits(value);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) // infinity or NaN (NaNs stay quiet, keep the top payload bits)
    return static_cast<std::uint16_t>(sign |
                                      (absx > 0x7f800000u ? 0x7e00u | ((absx >> 13) & 0x3ffu) : 0x7c00u));
  if (absx >= 0x47800000u) // >= 65536: overflows to infinity
    return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (absx >= 0x38800000u) { // normal half: rebias the exponent, round the 13 dropped bits
    std::uint32_t h = (absx - 0x38000000u) >> 13;
    const std::uint32_t rest = absx & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
      ++h; // a carry into the exponent is the correct result (up to infinity)
    return static_cast<std::uint16_t>(sign | h);
  }
  const std::uint32_t exponent = absx >> 23;
  if (exponent < 102) // below half the smallest subnormal: rounds to zero
    return static_cast<std::uint16_t>(sign);
  // Subnormal half: units of 2^-24.
  const std::uint32_t mantissa = (absx & 0x7fffffu) | 0x800000u;
  const std::uint32_t shift = 126 - exponent;
  std::uint32_t h = mantissa >> shift;
  const std::uint32_t rest = mantissa & ((1u << shift) - 1);
  const std::uint32_t halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (h & 1u)))
    ++h;
  return static_cast<std::uint16_t>(sign | h);
}

/// binary16 bits -> float (exact; portable version).
inline float softHalfToFloat(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  std::uint32_t exponent = (bits >> 10) & 0x1fu;
  std::uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {
    if (mantissa == 0)
      return floatFromBits(sign);
    exponent = 113; // normalise the subnormal
    while (!(mantissa & 0x400u)) {
      mantissa <<= 1;
      --exponent;
    }
    return floatFromBits(sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13));
  }
  if (exponent == 31)
    return floatFromBits(sign | 0x7f800000u | (mantissa << 13));
  return floatFromBits(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

} // namespace aspen_detail

/// The binary16 bit pattern nearest to `value` (ties to even).
inline std::uint16_t floatToHalf(float value) {
#if defined(ASPEN_HALF_BUILTIN)
  const half h = static_cast<half>(value);
  std::uint16_t bits;
  std::memcpy(&bits, &h, sizeof bits);
  return bits;
#elif defined(ASPEN_HALF_USE_FLOAT16)
  const _Float16 h = static_cast<_Float16>(value);
  std::uint16_t bits;
  std::memcpy(&bits, &h, sizeof bits);
  return bits;
#else
  return aspen_detail::softFloatToHalf(value);
#endif
}

/// The binary16 bit pattern nearest to `value` (ties to even, rounded once).
inline std::uint16_t doubleToHalf(double value) {
#if defined(ASPEN_HALF_BUILTIN)
  const half h = static_cast<half>(value);
  std::uint16_t bits;
  std::memcpy(&bits, &h, sizeof bits);
  return bits;
#elif defined(ASPEN_HALF_USE_FLOAT16)
  const _Float16 h = static_cast<_Float16>(value);
  std::uint16_t bits;
  std::memcpy(&bits, &h, sizeof bits);
  return bits;
#else
  // Round to float towards zero with a sticky bit ("round to odd"), so that the
  // second rounding to half gives the correctly rounded result.
  float f = static_cast<float>(value);
  if (static_cast<double>(f) != value) {
    std::uint32_t x = aspen_detail::floatBits(f);
    const double af = f < 0 ? -static_cast<double>(f) : static_cast<double>(f);
    const double av = value < 0 ? -value : value;
    if (af > av)
      --x;
    x |= 1u;
    f = aspen_detail::floatFromBits(x);
  }
  return aspen_detail::softFloatToHalf(f);
#endif
}

/// The value of the binary16 bit pattern `bits` (exact).
inline float halfToFloat(std::uint16_t bits) {
#if defined(ASPEN_HALF_BUILTIN)
  half h;
  std::memcpy(&h, &bits, sizeof h);
  return static_cast<float>(h);
#elif defined(ASPEN_HALF_USE_FLOAT16)
  _Float16 h;
  std::memcpy(&h, &bits, sizeof h);
  return static_cast<float>(h);
#else
  return aspen_detail::softHalfToFloat(bits);
#endif
}

} // namespace poplar

#ifndef ASPEN_HALF_BUILTIN
/// IEEE 754 binary16. Two bytes, trivially constructible and copyable, so it can
/// be a vertex field or a tensor element.
class half {
public:
  half() = default;
  half(float value) : bits_(poplar::floatToHalf(value)) {}
  half(double value) : bits_(poplar::doubleToHalf(value)) {}
  half(long double value) : bits_(poplar::doubleToHalf(static_cast<double>(value))) {}
  template <class I, typename std::enable_if<std::is_integral<I>::value, int>::type = 0>
  half(I value) : bits_(poplar::floatToHalf(static_cast<float>(value))) {}

  operator float() const { return poplar::halfToFloat(bits_); }

  /// The half with bit pattern `bits`.
  static constexpr half fromBits(std::uint16_t bits) { return half(BitsTag(), bits); }
  /// The bit pattern.
  constexpr std::uint16_t bits() const { return bits_; }

  half &operator+=(half o) { return *this = half(float(*this) + float(o)); }
  half &operator-=(half o) { return *this = half(float(*this) - float(o)); }
  half &operator*=(half o) { return *this = half(float(*this) * float(o)); }
  half &operator/=(half o) { return *this = half(float(*this) / float(o)); }
  template <class T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0>
  half &operator+=(T o) {
    return *this = half(float(*this) + o);
  }
  template <class T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0>
  half &operator-=(T o) {
    return *this = half(float(*this) - o);
  }
  template <class T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0>
  half &operator*=(T o) {
    return *this = half(float(*this) * o);
  }
  template <class T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0>
  half &operator/=(T o) {
    return *this = half(float(*this) / o);
  }
  half &operator++() { return *this += half(1.0f); }
  half &operator--() { return *this -= half(1.0f); }
  half operator++(int) {
    half old = *this;
    ++*this;
    return old;
  }
  half operator--(int) {
    half old = *this;
    --*this;
    return old;
  }

private:
  struct BitsTag {};
  constexpr half(BitsTag, std::uint16_t bits) : bits_(bits) {}
  std::uint16_t bits_;
};

namespace poplar {
namespace aspen_detail {
// The result of `half op T`: integers give half, floating-point types their own
// type (promoted to at least float), as with a built-in 16-bit float type.
template <class T, bool = std::is_integral<T>::value> struct HalfMixed { typedef half type; };
template <class T> struct HalfMixed<T, false> { typedef typename std::common_type<float, T>::type type; };
template <class T> using EnableArith = typename std::enable_if<std::is_arithmetic<T>::value, int>::type;
} // namespace aspen_detail
} // namespace poplar

inline half operator+(half a) {
  return a;
}
inline half operator-(half a) {
  return half::fromBits(static_cast<std::uint16_t>(a.bits() ^ 0x8000u));
}

#define ASPEN_HALF_ARITH(op)                                                                                 \
  inline half operator op(half a, half b) {                                                                  \
    return half(float(a) op float(b));                                                                       \
  }                                                                                                          \
  template <class T, poplar::aspen_detail::EnableArith<T> = 0>                                               \
  typename poplar::aspen_detail::HalfMixed<T>::type operator op(half a, T b) {                               \
    typedef typename poplar::aspen_detail::HalfMixed<T>::type R;                                             \
    typedef typename std::common_type<float, T>::type C;                                                     \
    return R(C(float(a)) op C(b));                                                                           \
  }                                                                                                          \
  template <class T, poplar::aspen_detail::EnableArith<T> = 0>                                               \
  typename poplar::aspen_detail::HalfMixed<T>::type operator op(T a, half b) {                               \
    typedef typename poplar::aspen_detail::HalfMixed<T>::type R;                                             \
    typedef typename std::common_type<float, T>::type C;                                                     \
    return R(C(a) op C(float(b)));                                                                           \
  }
ASPEN_HALF_ARITH(+)
ASPEN_HALF_ARITH(-)
ASPEN_HALF_ARITH(*)
ASPEN_HALF_ARITH(/)
#undef ASPEN_HALF_ARITH

#define ASPEN_HALF_COMPARE(op)                                                                               \
  inline bool operator op(half a, half b) {                                                                  \
    return float(a) op float(b);                                                                             \
  }                                                                                                          \
  template <class T, poplar::aspen_detail::EnableArith<T> = 0> bool operator op(half a, T b) {               \
    typedef typename std::common_type<float, T>::type C;                                                     \
    return C(float(a)) op C(b);                                                                              \
  }                                                                                                          \
  template <class T, poplar::aspen_detail::EnableArith<T> = 0> bool operator op(T a, half b) {               \
    typedef typename std::common_type<float, T>::type C;                                                     \
    return C(a) op C(float(b));                                                                              \
  }
ASPEN_HALF_COMPARE(==)
ASPEN_HALF_COMPARE(!=)
ASPEN_HALF_COMPARE(<)
ASPEN_HALF_COMPARE(<=)
ASPEN_HALF_COMPARE(>)
ASPEN_HALF_COMPARE(>=)
#undef ASPEN_HALF_COMPARE

/// `1.5_h` is a half literal.
inline half operator"" _h(long double value) {
  return half(static_cast<double>(value));
}
inline half operator"" _h(unsigned long long value) {
  return half(static_cast<double>(value));
}

#endif // !ASPEN_HALF_BUILTIN

namespace poplar {
using ::half;
} // namespace poplar

namespace aspen_codelet_detail {
/// The constants of std::numeric_limits<half>, whichever type half is (IEEE binary16).
struct HalfLimitConstants {
  static constexpr int digits = 11;
  static constexpr int digits10 = 3;
  static constexpr int max_digits10 = 5;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr int radix = 2;
  static constexpr int min_exponent = -13;
  static constexpr int min_exponent10 = -4;
  static constexpr int max_exponent = 16;
  static constexpr int max_exponent10 = 4;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = true;
  static constexpr std::float_denorm_style has_denorm = std::denorm_present;
  static constexpr bool has_denorm_loss = false;
  static constexpr bool is_iec559 = true;
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = false;
  static constexpr std::float_round_style round_style = std::round_to_nearest;
};
} // namespace aspen_codelet_detail

#ifdef ASPEN_HALF_BUILTIN
#include <cmath>
// The built-in half: literals, limits and the <cmath> functions (computed in float
// and rounded once, as the IPU's half functions are; without these a half argument
// would be ambiguous between the float, double and long double overloads).
inline half operator"" _h(long double value) {
  return static_cast<half>(value);
}
inline half operator"" _h(unsigned long long value) {
  return static_cast<half>(value);
}

namespace std {
template <> class numeric_limits<half> : public aspen_codelet_detail::HalfLimitConstants {
  static constexpr half fromBits(unsigned short bits) noexcept { return __builtin_bit_cast(half, bits); }

public:
  static constexpr bool is_specialized = true;
  static constexpr half min() noexcept { return fromBits(0x0400); }
  static constexpr half max() noexcept { return fromBits(0x7bff); }
  static constexpr half lowest() noexcept { return fromBits(0xfbff); }
  static constexpr half epsilon() noexcept { return fromBits(0x1400); }
  static constexpr half round_error() noexcept { return fromBits(0x3800); }
  static constexpr half infinity() noexcept { return fromBits(0x7c00); }
  static constexpr half quiet_NaN() noexcept { return fromBits(0x7e00); }
  static constexpr half signaling_NaN() noexcept { return fromBits(0x7d00); }
  static constexpr half denorm_min() noexcept { return fromBits(0x0001); }
};

#define ASPEN_HALF_UNARY(f)                                                                                  \
  inline half f(half x) {                                                                                    \
    return static_cast<half>(::std::f(static_cast<float>(x)));                                               \
  }
#define ASPEN_HALF_BINARY(f)                                                                                 \
  inline half f(half x, half y) {                                                                            \
    return static_cast<half>(::std::f(static_cast<float>(x), static_cast<float>(y)));                        \
  }
#define ASPEN_HALF_TEST(f)                                                                                   \
  inline bool f(half x) {                                                                                    \
    return ::std::f(static_cast<float>(x));                                                                  \
  }
#define ASPEN_HALF_FUNCTIONS                                                                                 \
  ASPEN_HALF_UNARY(abs)                                                                                      \
  ASPEN_HALF_UNARY(fabs)                                                                                     \
  ASPEN_HALF_UNARY(sqrt)                                                                                     \
  ASPEN_HALF_UNARY(cbrt)                                                                                     \
  ASPEN_HALF_UNARY(exp)                                                                                      \
  ASPEN_HALF_UNARY(exp2)                                                                                     \
  ASPEN_HALF_UNARY(expm1)                                                                                    \
  ASPEN_HALF_UNARY(log)                                                                                      \
  ASPEN_HALF_UNARY(log2)                                                                                     \
  ASPEN_HALF_UNARY(log10)                                                                                    \
  ASPEN_HALF_UNARY(log1p)                                                                                    \
  ASPEN_HALF_UNARY(logb)                                                                                     \
  ASPEN_HALF_UNARY(sin)                                                                                      \
  ASPEN_HALF_UNARY(cos)                                                                                      \
  ASPEN_HALF_UNARY(tan)                                                                                      \
  ASPEN_HALF_UNARY(asin)                                                                                     \
  ASPEN_HALF_UNARY(acos)                                                                                     \
  ASPEN_HALF_UNARY(atan)                                                                                     \
  ASPEN_HALF_UNARY(sinh)                                                                                     \
  ASPEN_HALF_UNARY(cosh)                                                                                     \
  ASPEN_HALF_UNARY(tanh)                                                                                     \
  ASPEN_HALF_UNARY(asinh)                                                                                    \
  ASPEN_HALF_UNARY(acosh)                                                                                    \
  ASPEN_HALF_UNARY(atanh)                                                                                    \
  ASPEN_HALF_UNARY(erf)                                                                                      \
  ASPEN_HALF_UNARY(erfc)                                                                                     \
  ASPEN_HALF_UNARY(tgamma)                                                                                   \
  ASPEN_HALF_UNARY(lgamma)                                                                                   \
  ASPEN_HALF_UNARY(ceil)                                                                                     \
  ASPEN_HALF_UNARY(floor)                                                                                    \
  ASPEN_HALF_UNARY(trunc)                                                                                    \
  ASPEN_HALF_UNARY(round)                                                                                    \
  ASPEN_HALF_UNARY(rint)                                                                                     \
  ASPEN_HALF_UNARY(nearbyint)                                                                                \
  ASPEN_HALF_BINARY(pow)                                                                                     \
  ASPEN_HALF_BINARY(atan2)                                                                                   \
  ASPEN_HALF_BINARY(fmod)                                                                                    \
  ASPEN_HALF_BINARY(remainder)                                                                               \
  ASPEN_HALF_BINARY(fmin)                                                                                    \
  ASPEN_HALF_BINARY(fmax)                                                                                    \
  ASPEN_HALF_BINARY(fdim)                                                                                    \
  ASPEN_HALF_BINARY(copysign)                                                                                \
  ASPEN_HALF_BINARY(hypot)                                                                                   \
  ASPEN_HALF_TEST(isnan)                                                                                     \
  ASPEN_HALF_TEST(isinf)                                                                                     \
  ASPEN_HALF_TEST(isfinite)                                                                                  \
  ASPEN_HALF_TEST(isnormal)                                                                                  \
  ASPEN_HALF_TEST(signbit)                                                                                   \
  inline half fma(half x, half y, half z) {                                                                  \
    return static_cast<half>(                                                                                \
        ::std::fma(static_cast<float>(x), static_cast<float>(y), static_cast<float>(z)));                    \
  }
ASPEN_HALF_FUNCTIONS
} // namespace std
#undef ASPEN_HALF_FUNCTIONS
#undef ASPEN_HALF_UNARY
#undef ASPEN_HALF_BINARY
#undef ASPEN_HALF_TEST
// As <math.h> makes the float overloads global, so are these.
using std::abs;
using std::acos;
using std::acosh;
using std::asin;
using std::asinh;
using std::atan;
using std::atan2;
using std::atanh;
using std::cbrt;
using std::ceil;
using std::copysign;
using std::cos;
using std::cosh;
using std::erf;
using std::erfc;
using std::exp;
using std::exp2;
using std::expm1;
using std::fabs;
using std::fdim;
using std::floor;
using std::fma;
using std::fmax;
using std::fmin;
using std::fmod;
using std::hypot;
using std::isfinite;
using std::isinf;
using std::isnan;
using std::isnormal;
using std::lgamma;
using std::log;
using std::log10;
using std::log1p;
using std::log2;
using std::logb;
using std::nearbyint;
using std::pow;
using std::remainder;
using std::rint;
using std::round;
using std::signbit;
using std::sin;
using std::sinh;
using std::sqrt;
using std::tan;
using std::tanh;
using std::tgamma;
using std::trunc;
#else
namespace std {
template <> class numeric_limits<half> : public aspen_codelet_detail::HalfLimitConstants {
public:
  static constexpr bool is_specialized = true;
  static constexpr half min() noexcept { return half::fromBits(0x0400); }
  static constexpr half max() noexcept { return half::fromBits(0x7bff); }
  static constexpr half lowest() noexcept { return half::fromBits(0xfbff); }
  static constexpr half epsilon() noexcept { return half::fromBits(0x1400); }
  static constexpr half round_error() noexcept { return half::fromBits(0x3800); }
  static constexpr half infinity() noexcept { return half::fromBits(0x7c00); }
  static constexpr half quiet_NaN() noexcept { return half::fromBits(0x7e00); }
  static constexpr half signaling_NaN() noexcept { return half::fromBits(0x7d00); }
  static constexpr half denorm_min() noexcept { return half::fromBits(0x0001); }
};
} // namespace std
#endif

#endif
