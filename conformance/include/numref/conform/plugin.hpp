// numref conformance — a C++ class as a backend plugin.       spec §32 (backend C ABI 1.3), §32.6
//
// backend.h is the contract (for C, Rust, Zig and hand-written C++); this C++-only header
// fills it from a class, so that a C++ backend writes its arithmetic and nothing else:
//
//   struct MyBackend {
//     static constexpr const char* name = "mine";             // required: name, version,
//     static constexpr const char* version = "1";             // description, profiles
//     static constexpr const char* description = "f32 -> bf16 by the RNE bit trick";
//     static constexpr const char* profiles = "ocp";
//     static constexpr std::uint32_t caps = 0;                 // optional: NUMREF_CAP_* (0)
//     static constexpr const char* departures = nullptr;       // optional: §34.5 list (NULL)
//     bool cast_supported(std::uint32_t from, std::uint32_t to, const numref_policy* p);
//     std::int64_t cast(std::uint32_t from, std::uint32_t to, const numref_policy* p, std::size_t n,
//                       const std::uint32_t* in, const std::uint32_t* r, std::uint32_t* out, std::uint8_t* flags);
//   };
//   NUMREF_BACKEND(MyBackend)   // exports numref_backend_abi_version and numref_backend_open
//
// Families. Every entry point of numref_backend is a member function OF THE SAME NAME taking
// the entry's C arguments without `ctx` (it may be static or const): cast_supported / cast,
// tensor_supported / scale / quantize / dequantize / fake_quant, mor_supported / mor /
// mor_sub, gaussws_supported / gaussws (1.3), mma_supported / mma (1.9). The header detects them (C++20
// requires-expressions): the `ops` string lists the families present, in the order of backend.h
// ("cast scale quantize dequantize fake-quant mor mor-sub gaussws mma"), and the entries of absent
// families stay NULL (the runner reports their cases skipped-unsupported, §32.2). A member with an entry's name but not its arguments, or a family
// without its *_supported query, is a compile-time error.
//
// Errors. Report them by throwing: an exception leaving an entry point becomes a return of -1
// with last_error() = its what() (an exception of another type: "unknown exception"); a
// *_supported query that throws answers 0. A negative value returned without an exception is
// passed on with last_error() NULL. The wrappers are one static function per entry point (a
// call and a zero-cost try block); nothing is added per element.
//
// Instances (§32.1). Every numref_backend_open creates one object of the class; the runner
// uses one instance from one thread at a time, so members may hold caches without locks.
// Arguments: a constructor MyBackend(std::string_view args) receives the text after '?' of
// --backend; a class without one takes no arguments and open answers
// "<name> takes no arguments (got '<args>')". A constructor that throws makes open return NULL
// with the exception's what() as the message; throw numref::conform::Unavailable("<reason>")
// for the §32.6 "unavailable: <reason>" of a backend that cannot run on this machine.
//
// Escape hatch (tests of the runner only): an optional member `void adjust_table(numref_backend&)`
// gets the last word on the filled table (broken_backend.cpp imitates older ABI minors with it).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "numref/backend.h"

namespace numref::conform {

// §32.6 The prefix of an open error meaning "correctly built, cannot run here". The runner's
// copy (backend.hpp kUnavailablePrefix) is pinned equal by test_plugin_header.cpp.
inline constexpr std::string_view kUnavailable = "unavailable: ";

// Thrown by a backend's constructor: numref_backend_open answers "unavailable: <reason>".
struct Unavailable : std::runtime_error {
  explicit Unavailable(const std::string& reason) : std::runtime_error(std::string(kUnavailable) + reason) {}
};

namespace plugin_detail {

// One entry point of numref_backend: its slot in the table, the op family it implements (NULL
// for the *_supported queries), the query that must come with it, and the call of the class's
// member of the same name.
#define NUMREF_PLUGIN_ENTRY(field, op_name, query_field)        \
  struct field {                                                \
    static constexpr auto slot = &numref_backend::field;        \
    static constexpr const char* op = op_name;                  \
    using query = query_field;                                  \
    template <class T>                                          \
    static constexpr bool named = requires {                    \
      &T::field;                                                \
    };                                                          \
    template <class T, class... A>                              \
    static auto call(T& t, A... a) -> decltype(t.field(a...)) { \
      return t.field(a...);                                     \
    }                                                           \
  };
NUMREF_PLUGIN_ENTRY(cast_supported, nullptr, cast_supported)
NUMREF_PLUGIN_ENTRY(cast, "cast", cast_supported)
NUMREF_PLUGIN_ENTRY(tensor_supported, nullptr, tensor_supported)
NUMREF_PLUGIN_ENTRY(scale, "scale", tensor_supported)
NUMREF_PLUGIN_ENTRY(quantize, "quantize", tensor_supported)
NUMREF_PLUGIN_ENTRY(dequantize, "dequantize", tensor_supported)
NUMREF_PLUGIN_ENTRY(fake_quant, "fake-quant", tensor_supported)
NUMREF_PLUGIN_ENTRY(mor_supported, nullptr, mor_supported)
NUMREF_PLUGIN_ENTRY(mor, "mor", mor_supported)
NUMREF_PLUGIN_ENTRY(mor_sub, "mor-sub", mor_supported)
NUMREF_PLUGIN_ENTRY(gaussws_supported, nullptr, gaussws_supported)
NUMREF_PLUGIN_ENTRY(gaussws, "gaussws", gaussws_supported)
NUMREF_PLUGIN_ENTRY(mma_supported, nullptr, mma_supported)
NUMREF_PLUGIN_ENTRY(mma, "mma", mma_supported)
#undef NUMREF_PLUGIN_ENTRY

template <class... M>
struct List {};
// Every entry point after close, in the order of the struct (the order of the ops string).
using Entries = List<cast_supported, cast, tensor_supported, scale, quantize, dequantize, fake_quant, mor_supported,
                     mor, mor_sub, gaussws_supported, gaussws, mma_supported, mma>;

template <class T>
struct Instance {
  numref_backend table{};
  std::string error;  // last_error(); empty = NULL
  T impl;
  explicit Instance(std::string_view args) : impl(make(args)) {}

  static T make(std::string_view args) {
    if constexpr (std::is_constructible_v<T, std::string_view>) {
      return T(args);
    } else {
      if (!args.empty())
        throw std::invalid_argument(std::string(T::name) + " takes no arguments (got '" + std::string(args) + "')");
      return T();
    }
  }
  static Instance& of(void* ctx) { return *static_cast<Instance*>(ctx); }
};

inline void set_error(std::string& error, const char* what) noexcept {
  try {
    error = what;
  } catch (...) {
    error.clear();  // out of memory for the message: last_error() NULL, the return still negative
  }
}

// The C function of entry M for class T (Fp: the C pointer type of the slot).
template <class T, class M, class Fp = std::remove_cvref_t<decltype(std::declval<numref_backend&>().*M::slot)>>
struct Thunk;
template <class T, class M, class R, class... A>
struct Thunk<T, M, R (*)(void*, A...)> {
  static constexpr bool present = requires(T & t, A... a) { M::call(t, a...); };

  static R fn(void* ctx, A... a) noexcept {
    auto& in = Instance<T>::of(ctx);
    if constexpr (std::is_same_v<R, int>) {  // a *_supported query: 1 or 0, 0 on an exception
      try {
        return M::call(in.impl, a...) ? 1 : 0;
      } catch (...) {
        return 0;
      }
    } else {  // an operation: the number of results, or -1 with last_error set
      try {
        const R got = M::call(in.impl, a...);
        if (got < 0) in.error.clear();
        return got;
      } catch (const std::exception& e) {
        set_error(in.error, e.what());
      } catch (...) {
        set_error(in.error, "unknown exception");
      }
      return -1;
    }
  }
};

template <class T, class M>
constexpr bool check() {
  static_assert(Thunk<T, M>::present || !M::template named<T>,
                "a member named like a numref_backend entry point must take that entry's C arguments without ctx");
  static_assert(!Thunk<T, M>::present || Thunk<T, typename M::query>::present,
                "an op family's entry point needs the family's *_supported query");
  return true;
}

template <class T, class... M>
constexpr bool checked(List<M...>) {
  static_assert((... || (Thunk<T, M>::present && M::op != nullptr)), "a backend implements at least one op family");
  return (check<T, M>() && ...);
}

// The ops string: the families whose operation entry is present, space separated.
template <class T, class... M>
constexpr std::array<char, 96> ops_text(List<M...>) {
  std::array<char, 96> s{};
  std::size_t n = 0;
  const auto add = [&](const char* w) {
    if (n) s[n++] = ' ';
    for (; *w; ++w) s[n++] = *w;
  };
  ((Thunk<T, M>::present && M::op ? add(M::op) : void()), ...);
  return s;
}
template <class T>
inline constexpr std::array<char, 96> kOps = ops_text<T>(Entries{});

template <class T, class M>
void bind_one(numref_backend& b) {
  if constexpr (Thunk<T, M>::present) b.*M::slot = &Thunk<T, M>::fn;  // else left NULL
}
template <class T, class... M>
void bind(numref_backend& b, List<M...>) {
  (bind_one<T, M>(b), ...);
}

// Metadata may be a const char* (constexpr) or a std::string (computed once).
constexpr const char* c_str(const char* s) { return s; }
inline const char* c_str(const std::string& s) { return s.c_str(); }

template <class T>
const char* last_error(void* ctx) noexcept {
  const std::string& e = Instance<T>::of(ctx).error;
  return e.empty() ? nullptr : e.c_str();
}
template <class T>
void close(void* ctx) noexcept {
  delete &Instance<T>::of(ctx);
}

}  // namespace plugin_detail

// numref_backend_open for class T: one new instance, or NULL with the message in err (§32.1, §32.6).
template <class T>
const numref_backend* backend_open(const char* args, char* err, std::size_t err_size) noexcept {
  namespace d = plugin_detail;
  static_assert(d::checked<T>(d::Entries{}));
  try {
    auto in = std::make_unique<d::Instance<T>>(args ? std::string_view(args) : std::string_view());
    numref_backend& b = in->table;
    b.abi_version = NUMREF_BACKEND_ABI_VERSION;
    b.struct_size = sizeof(numref_backend);
    b.abi_minor = NUMREF_BACKEND_ABI_MINOR;
    b.name = d::c_str(T::name);
    b.version = d::c_str(T::version);
    b.description = d::c_str(T::description);
    b.ops = d::kOps<T>.data();
    b.profiles = d::c_str(T::profiles);
    if constexpr (requires { T::caps; }) b.caps = T::caps;
    if constexpr (requires { T::departures; }) b.departures = d::c_str(T::departures);
    b.ctx = in.get();
    b.last_error = &d::last_error<T>;
    b.close = &d::close<T>;
    d::bind<T>(b, d::Entries{});
    if constexpr (requires { in->impl.adjust_table(b); }) in->impl.adjust_table(b);
    return &in.release()->table;
  } catch (const std::exception& e) {
    if (err && err_size) std::snprintf(err, err_size, "%s", e.what());
  } catch (...) {
    if (err && err_size) std::snprintf(err, err_size, "%s", "unknown exception");
  }
  return nullptr;
}

}  // namespace numref::conform

// The open symbol alone (for a test backend that exports its own numref_backend_abi_version).
#define NUMREF_BACKEND_OPEN(T)                                                                            \
  extern "C" NUMREF_BACKEND_EXPORT const numref_backend* numref_backend_open(const char* args, char* err, \
                                                                             std::size_t err_size) {      \
    return ::numref::conform::backend_open<T>(args, err, err_size);                                       \
  }

// Exports the two symbols of backend.h for class T.
#define NUMREF_BACKEND(T)                                                           \
  extern "C" NUMREF_BACKEND_EXPORT std::uint32_t numref_backend_abi_version(void) { \
    return NUMREF_BACKEND_ABI_VERSION;                                              \
  }                                                                                 \
  NUMREF_BACKEND_OPEN(T)
