// numref._core — the Python extension (nanobind): formats, profiles, the knob table, policies,
// and batched casts through cpu-fast (conformance/backends/cpu_fast, proven equal to the
// reference by the conformance suite) or through the reference Converter.
//   spec §2 (formats), §3 (exact values), §4–§10 (policy, profiles), §11 (conversion)
//
// Everything here reads numref's tables (format.hpp kFormats, policy.hpp kPolicyKnobs, the
// profile list); the pure-Python package (python/numref/) adds the NumPy / ml_dtypes typing.
// Errors are raised as ValueError (nanobind maps std::invalid_argument) with the text of the
// `numref cast` message, the option named by its keyword (`round=` for `--round`).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "conform_table.hpp"
#include "fast_cast.hpp"
#include "fast_lanes.hpp"
#include "fast_quant.hpp"
#include "parallel.hpp"
#include "numref/conform/cast.hpp"  // one cast suite: its Params and case generator
#include "numref/conform/core.hpp"
#include "numref/conform/runner.hpp"
#include "numref/conform/vectors.hpp"
#include "numref/convert.hpp"
#include "numref/exact.hpp"
#include "numref/format.hpp"
#include "numref/gaussws.hpp"
#include "numref/metrics.hpp"
#include "numref/mma.hpp"
#include "numref/mor.hpp"
#include "numref/partition.hpp"
#include "numref/policy.hpp"
#include "numref/quantize.hpp"
#include "numref/round.hpp"
#include "numref/scale.hpp"
#include "numref/tensor.hpp"
#include "numref/value.hpp"

#ifndef NUMREF_VERSION
#error "NUMREF_VERSION must be defined by python/CMakeLists.txt from project(numref VERSION ...)"
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace numref::py {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument(what); }

// The threads= argument (issue 32): at least 1 (Python checks its type and fills the default).
unsigned threads_arg(long long t) {
  if (t < 1 || t > 4096)
    fail("threads: expected a positive int (1 = the calling thread only), got " + std::to_string(t));
  return static_cast<unsigned>(t);
}
// Work of at least 2 x kGrain elements is split across threads (ranges of at least kGrain).
constexpr std::size_t kGrain = cpu_fast::FastQuant::kGrain;

// §2.3 A format by name or alias; `what` names the argument in the message.
const Format& format_arg(const std::string& name, const std::string& what) {
  const auto id = find_format(name);
  if (!id) fail(what + ": unknown format '" + name + "' (known: " + format_names(", ") + ")");
  return format(*id);
}

// §10 / §10.3 The policy of `numref cast` options, with the same layering and checks as the
// CLI (tools/numref/cli_common.cpp policy_from_args): the profile's policy for the target
// (narrow or wide, §10.1; `profile` empty: the default Policy, used when a complete
// describe() string is given), then `settings` (the §10.3 text form), then the single knobs
// (key, value as text). An explicit round also sets e8m0_round=follow unless e8m0_round is
// given (§7.1). Returns the policy.
Policy resolve_policy(const Format& to, const std::string& profile_name, const std::string& settings,
                      const std::vector<std::pair<std::string, std::string>>& knobs, const Format* from = nullptr) {
  Policy p;
  if (!profile_name.empty()) {
    const auto pid = find_profile(profile_name);
    if (!pid) fail("profile: unknown profile '" + profile_name + "' (known: " + profile_names() + ")");
    // §10.2 with the source known, the profile's pair rules apply (as `numref cast --from`)
    p = from ? profile(*pid).for_cast(*from, to) : profile(*pid).for_target(to);
  }
  if (!settings.empty())
    if (const auto err = apply_policy_settings(p, settings)) fail("policy: " + *err);

  bool round_given = false, e8_given = false, bits_given = false, variant_given = false;
  for (const auto& [key, value] : knobs) {
    bool known = false;
    for_each_policy_knob([&](const auto& k) {
      using T = std::remove_cvref_t<decltype(p.*k.member)>;
      if (k.key != key) return;
      known = true;
      if constexpr (std::is_same_v<T, int>) {  // sr_bits, §4.3
        int v = 0;
        bool ok = !value.empty() && value.size() <= 3;
        for (const char c : value) ok = ok && c >= '0' && c <= '9';
        if (ok) v = std::stoi(value);
        if (!ok || v < 1 || v > 32) fail(key + ": expected an integer in 1..32, got '" + value + "'");
        p.*k.member = v;
        bits_given = true;
      } else {
        const auto e = k.parse_word(value);
        if (!e) {
          if constexpr (std::is_same_v<T, bool>)
            fail(key + ": expected 0 or 1, got '" + value + "'");
          else
            fail(key + ": unknown value '" + value + "' (expected " + k.words_text() + ")");
        }
        p.*k.member = *e;
        round_given |= std::is_same_v<T, Round>;
        e8_given |= std::is_same_v<T, E8m0Round>;
        variant_given |= std::is_same_v<T, SrVariant>;
      }
    });
    if (!known) {
      std::string keys;
      for_each_policy_knob([&](const auto& k) { keys += (keys.empty() ? "" : ", ") + std::string(k.key); });
      fail("unknown policy knob '" + key + "' (known: " + keys + ")");
    }
  }
  if (round_given && !e8_given) p.e8m0_round = E8m0Round::follow;  // §7.1 "follow"
  if (p.round == Round::sr && p.sr_bits == 0)
    fail("stochastic rounding (round=sr) needs sr_bits=K with K in 1..32 (§4.3)");
  if (p.round != Round::sr && (bits_given || variant_given))
    fail(std::string(bits_given ? "sr_bits" : "sr_variant") + " applies only to stochastic rounding (round='sr')");
  if (const std::string err = validate(p, to); !err.empty()) fail("policy: " + err);
  return p;
}

Policy policy_of(const Format& to, const std::string& desc) { return resolve_policy(to, "", desc, {}); }

// ---- batched casts ------------------------------------------------------------------------

using Array = nb::ndarray<nb::c_contig, nb::device::cpu>;
// An input array: read-only ones (np.load(mmap_mode='r'), np.frombuffer, setflags(write=False))
// are accepted, and nothing writes through it.
using InArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

template <class A>
int width_of(const A& a) {
  const nb::dlpack::dtype t = a.dtype();
  if (t.code != static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt) || t.lanes != 1)
    fail("internal: code arrays must be unsigned integers");
  return t.bits;
}

// One (from, to, policy) conversion, prepared once: cpu-fast — its byte lanes (fast_lanes.hpp:
// f32 / bf16 / f16 into the narrow floats under the common policies, reading the codes in place
// and writing the result array directly), else its table for <= 16-bit sources and deterministic
// rounding (re-indexed here by the native code type), else its lane / scalar path on blocks —
// or the reference Converter.
class Cast {
 public:
  Cast(const Format& from, const Format& to, const Policy& p, bool reference)
      : from_(from),
        to_(to),
        p_(p),
        sr_(effective_round(to, p) == Round::sr),
        // what cpu-fast declines (§A.1) takes the reference path
        reference_(reference || cpu_fast::declined(from, to, p) != nullptr) {
    if (reference_)
      conv_ = std::make_unique<Converter>(from, to, p);
    else
      fast_ = std::make_unique<cpu_fast::FastCast>(from, to, p);
    bytes_ = fast_ ? fast_->byte_lanes() : nullptr;
    if (!reference_ && !sr_ && from.bits <= 16 && !bytes_) {
      // §11 the result of every source code, computed once by cpu-fast itself.
      const std::size_t n = std::size_t{1} << from.bits;
      std::vector<std::uint32_t> in(n);
      for (std::uint32_t c = 0; c < n; ++c) in[c] = c;
      lut_code_.resize(n);
      lut_flags_.resize(n);
      fast_->run(in.data(), nullptr, lut_code_.data(), lut_flags_.data(), n);
    }
  }
  bool sr() const { return sr_; }

  template <class In, class Out>
  void run(const In* in, const std::uint32_t* r, Out* out, std::uint8_t* flags, std::size_t n) const {
    if constexpr (std::is_same_v<Out, std::uint8_t> && !std::is_same_v<In, std::uint8_t>) {
      if (bytes_) {  // byte_lanes() exists only for f32 (uint32 codes) and bf16 / f16 (uint16) sources
        bytes_->run(in, out, flags, n);
        return;
      }
    }
    if (!lut_code_.empty()) {
      const std::uint32_t* t = lut_code_.data();
      const std::uint8_t* tf = lut_flags_.data();
      if (flags) {
#pragma GCC unroll 8
        for (std::size_t i = 0; i < n; ++i) {
          const std::uint32_t x = in[i];
          out[i] = static_cast<Out>(t[x]);
          flags[i] = tf[x];
        }
      } else {
#pragma GCC unroll 8
        for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Out>(t[in[i]]);
      }
      return;
    }
    if (reference_) {
      for (std::size_t i = 0; i < n; ++i) {
        const Result res = (*conv_)(in[i], r ? r[i] : 0u);
        out[i] = static_cast<Out>(res.bits);
        if (flags) flags[i] = res.flags;
      }
      return;
    }
    // cpu-fast on blocks: a bounded scratch for the 32-bit codes it reads and writes.
    constexpr std::size_t kBlock = 1024;  // two 4 KiB scratch blocks stay in L1
    std::uint32_t ibuf[kBlock], obuf[kBlock];
    for (std::size_t b = 0; b < n; b += kBlock) {
      const std::size_t m = std::min(kBlock, n - b);
      const std::uint32_t* src;
      if constexpr (std::is_same_v<In, std::uint32_t>) {
        src = in + b;
      } else {
        for (std::size_t i = 0; i < m; ++i) ibuf[i] = in[b + i];
        src = ibuf;
      }
      if constexpr (std::is_same_v<Out, std::uint32_t>) {
        fast_->run(src, r ? r + b : nullptr, out + b, flags ? flags + b : nullptr, m);
      } else {
        fast_->run(src, r ? r + b : nullptr, obuf, flags ? flags + b : nullptr, m);
        for (std::size_t i = 0; i < m; ++i) out[b + i] = static_cast<Out>(obuf[i]);
      }
    }
  }

 private:
  const Format& from_;
  const Format& to_;
  Policy p_;
  bool sr_, reference_;
  std::unique_ptr<Converter> conv_;
  std::unique_ptr<cpu_fast::FastCast> fast_;
  const cpu_fast::ByteLanes* bytes_ = nullptr;  // owned by fast_
  std::vector<std::uint32_t> lut_code_;
  std::vector<std::uint8_t> lut_flags_;
};

// A small cache of prepared casts (a <= 16-bit source's table costs 65 536 conversions).
std::shared_ptr<const Cast> prepared(const Format& from, const Format& to, const Policy& p, bool reference) {
  struct Entry {
    const Format* from;
    const Format* to;
    Policy p;
    bool reference;
    std::shared_ptr<const Cast> cast;
  };
  static std::mutex mu;
  static std::vector<Entry> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    for (const Entry& e : cache)
      if (e.from == &from && e.to == &to && e.p == p && e.reference == reference) return e.cast;
  }
  auto c = std::make_shared<const Cast>(from, to, p, reference);
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= 32) cache.erase(cache.begin());
  cache.push_back(Entry{&from, &to, p, reference, c});
  return c;
}

std::string hex(std::uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

template <class In>
void check_codes(const In* in, std::size_t n, const Format& from) {
  if (from.bits >= static_cast<int>(8 * sizeof(In))) return;
  const std::uint32_t mask = from.mask();
  for (std::size_t i = 0; i < n; ++i)
    if ((static_cast<std::uint32_t>(in[i]) & ~mask) != 0)
      fail("source code " + hex(in[i]) + " at index " + std::to_string(i) + " is wider than the " +
           std::to_string(from.bits) + " bits of " + std::string(from.name) + " (§2.4)");
}

// cast_codes(codes, out, flags, r, from, to, policy, path): converts the unsigned codes of
// `codes` (uint8/16/32, C-contiguous) into `out` (uint8/16/32 of the target's storage) under
// the policy (its describe() text), writing the flags (§9) into `flags` (uint8) when given;
// `r` (uint32) the random values of stochastic rounding. path: "fast" (cpu-fast) or
// "reference". Releases the GIL for the conversion, which `threads` threads share by element
// ranges when it is large (every element's result is its own: the same for any split).
void cast_codes(InArray codes, Array out, std::optional<Array> flags, std::optional<InArray> r,
                const std::string& from_name, const std::string& to_name, const std::string& policy_desc,
                const std::string& path, long long threads_in) {
  const unsigned threads = threads_arg(threads_in);
  const Format& from = format_arg(from_name, "src");
  const Format& to = format_arg(to_name, "to");
  const Policy p = policy_of(to, policy_desc);
  if (path != "fast" && path != "reference") fail("path: expected 'fast' or 'reference', got '" + path + "'");
  const std::size_t n = codes.size();
  if (out.size() != n) fail("internal: output size differs from the input size");
  if (flags && (flags->size() != n || width_of(*flags) != 8)) fail("internal: flags must be uint8 of the input size");
  const int win = width_of(codes), wout = width_of(out);
  const int want_in = from.bits <= 8 ? 8 : from.bits <= 16 ? 16 : 32;
  const int want_out = to.bits <= 8 ? 8 : to.bits <= 16 ? 16 : 32;
  if (win != want_in)
    fail("src: codes of " + std::string(from.name) + " need uint" + std::to_string(want_in) + ", got uint" +
         std::to_string(win));
  if (wout != want_out)
    fail("internal: output of " + std::string(to.name) + " must be uint" + std::to_string(want_out));
  const auto cast = prepared(from, to, p, path == "reference");
  const std::uint32_t* rp = nullptr;
  if (cast->sr()) {
    if (!r)
      fail("stochastic rounding (round=sr) needs random=: an array of r values (one per element) or an int seed (§5)");
    if (r->size() != n || width_of(*r) != 32)
      fail("random: expected " + std::to_string(n) + " uint32 values (one per element), got " +
           std::to_string(r->size()));
    rp = static_cast<const std::uint32_t*>(r->data());
    const int k = p.sr_bits;
    if (k < 32)
      for (std::size_t i = 0; i < n; ++i)
        if ((rp[i] >> k) != 0)
          fail("random: r " + hex(rp[i]) + " at index " + std::to_string(i) +
               " does not fit in k = " + std::to_string(k) + " bits (need r < 2^" + std::to_string(k) + ", §4.3)");
  }
  std::uint8_t* fp = flags ? static_cast<std::uint8_t*>(flags->data()) : nullptr;
  auto go = [&](const auto* in) {
    using In = std::remove_cvref_t<decltype(*in)>;
    check_codes<In>(in, n, from);
    nb::gil_scoped_release release;
    auto split = [&](auto* o) {
      cpu_fast::parallel_ranges(n, threads, kGrain, [&](std::size_t lo, std::size_t hi) {
        cast->run(in + lo, rp ? rp + lo : nullptr, o + lo, fp ? fp + lo : nullptr, hi - lo);
      });
    };
    switch (wout) {
      case 8: split(static_cast<std::uint8_t*>(out.data())); break;
      case 16: split(static_cast<std::uint16_t*>(out.data())); break;
      default: split(static_cast<std::uint32_t*>(out.data())); break;
    }
  };
  switch (win) {
    case 8: go(static_cast<const std::uint8_t*>(codes.data())); break;
    case 16: go(static_cast<const std::uint16_t*>(codes.data())); break;
    default: go(static_cast<const std::uint32_t*>(codes.data())); break;
  }
}

// ---- tables as Python data ---------------------------------------------------------------

std::vector<std::string> split_words(std::string_view s) {
  std::vector<std::string> v;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t j = s.find(' ', i);
    if (j == std::string_view::npos) j = s.size();
    if (j > i) v.emplace_back(s.substr(i, j - i));
    i = j + 1;
  }
  return v;
}

nb::list formats() {
  nb::list l;
  for (const Format& f : kFormats) {
    nb::dict d;
    d["name"] = std::string(f.name);
    d["bits"] = f.bits;
    d["exp_bits"] = f.exp_bits;
    d["man_bits"] = f.man_bits;
    d["bias"] = f.bias;
    d["signed"] = f.is_signed;
    d["specials"] = std::string(specials_name(f.specials));
    d["has_zero"] = f.has_zero;
    d["has_subnormals"] = f.has_subnormals;
    d["has_inf"] = f.has_inf();
    d["has_nan"] = f.has_nan();
    d["p3109_extra"] = f.is_p3109_extra();  // §2.5 item 1: a P3109 member beyond gfloat's binary8 set
    d["max_finite"] = f.max_finite;
    d["canonical_nan"] = f.has_nan() ? nb::cast(f.canonical_nan) : nb::none();
    d["source"] = std::string(f.source);
    d["aliases"] = split_words(f.aliases);
    l.append(d);
  }
  return l;
}

nb::list profiles() {
  nb::list l;
  for (int i = 0; i < kProfileCount; ++i) {
    const Profile& p = all_profiles()[i];
    nb::dict d;
    d["name"] = std::string(p.name);
    d["summary"] = std::string(p.summary);
    d["narrow"] = describe(p.narrow);
    d["wide"] = describe(p.wide);
    nb::object recipe = nb::none();  // §10.4
    if (p.recipe) {
      nb::dict r;
      r["rule"] = std::string(p.recipe->rule);
      r["partition"] = std::string(p.recipe->partition);
      r["knobs"] = std::string(p.recipe->knobs);
      r["amax_nan"] = p.recipe->amax_nan_ignore ? "ignore" : "propagate";
      r["elements"] = p.recipe->elements.empty() ? nb::none() : nb::cast(split_words(p.recipe->elements));
      r["source"] = std::string(p.recipe->source);
      recipe = r;
    }
    d["recipe"] = recipe;
    l.append(d);
  }
  return l;
}

nb::list knobs() {
  nb::list l;
  for_each_policy_knob([&](const auto& k) {
    using T = std::remove_cvref_t<decltype(Policy{}.*k.member)>;
    nb::dict d;
    d["key"] = std::string(k.key);
    std::vector<std::string> words;
    for (const std::string_view w : k.words) words.emplace_back(w);
    d["words"] = words;
    d["type"] = std::is_same_v<T, int> ? "int" : std::is_same_v<T, bool> ? "bool" : "word";
    d["sr_only"] = k.sr_only;
    d["clause"] = std::string(k.clause);
    d["default"] = [&]() -> nb::object {
      const T v = Policy{}.*k.member;
      if constexpr (std::is_same_v<T, int>)
        return nb::cast(v);
      else if constexpr (std::is_same_v<T, bool>)
        return nb::cast(v);
      else
        return nb::cast(std::string(knob_word(v)));
    }();
    l.append(d);
  });
  return l;
}

// The knob values of a policy (a describe() text, resolved for `to`) as a dict.
nb::dict policy_values(const std::string& to_name, const std::string& desc) {
  const Policy p = policy_of(format_arg(to_name, "to"), desc);
  nb::dict d;
  for_each_policy_knob([&](const auto& k) {
    using T = std::remove_cvref_t<decltype(p.*k.member)>;
    const T v = p.*k.member;
    if constexpr (std::is_same_v<T, int> || std::is_same_v<T, bool>)
      d[std::string(k.key).c_str()] = v;
    else
      d[std::string(k.key).c_str()] = std::string(knob_word(v));
  });
  return d;
}

// §3.1 / §3.4 One code explained (the facts `numref explain` prints).
nb::dict explain(const std::string& fmt, std::uint64_t code) {
  const Format& f = format_arg(fmt, "fmt");
  if (code > f.mask())
    fail("code " + hex(code) + " is wider than the " + std::to_string(f.bits) + " bits of " + std::string(f.name) +
         " (§2.4)");
  const Decoded d = decode(static_cast<std::uint32_t>(code), f);
  nb::dict r;
  r["format"] = std::string(f.name);
  r["code"] = static_cast<std::uint32_t>(code);
  r["sign"] = f.is_signed ? nb::cast(static_cast<int>(d.sign)) : nb::none();
  r["exp_field"] = f.is_integer() ? nb::none() : nb::cast(d.exp_field);
  r["man_field"] = d.man_field;
  r["class"] = std::string(to_string(d.cls));
  const bool finite = d.cls == Class::normal || d.cls == Class::subnormal || d.cls == Class::zero;
  r["decimal"] = exact_decimal(d);  // "inf" / "nan" spelled as `numref explain` does
  r["hexfloat"] = exact_hexfloat(d);
  // |value| = sig * 2^exp (§3.1); None for Inf and NaN.
  r["significand"] = finite ? nb::cast(d.sig) : nb::none();
  r["exponent"] = finite ? nb::cast(d.exp) : nb::none();
  r["unbiased_exponent"] = (d.cls == Class::normal || d.cls == Class::subnormal) && !f.is_integer()
                               ? nb::cast(d.cls == Class::normal ? static_cast<int>(d.exp_field) - f.bias : f.emin())
                               : nb::none();
  if (d.cls == Class::nan && f.specials == Specials::ieee)
    r["quiet"] = static_cast<bool>((d.sig >> (f.man_bits - 1)) & 1u);
  return r;
}

// ---- quantize (§19) ------------------------------------------------------------------------------

nb::bytes as_bytes(const void* p, std::size_t k) { return nb::bytes(static_cast<const char*>(p), k); }

// One quantize() call, its arguments checked: the tensor (dense rows x cols codes), the spec,
// the random values (stochastic rounding) and the fake-quant format (or none).
struct QuantizeCall {
  const TensorView& x;
  const QuantizeSpec& spec;
  std::span<const std::uint32_t> rs;
  const Format* fake;
};

// The result fields both paths give, in this order: codes, scales, scale_format, grid, the
// §17.1 group mantissas (and their grid, for a rule that has them).
void put_quantized(nb::dict& d, const QuantizeCall& c, std::span<const std::uint8_t> out,
                   std::span<const std::uint32_t> scales, std::span<const std::uint32_t> gm) {
  const BlockGrid grid(c.x.rows(), c.x.cols(), c.spec.partition);
  if (!out.empty()) d["codes"] = as_bytes(out.data(), out.size());  // the fast path: an array (owned_array)
  d["scales"] = as_bytes(scales.data(), scales.size() * 4);
  d["scale_format"] = std::string(scale_format(c.spec.rule).name);
  d["grid"] = nb::make_tuple(grid.grid_rows(), grid.grid_cols());
  const bool groups = has_group_mantissa(c.spec.rule);  // §17.1 the row's tensor-level output
  d["group_mantissa"] = as_bytes(gm.data(), groups ? gm.size() * 4 : 0);
  if (groups) {
    const BlockGrid gg(c.x.rows(), c.x.cols(), c.spec.group);
    d["group_grid"] = nb::make_tuple(gg.grid_rows(), gg.grid_cols());
  }
}

// The allocator of result buffers that a kernel overwrites whole (codes, dequantized and
// fake-quant tensors): elements are default-initialised (std::vector's value-initialisation
// would write every byte once more before the kernel does), and a buffer of 4 MiB or more is
// 2 MiB-aligned and advised as transparent huge pages (one page fault per 2 MiB instead of per
// 4 KiB; the advice may be refused, which changes nothing but the speed).
template <class T>
struct KernelFilled {
  using value_type = T;
  static constexpr std::size_t kHuge = std::size_t{2} << 20;
  KernelFilled() = default;
  template <class U>
  KernelFilled(const KernelFilled<U>&) noexcept {}
  static bool large(std::size_t n) { return n * sizeof(T) >= 2 * kHuge; }
  T* allocate(std::size_t n) {
    if (!large(n)) return std::allocator<T>{}.allocate(n);
    const std::size_t bytes = (n * sizeof(T) + kHuge - 1) / kHuge * kHuge;
    void* p = std::aligned_alloc(kHuge, bytes);
    if (!p) throw std::bad_alloc();
    (void)::madvise(p, bytes, MADV_HUGEPAGE);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (large(n))
      std::free(p);
    else
      std::allocator<T>{}.deallocate(p, n);
  }
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
  template <class U>
  bool operator==(const KernelFilled<U>&) const noexcept {
    return true;
  }
};
template <class T>
using KernelBuffer = std::vector<T, KernelFilled<T>>;

// A result array that owns its buffer (no copy): a read-only NumPy array of `shape`.
template <class V>
nb::ndarray<nb::numpy, const typename V::value_type> owned_array(std::shared_ptr<V> v,
                                                                 std::initializer_list<std::size_t> shape) {
  using T = typename V::value_type;
  auto* keep = new std::shared_ptr<V>(std::move(v));
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<V>*>(p); });
  return nb::ndarray<nb::numpy, const T>((*keep)->data(), shape.size(), shape.begin(), owner);
}

// The dequantized and fake-quant tensors of a cpu-fast result, computed when Python first reads
// them (numref.Quantized): from the codes and scales, by FastQuant::dequantize / fake_from_codes.
class FastQuantized {
 public:
  FastQuantized(std::shared_ptr<const cpu_fast::FastQuant> q, std::shared_ptr<const cpu_fast::FastQuant> fq,
                std::shared_ptr<KernelBuffer<std::uint8_t>> codes, std::vector<std::uint32_t> scales,
                std::vector<std::uint32_t> gm, std::vector<std::uint8_t> kept, std::size_t rows, std::size_t cols,
                const Format* fake, unsigned threads, std::uint32_t tensor_amax,
                std::shared_ptr<KernelBuffer<std::uint32_t>> fake_now = nullptr)
      : fake_now_(std::move(fake_now)),
        tensor_amax_(tensor_amax),
        q_(std::move(q)),
        fq_(std::move(fq)),
        codes_(std::move(codes)),
        scales_(std::move(scales)),
        gm_(std::move(gm)),
        kept_(std::move(kept)),
        rows_(rows),
        cols_(cols),
        fake_(fake),
        threads_(threads) {}
  // §19.3 the dequantized tensor: binary32 codes, rows x cols.
  nb::object dequantized() const {
    auto out = std::make_shared<KernelBuffer<std::uint32_t>>(rows_ * cols_);
    bool ok;
    {
      nb::gil_scoped_release release;
      std::string why;
      ok = q_->dequantize(codes_->data(), scales_.data(), gm_.data(), out->data(), why, threads_, tensor_amax_);
    }
    if (!ok) return nb::none();  // GAM block code 00 (quantize never makes it)
    return nb::cast(owned_array(std::move(out), {rows_, cols_}));
  }
  // §19.6 the fake-quant tensor: codes of the fake_quant format (uint16 for 16-bit formats).
  nb::object fake_quant() const {
    if (!fq_) return nb::none();
    const std::size_t n = rows_ * cols_;
    auto out = fake_now_ ? fake_now_ : std::make_shared<KernelBuffer<std::uint32_t>>(n);
    std::shared_ptr<KernelBuffer<std::uint16_t>> half;
    {
      nb::gil_scoped_release release;
      std::string why;
      if (!fake_now_)
        (void)fq_->fake_from_codes(codes_->data(), scales_.data(), gm_.data(), kept_.empty() ? nullptr : kept_.data(),
                                   out->data(), why, threads_, tensor_amax_);
      if (fake_->bits == 16) {
        half = std::make_shared<KernelBuffer<std::uint16_t>>(n);
        const std::uint32_t* o = out->data();
        std::uint16_t* h = half->data();
        cpu_fast::parallel_ranges(n, threads_, kGrain, [&](std::size_t lo, std::size_t hi) {
          for (std::size_t i = lo; i < hi; ++i) h[i] = static_cast<std::uint16_t>(o[i]);
        });
      }
    }
    if (half) return nb::cast(owned_array(std::move(half), {rows_, cols_}));
    return nb::cast(owned_array(std::move(out), {rows_, cols_}));
  }

 private:
  std::shared_ptr<KernelBuffer<std::uint32_t>> fake_now_;  // computed with the codes (fake_reads_input())
  std::uint32_t tensor_amax_;                              // §18.1 (nvfp4)
  std::shared_ptr<const cpu_fast::FastQuant> q_, fq_;
  std::shared_ptr<KernelBuffer<std::uint8_t>> codes_;
  std::vector<std::uint32_t> scales_, gm_;
  std::vector<std::uint8_t> kept_;
  std::size_t rows_, cols_;
  const Format* fake_;
  unsigned threads_;
};

// cpu-fast's block quantization (conformance/backends/cpu_fast/fast_quant.hpp; the conformance
// suite holds it to the reference) where it takes the operation: FastQuant::unsupported() decides,
// as declined() does for casts. It gives codes, scales and group mantissas now, on `threads`
// threads; the dequantized and fake-quant tensors when first read (d["lazy"], FastQuantized); the
// §19.5 counts are not among them (the Python side computes them with the reference when they are
// read: counts_exact = False). nullopt: the reference path.
std::optional<nb::dict> quantize_fast(const QuantizeCall& c, unsigned threads) {
  const QuantizeSpec& spec = c.spec;
  const std::size_t rows = c.x.rows(), cols = c.x.cols();
  const Quantizer qz(spec, rows, cols);  // validates as numref::quantize does, resolves apply, q_max, policy
  const cpu_fast::QuantOp op = cpu_fast::quant_op_of(c.x, spec, qz);
  cpu_fast::QuantOp fop = op;
  if (c.fake) fop.out = c.fake;
  if (!cpu_fast::FastQuant::unsupported(op).empty() || (c.fake && !cpu_fast::FastQuant::unsupported(fop).empty()))
    return std::nullopt;
  auto q = std::make_shared<const cpu_fast::FastQuant>(op);
  std::shared_ptr<const cpu_fast::FastQuant> fq;
  if (c.fake) fq = std::make_shared<const cpu_fast::FastQuant>(fop);
  const std::size_t n = c.x.size();
  auto out = std::make_shared<KernelBuffer<std::uint8_t>>(n);
  std::vector<std::uint32_t> scales(q->blocks()), gm(q->groups());
  std::vector<std::uint8_t> kept(q->has_kept() ? q->blocks() : 0);
  std::shared_ptr<KernelBuffer<std::uint32_t>> fake_now;  // §13.7 first_nan: the fake-quant output reads x
  std::uint32_t tensor_amax = 0;
  {
    nb::gil_scoped_release release;
    const std::uint32_t* r = c.rs.empty() ? nullptr : c.rs.data();
    q->quantize(c.x.data(), r, out->data(), scales.data(), gm.data(), threads, kept.empty() ? nullptr : kept.data(),
                &tensor_amax);
    if (fq && fq->fake_reads_input()) {
      fake_now = std::make_shared<KernelBuffer<std::uint32_t>>(n);
      fq->fake_quant(c.x.data(), r, fake_now->data(), threads);
    }
  }
  // GAM block code 00, which cpu-fast does not dequantize: the reference path
  if (scale_kind(spec.rule) == ScaleKind::gam && std::find(scales.begin(), scales.end(), 0u) != scales.end())
    return std::nullopt;
  nb::dict d;
  put_quantized(d, c, {}, scales, gm);
  d["codes"] = owned_array(out, {rows, cols});
  d["tensor_amax"] = has_tensor_amax(spec.rule) ? nb::cast(tensor_amax) : nb::none();
  d["lazy"] = nb::cast(FastQuantized(q, fq, out, std::move(scales), std::move(gm), std::move(kept), rows, cols, c.fake,
                                     threads, tensor_amax, std::move(fake_now)));
  d["counts_exact"] = false;
  d["policy"] = describe(spec.policy);
  d["path"] = std::string("fast");
  return d;
}

// numref::quantize, dequantize and fake_quantize, with the §19.5 counts.
nb::dict quantize_reference(const QuantizeCall& c) {
  const TensorView& x = c.x;
  const std::size_t n = x.size();
  std::vector<std::uint8_t> out(n);
  std::vector<std::uint32_t> deq(n), fq(c.fake ? n : 0);
  QuantizeResult r;
  {
    nb::gil_scoped_release release;
    r = numref::quantize(x, c.spec, out, c.rs);
    numref::dequantize(out, r.meta, deq);
    if (c.fake) numref::fake_quantize(x, c.spec, *c.fake, fq, c.rs);
  }
  nb::dict d;
  put_quantized(d, c, out, r.meta.scales, r.meta.group_mantissa);
  d["tensor_amax"] = has_tensor_amax(c.spec.rule) ? nb::cast(r.meta.tensor_amax) : nb::none();
  d["dequantized"] = as_bytes(deq.data(), n * 4);
  d["fake_quant"] = c.fake ? nb::cast(as_bytes(fq.data(), n * 4)) : nb::none();
  d["counts_exact"] = true;
  d["path"] = std::string("reference");
  d["saturated"] = r.total.saturated;
  d["flushed"] = r.total.flushed;
  d["nan"] = r.total.nan;
  d["inf"] = r.total.inf;
  d["policy"] = describe(c.spec.policy);
  return d;
}

// quantize(codes, src, elem, ...): the 2-D tensor `codes` (rows x cols unsigned codes of src,
// C-contiguous) quantized by the reference (numref::quantize, dequantize, fake_quantize) with the
// options of `numref quantize`; the element policy and the wide policy in the §10.3 text form.
// Returns a dict of NumPy-ready buffers (bytes) and counts.
nb::dict quantize(InArray codes, std::size_t rows, std::size_t cols, const std::string& src, const std::string& elem,
                  const std::string& profile_name, std::optional<std::string> partition,
                  std::optional<std::string> group, std::optional<std::string> scale, std::optional<std::string> recipe,
                  std::optional<std::string> amax_nan, std::optional<std::string> amax_inf,
                  std::optional<std::uint32_t> q_max, std::optional<std::string> apply, const std::string& dequant,
                  const std::string& policy, const std::string& wide, std::optional<InArray> random,
                  std::optional<std::string> fake_quant, const std::string& path, long long threads_in) {
  const unsigned threads = threads_arg(threads_in);
  if (path != "fast" && path != "reference") fail("path: expected 'fast' or 'reference', got '" + path + "'");
  const Format& from = format_arg(src, "x");
  const Format& e = format_arg(elem, "fmt");
  // §10.4 / §19.8 the options as `numref quantize` reads them (numref::quantize_spec): a recipe
  // profile supplies the rule, partition, recipe knobs and amax policies
  QuantizeOptions qo;
  qo.profile = profile_name;
  qo.partition = std::move(partition);
  qo.group = std::move(group);
  qo.scale = std::move(scale);
  qo.recipe = std::move(recipe);
  qo.amax_nan = std::move(amax_nan);
  qo.amax_inf = std::move(amax_inf);
  qo.apply = std::move(apply);
  qo.dequant = dequant;
  if (q_max) {
    if (!f32_is_finite(*q_max)) fail("q_max: not a finite binary32 value");
    qo.q_max = exact_f32(*q_max);
  }
  QuantizeSpec spec = quantize_spec(e, qo, [](std::string_view key) { return std::string(key); });
  spec.policy = policy_of(e, policy);
  spec.wide = policy_of(format(FormatId::f32), wide);
  const Format* fake = fake_quant ? &format_arg(*fake_quant, "fake_quant") : nullptr;
  if (fake && fake->bits != 16 && fake->bits != 32)
    fail("fake_quant: the output format must be a 16- or 32-bit format (bf16, f16, f32)");
  if (const std::string err = check_source_format(from); !err.empty()) fail("x: " + err);
  const int want = from.bits <= 8 ? 8 : from.bits <= 16 ? 16 : 32;
  if (width_of(codes) != want || codes.size() != rows * cols) fail("internal: tensor codes of the wrong width or size");
  std::span<const std::uint32_t> rs;
  if (random) {
    if (random->size() != rows * cols || width_of(*random) != 32) fail("internal: random needs one uint32 per element");
    rs = {static_cast<const std::uint32_t*>(random->data()), random->size()};
  }
  const TensorView x(from, codes.data(), rows, cols);
  const QuantizeCall c{x, spec, rs, fake};
  if (path == "fast")
    if (std::optional<nb::dict> d = quantize_fast(c, threads)) return *d;
  return quantize_reference(c);
}

// ---- MoR (§25–§27) -------------------------------------------------------------------------

// §22.3 An error sum as a dict: S (the integer; the sum is S * 2^-149) as a Python int built from
// the limbs, and the counts.
nb::dict error_sum(const ErrorSum& e) {
  nb::object v = nb::int_(0);
  const auto& l = e.sum.limbs();
  for (std::size_t i = l.size(); i-- > 0;) v = (v << nb::int_(64)) | nb::int_(l[i]);
  nb::dict d;
  d["S"] = v;
  d["scale_exp"] = -ExactSum::kScale;
  d["n"] = e.n;
  d["zeros"] = e.zeros;
  d["nonfinite_input"] = e.nonfinite_input;
  d["nonfinite_quant"] = e.nonfinite_quant;
  return d;
}

nb::dict verdict(const Verdict& v) {
  nb::dict d;
  d["accept"] = v.accept;
  d["reason"] = std::string(to_string(v.reason));
  return d;
}

// mor(codes, rows, cols, src, recipe, partition, threshold, scale, fake, threads): `numref mor` on
// one tensor with the reference (tensor_mor / subtensor_mor); threads > 1: the error sums by ranges
// of block rows on that many threads (the same result), the GIL released.
nb::dict mor(InArray codes, std::size_t rows, std::size_t cols, const std::string& src, const std::string& recipe,
             const std::string& partition, std::optional<std::string> threshold, const std::string& scale,
             const std::string& fake, unsigned threads) {
  const RangeRunner run = threads > 1 ? RangeRunner(cpu_fast::range_runner(threads)) : RangeRunner{};
  const Format& from = format_arg(src, "x");
  if (recipe != "tensor" && recipe != "subtensor3" && recipe != "subtensor2")
    fail("recipe: unknown recipe '" + recipe + "' (expected tensor|subtensor3|subtensor2)");
  Partition part;
  if (const std::string err = parse_partition(partition, part); !err.empty()) fail("partition: " + err);
  Threshold th;
  if (threshold) {
    if (recipe != "tensor") fail("threshold applies to the tensor recipe only");
    if (const std::string err = Threshold::parse(*threshold, th); !err.empty()) fail("threshold: " + err);
  }
  const auto rule = parse_scale_rule(scale);
  if (!rule || !is_fp8_mor_rule(*rule))
    fail("scale: '" + scale + "' is not a scale rule for FP8 MoR (use " + fp8_mor_rule_names() + ")");
  const Format& ff = format_arg(fake, "fake");
  if (ff.bits < 16 || ff.is_integer()) fail("fake: the format of Q(x) must be bf16, f16 or f32");
  if (const std::string err = check_source_format(from); !err.empty()) fail("x: " + err);
  const int want = from.bits <= 8 ? 8 : from.bits <= 16 ? 16 : 32;
  if (width_of(codes) != want || codes.size() != rows * cols) fail("internal: tensor codes of the wrong width or size");
  const TensorView x(from, codes.data(), rows, cols);
  nb::dict d;
  auto u32 = [](const auto& v) { return std::vector<std::uint64_t>(v.begin(), v.end()); };
  if (recipe == "tensor") {
    TensorMorSpec spec;
    spec.scaling = part;
    spec.threshold = th;
    spec.quant.rule = *rule;
    spec.fake = &ff;
    TensorMorResult r;
    {
      nb::gil_scoped_release release;
      r = tensor_mor(x, spec, run);
    }
    d["decision"] = r.quantized ? std::string("f8e4m3fn") : std::string(ff.name);
    d["quantized"] = r.quantized;
    d["verdict"] = verdict(r.verdict);
    d["error"] = error_sum(r.error);
    d["mean"] = r.mean;
    d["threshold"] = nb::make_tuple(th.num, th.den);
    d["scales"] = u32(r.scales.scales);
    d["scale_format"] = std::string(scale_format(*rule).name);
    d["group_mantissa"] = u32(r.scales.group_mantissa);
    return d;
  }
  SubtensorMorSpec spec;
  spec.recipe = recipe == "subtensor3" ? SubtensorRecipe::three_way : SubtensorRecipe::two_way;
  spec.blocks = part;
  spec.e4m3.rule = spec.e5m2.rule = *rule;
  spec.fake = &ff;
  SubtensorMorResult r;
  {
    nb::gil_scoped_release release;
    r = subtensor_mor(x, spec, run);
  }
  const BlockGrid grid(rows, cols, part);
  std::vector<std::string> types;
  for (const BlockType t : r.type) types.emplace_back(to_string(t));
  d["types"] = types;
  d["grid"] = nb::make_tuple(grid.grid_rows(), grid.grid_cols());
  nb::list eq3, eq4, s4, s5;
  for (const Verdict& v : r.eq3) eq3.append(verdict(v));
  for (const Verdict& v : r.eq4) eq4.append(verdict(v));
  for (const ErrorSum& e : r.e4m3_sum) s4.append(error_sum(e));
  for (const ErrorSum& e : r.e5m2_sum) s5.append(error_sum(e));
  d["eq3"] = eq3;
  d["eq4"] = eq4;
  d["e4m3_sum"] = s4;
  d["e5m2_sum"] = s5;
  d["blocks_of"] = std::vector<std::uint64_t>(r.blocks_of.begin(), r.blocks_of.end());
  d["elements_of"] = std::vector<std::uint64_t>(r.elements_of.begin(), r.elements_of.end());
  d["fake"] = nb::bytes(reinterpret_cast<const char*>(r.fake.data()), r.fake.size() * 4);
  return d;
}

// ---- GaussWS (§30) ----------------------------------------------------------------------------

// n codes of an f32 (4-byte) or bf16 (2-byte) array as 32-bit words; `what` names the argument.
std::vector<std::uint32_t> words_of(const InArray& a, const Format& f, std::size_t n, const std::string& what) {
  if (a.size() != n) fail(what + ": expected " + std::to_string(n) + " elements, got " + std::to_string(a.size()));
  if (width_of(a) != f.bits) fail("internal: " + what + " has the wrong code width");
  std::vector<std::uint32_t> c(n);
  if (f.bits == 16) {
    const auto* p = static_cast<const std::uint16_t*>(a.data());
    std::copy(p, p + n, c.begin());
  } else {
    std::memcpy(c.data(), a.data(), n * 4);
  }
  return c;
}

// §36 – §40 D = A·B + C as `numref mma`: codes as uint32 arrays (A M x K, B K x N, C M x N,
// scales M x K/block and K/block x N), the types by name, the profile, a model text, the GEMM
// options. Returns (D codes as uint32, flags as uint8), both M x N. The GIL is released.
nb::tuple matmul(InArray a, InArray b, InArray c, std::size_t M, std::size_t N, std::size_t K,
                 const std::string& a_type, const std::string& b_type, const std::string& c_type,
                 const std::string& profile, int block, const std::string& scale_type, std::optional<InArray> sa,
                 std::optional<InArray> sb, const std::string& model, std::size_t promote, std::size_t split_k,
                 std::optional<std::string> recipe, const std::string& recipe_format) {
  const auto type = [](const std::string& n, const char* what) {
    const auto t = numref::find_mma_type(n);
    if (!t) fail(std::string(what) + ": unknown operand type '" + n + "'");
    return *t;
  };
  numref::MmaSpec s;
  s.profile = numref::find_mma_profile(profile);
  if (!s.profile) {
    std::string names;
    for (const auto& p : numref::mma_profiles()) names += (names.empty() ? "" : ", ") + std::string(p.name);
    fail("profile: unknown mma profile '" + profile + "' (known: " + names + ")");
  }
  s.a = type(a_type, "a_type");
  s.b = type(b_type, "b_type");
  s.c = type(c_type, "acc");
  s.block = block;
  s.scale = type(scale_type, "scale_type");
  if (!model.empty()) {
    numref::MmaKnobs k = s.profile->knobs;
    const std::string err = numref::apply_model_text(k, model);
    if (!err.empty()) fail("model: " + err);
    s.knobs = k;
  }
  numref::GemmOptions g{promote, split_k};
  const auto u32 = [](const InArray& x, std::size_t n, const char* what) {
    if (width_of(x) != 32) fail(std::string("internal: ") + what + " must be uint32 codes");
    if (x.size() != n)
      fail(std::string(what) + ": expected " + std::to_string(n) + " elements, got " + std::to_string(x.size()));
    return std::span<const std::uint32_t>(static_cast<const std::uint32_t*>(x.data()), n);
  };
  auto A = u32(a, M * K, "a"), B = u32(b, K * N, "b");
  const auto C = u32(c, M * N, "c");
  // §40.6 a recipe: A and B quantized along K by the recipe profile, its scales in the GEMM
  numref::RecipeGemmOperands rq;
  std::vector<std::uint16_t> ha, hb;
  if (recipe) {
    const numref::GemmRecipe* r = numref::find_gemm_recipe(*recipe);
    if (!r) {
      std::string names;
      for (const auto& x : numref::gemm_recipes()) names += (names.empty() ? "" : ", ") + std::string(x.profile);
      fail("recipe: '" + *recipe + "' has no GEMM (recipes with one: " + names + ")");
    }
    if (block || sa || sb || promote)
      fail("recipe sets the scales and the promotion: give no scales, block or promote");
    const auto view = [&](std::span<const std::uint32_t> x, numref::MmaType t, std::size_t rows, std::size_t cols,
                          std::vector<std::uint16_t>& h, const char* what) {
      const auto& info = numref::mma_type(t);
      const Format& f = format(info.format);
      if (info.ignore_mask || (f.id != FormatId::f32 && f.id != FormatId::bf16 && f.id != FormatId::f16))
        fail(std::string(what) + ": a recipe quantizes float32, bfloat16 or float16 values, not " +
             std::string(info.name));
      if (f.bits == 32) return TensorView(f, x.data(), rows, cols);
      h.assign(x.begin(), x.end());
      return TensorView(f, h.data(), rows, cols);
    };
    const TensorView va = view(A, s.a, M, K, ha, "a"), vb = view(B, s.b, K, N, hb, "b");
    rq = numref::quantize_for_gemm(*r, format_arg(recipe_format, "recipe_format"), va, vb);
    numref::recipe_gemm_spec(*r, rq, K, s, g);
    A = rq.a;
    B = rq.b;
  }
  numref::validate(s, g, K);
  const std::size_t nb = s.block ? K / static_cast<std::size_t>(s.block) : 0;
  std::span<const std::uint32_t> SA, SB;
  if (recipe && s.block) {
    SA = rq.sa;
    SB = rq.sb;
  } else if (block) {
    if (!sa || !sb) fail("scales: a profile with block scales needs scales=(sa, sb)");
    SA = u32(*sa, M * nb, "scales[0]");
    SB = u32(*sb, nb * N, "scales[1]");
  }
  auto* d = new std::uint32_t[M * N];
  auto* f = new std::uint8_t[M * N];
  nb::capsule dc(d, [](void* p) noexcept { delete[] static_cast<std::uint32_t*>(p); });
  nb::capsule fc(f, [](void* p) noexcept { delete[] static_cast<std::uint8_t*>(p); });
  {
    nb::gil_scoped_release release;
    numref::gemm(s, g, M, N, K, A, B, C, std::span<std::uint32_t>(d, M * N), SA, SB, std::span<std::uint8_t>(f, M * N));
  }
  const std::size_t shape[2] = {M, N};
  return nb::make_tuple(nb::ndarray<nb::numpy, std::uint32_t>(d, 2, shape, dc),
                        nb::ndarray<nb::numpy, std::uint8_t>(f, 2, shape, fc));
}

// §29.1 the backward error of D (binary32 codes, M x N) against L (M x K) and R (K x N), codes of
// their formats (C-contiguous, the widths of the formats). Returns {be: bytes of M x N binary32
// codes, max, mean}.
nb::dict backward_error(InArray l, const std::string& lf, InArray r, const std::string& rf, std::size_t M,
                        std::size_t K, std::size_t N, InArray d) {
  const Format& fl = format_arg(lf, "a");
  const Format& fr = format_arg(rf, "b");
  const auto want = [](const Format& f) { return f.bits <= 8 ? 8 : f.bits <= 16 ? 16 : 32; };
  if (width_of(l) != want(fl) || l.size() != M * K || width_of(r) != want(fr) || r.size() != K * N ||
      width_of(d) != 32 || d.size() != M * N)
    fail("internal: backward_error operands of the wrong width or size");
  BackwardError be;
  {
    nb::gil_scoped_release release;
    be = numref::backward_error_of(TensorView(fl, l.data(), M, K), TensorView(fr, r.data(), K, N),
                                   std::span<const std::uint32_t>(static_cast<const std::uint32_t*>(d.data()), M * N));
  }
  nb::dict out;
  out["be"] = as_bytes(be.be.data(), be.be.size() * 4);
  out["max"] = be.max;
  out["mean"] = be.mean;
  return out;
}

nb::list mma_profiles() {
  nb::list out;
  for (const auto& p : numref::mma_profiles()) {
    nb::dict d;
    d["name"] = std::string(p.name);
    d["instruction"] = std::string(p.instruction);
    d["types"] = std::string(p.types);
    d["accumulators"] = std::string(p.accumulators);
    d["scale_types"] = std::string(p.scale_types);
    d["blocks"] = std::string(p.blocks);
    d["model"] = numref::describe(p.knobs);
    d["evidence"] = std::string(p.evidence);
    out.append(d);
  }
  return out;
}

// §30.8 b_t = RN32(b_target + b_i (b_init - b_target)) per block (binary32 codes).
std::vector<std::uint32_t> gaussws_bitwidth(InArray bi, std::uint32_t b_init, std::uint32_t b_target) {
  const std::vector<std::uint32_t> b = words_of(bi, format(FormatId::f32), bi.size(), "bi");
  std::vector<std::uint32_t> out(b.size());
  for (std::size_t k = 0; k < b.size(); ++k) {
    if (!f32_is_finite(b[k])) fail("bi: b_i of block " + std::to_string(k) + " is not finite");
    out[k] = numref::gaussws::bitwidth(b[k], b_init, b_target);
  }
  return out;
}

// §30.2 – §30.9 One matrix, as `numref gaussws`: w (codes of w_fmt), bt (binary32 codes per
// block), the noise from key = (seed, layer, step) or from bits (16-bit words), the sum, and
// optionally g (dL/dw_hat, codes of g_fmt). Returns R, packed R, s, w_hat and dL/db_t.
nb::dict gaussws(InArray w, std::size_t rows, std::size_t cols, const std::string& w_fmt, InArray bt,
                 std::optional<std::vector<std::uint64_t>> key, std::optional<InArray> bits, const std::string& sum,
                 std::optional<InArray> g, const std::string& g_fmt) {
  namespace gw = numref::gaussws;
  const Format& wf = format_arg(w_fmt, "w");
  const gw::Shape sh{rows, cols};
  if (rows == 0 || cols == 0) fail("w: expected a non-empty matrix");
  if (sum != "exact" && sum != "f32") fail("sum: '" + sum + "' is not exact or f32");
  if (key.has_value() == bits.has_value()) fail("give exactly one of seed=, bits=");
  const std::vector<std::uint32_t> wc = words_of(w, wf, sh.size(), "w");
  const std::vector<std::uint32_t> btc = words_of(bt, format(FormatId::f32), sh.blocks(), "bt (one per 32 x 32 block)");
  for (std::size_t b = 0; b < btc.size(); ++b)
    if (!f32_is_finite(btc[b])) fail("bt: b_t of block " + std::to_string(b) + " is not finite");
  std::vector<std::uint32_t> gc;
  const Format* gf = nullptr;
  if (g) {
    gf = &format_arg(g_fmt, "grad");
    gc = words_of(*g, *gf, sh.size(), "grad");
  }
  std::vector<std::uint16_t> u;
  if (bits) {
    if (width_of(*bits) != 16 || bits->size() != sh.size())
      fail("bits: expected uint16 words, one per element of w (" + std::to_string(sh.size()) + ")");
    const auto* p = static_cast<const std::uint16_t*>(bits->data());
    u.assign(p, p + sh.size());
  } else if (key->size() != 3) {
    fail("internal: key must be (seed, layer, step)");
  }
  std::vector<std::int8_t> r;
  gw::Forward f;
  std::vector<std::uint32_t> packed, dbt;
  {
    nb::gil_scoped_release release;
    r = bits ? gw::noise_from_words(u) : gw::noise(sh, gw::NoiseKey{(*key)[0], (*key)[1], (*key)[2]});
    gw::ForwardSpec spec;
    spec.w_format = wf.id;
    spec.sum = sum == "f32" ? gw::Sum::f32 : gw::Sum::exact;
    f = gw::forward(spec, sh, wc, btc, r);
    packed = gw::pack(r);
    if (g) dbt = gw::grad_bt(wf.id, sh, wc, btc, r, gf->id, gc);
  }
  nb::dict d;
  d["r"] = nb::bytes(reinterpret_cast<const char*>(r.data()), r.size());
  d["r_packed"] = nb::bytes(reinterpret_cast<const char*>(packed.data()), packed.size() * 4);
  d["scale"] = nb::bytes(reinterpret_cast<const char*>(f.scale.data()), f.scale.size() * 4);
  d["w_hat"] = nb::bytes(reinterpret_cast<const char*>(f.w_hat.data()), f.w_hat.size() * 4);
  if (g) d["grad_bt"] = nb::bytes(reinterpret_cast<const char*>(dbt.data()), dbt.size() * 4);
  d["grid"] = nb::make_tuple(sh.block_rows(), sh.block_cols());
  return d;
}

// ---- conformance of Python kernels (numref.conform) ----------------------------------------

conform::Level level_arg(const std::string& s) {
  if (s == "l0") return conform::Level::l0;
  if (s == "l1") return conform::Level::l1;
  if (s == "l2") return conform::Level::l2;
  if (s == "exhaustive") return conform::Level::exhaustive;
  fail("level: unknown level '" + s + "' (expected l0|l1|l2|exhaustive)");
}

// One cast suite of the conformance runner (conformance/src/ops/cast: the same Params, case
// generator, reference call, comparison and mismatch rendering as `numref conform`).
class CastSuite {
 public:
  CastSuite(const std::string& from, const std::string& to, const std::string& profile, const std::string& policy,
            const std::string& level, std::uint64_t seed) {
    const Format& f = format_arg(from, "from_");
    const Format& t = format_arg(to, "to");
    if (!find_profile(profile)) fail("profile: unknown profile '" + profile + "' (known: " + profile_names() + ")");
    params_ = conform::cast::make(f, t, profile, policy_of(t, policy));
    cases_ = conform::cast::cases(params_, level_arg(level), seed);
  }
  std::string label() const { return params_->label(); }
  std::string text() const { return params_->text(); }
  bool sr() const { return params_->sr(); }
  std::uint64_t size() const { return cases_->size(); }

  // Cases [first, first + n): their x into xs, r into rs (round=sr).
  void fill(std::uint64_t first, Array xs, std::optional<Array> rs) const {
    const std::size_t n = xs.size();
    if (first > size() || n > size() - first) fail("internal: cases out of range");
    std::vector<std::uint32_t> in(n * static_cast<std::size_t>(params_->shape().in));
    cases_->fill(first, n, in.data());
    std::memcpy(xs.data(), in.data(), n * 4);
    if (params_->sr() && rs) std::memcpy(rs->data(), in.data() + n, n * 4);
  }

  // The reference results (codes, flags) of cases xs, rs (uint32).
  void expected(Array xs, std::optional<Array> rs, Array ys, Array flags) const {
    const std::size_t n = xs.size();
    std::vector<std::uint32_t> in = column_major(xs, rs), out(2 * n);
    {
      nb::gil_scoped_release release;
      params_->expected(n, in.data(), out.data());
    }
    std::memcpy(ys.data(), out.data(), n * 4);
    std::memcpy(flags.data(), out.data() + n, n * 4);
  }

  // §34.2 The golden-vector cases of this suite in the vector directory `dir` (its MANIFEST, every
  // file's sha256 checked as `numref conform` does; the suite's own files and the divergence
  // files' answers for its profile): (x, r, expected y, expected flags, "file:line") lists, and
  // the number of files read. ValueError naming the file for a missing / edited / malformed one.
  nb::tuple vector_cases(const std::string& dir) const {
    std::vector<std::uint32_t> xs, rs, ys, fls;
    std::vector<std::string> where;
    std::size_t files = 0;
    try {
      const conform::Family* fam = conform::registry().find("cast");
      for (const auto& e : conform::read_manifest(dir)) {
        std::ifstream f(std::filesystem::path(dir) / e.path, std::ios::binary);
        if (!f) fail(dir + "/" + e.path + ": listed in the MANIFEST but cannot be opened");
        std::ostringstream ss;
        ss << f.rdbuf();
        const std::string text = ss.str();
        if (conform::Sha256::hex(text) != e.sha256)
          fail(dir + "/" + e.path +
               ": sha256 differs from the MANIFEST (edited by hand? regenerate with `numref vectors generate`)");
        std::istringstream in(text);
        conform::VectorReader vr(in, e.path);
        if (vr.header().get("op") != "cast") continue;
        const auto reader = fam->open_vectors(vr.header(), {params_->profile()});
        ++files;
        std::vector<std::string_view> fields;
        std::string_view note;
        std::vector<conform::VectorCase> cases;
        while (vr.next(fields, note)) {
          cases.clear();
          reader->read(fields, note, cases);
          for (const auto& vc : cases) {
            if (vc.params->text() != params_->text()) continue;
            xs.push_back(vc.in[0]);
            rs.push_back(vc.in.size() > 1 ? vc.in[1] : 0u);
            ys.push_back(vc.expected[0]);
            fls.push_back(vc.expected[1]);
            where.push_back(e.path + ":" + std::to_string(vr.line()));
          }
        }
      }
    } catch (const conform::VectorError& err) {
      fail(std::string("vectors: ") + err.what());
    }
    return nb::make_tuple(xs, rs, ys, fls, where, files);
  }

  // A failing case rendered as the runner does (§34.4): (class, inputs, got, expected), or None
  // when the results match. got_flags = None: the kernel reports no flags (not compared).
  nb::object mismatch(std::uint32_t x, std::uint32_t r, std::uint32_t exp_y, std::uint32_t exp_flags,
                      std::uint32_t got_y, std::optional<std::uint32_t> got_flags) const {
    const std::uint32_t in[2] = {x, r};
    const std::uint32_t exp[2] = {exp_y, exp_flags};
    const std::uint32_t got[2] = {got_y, got_flags ? *got_flags : conform::kNotReported};
    conform::CompareOptions o;
    o.caps = got_flags ? NUMREF_CAP_FLAGS : 0u;
    const auto iv = conform::single_case(in, static_cast<std::size_t>(params_->shape().in));
    const auto ev = conform::single_case(exp, 2), gv = conform::single_case(got, 2);
    const conform::Finding f = conform::compare(*params_, iv, ev, gv, o);
    if (f.outcome != conform::Outcome::fail) return nb::none();
    const conform::MismatchText t = conform::render_mismatch(*params_, iv, ev, gv, o);
    return nb::make_tuple(f.cls, t.inputs, t.got, t.expected);
  }

 private:
  std::vector<std::uint32_t> column_major(const Array& xs, const std::optional<Array>& rs) const {
    const std::size_t n = xs.size();
    const int words = params_->shape().in;
    std::vector<std::uint32_t> in(n * static_cast<std::size_t>(words));
    std::memcpy(in.data(), xs.data(), n * 4);
    if (words > 1) {
      if (!rs || rs->size() != n) fail("internal: round=sr cases need their r values");
      std::memcpy(in.data() + n, rs->data(), n * 4);
    }
    return in;
  }
  std::shared_ptr<const conform::cast::CastParams> params_;
  std::shared_ptr<const conform::CaseSource> cases_;
};

}  // namespace
}  // namespace numref::py

NB_MODULE(_core, m) {
  bind_conform_table(m);
  using namespace numref::py;
  m.doc() = "numref._core: the C++ side of the numref Python package (use the numref package)";
  m.attr("__version__") = NUMREF_VERSION;
  m.def("matmul", &matmul, "a"_a, "b"_a, "c"_a, "M"_a, "N"_a, "K"_a, "a_type"_a, "b_type"_a, "c_type"_a, "profile"_a,
        "block"_a, "scale_type"_a, "sa"_a.none(), "sb"_a.none(), "model"_a, "promote"_a, "split_k"_a, "recipe"_a.none(),
        "recipe_format"_a, "D = A·B + C under an MMA profile (spec §36 – §40): (D codes, flags).");
  m.def("backward_error", &backward_error, "l"_a, "lf"_a, "r"_a, "rf"_a, "M"_a, "K"_a, "N"_a, "d"_a,
        "§29.1 the backward error of a computed product D of L and R.");
  m.def("mma_profiles", &mma_profiles, "The MMA instruction profiles (spec §39.1) as a list of dicts.");
  m.def("formats", &formats, "The format table (format.hpp kFormats) as a list of dicts, spec §2.1.");
  m.def("profiles", &profiles, "The profiles (§10) with their narrow and wide policies in the §10.3 text form.");
  m.def("knobs", &knobs, "The policy knob table (policy.hpp kPolicyKnobs), spec §10.3.");
  m.def(
      "canonical_format",
      [](const std::string& name, const std::string& what) { return std::string(format_arg(name, what).name); },
      "name"_a, "what"_a = "format", "The canonical name of a format name or alias (§2.3); ValueError when unknown.");
  m.def(
      "resolve_policy",
      [](const std::string& to, const std::string& profile, const std::string& settings,
         const std::vector<std::pair<std::string, std::string>>& knobs, const std::string& src) {
        const numref::Format* from = src.empty() ? nullptr : &format_arg(src, "src");
        return numref::describe(resolve_policy(format_arg(to, "to"), profile, settings, knobs, from));
      },
      "to"_a, "profile"_a, "settings"_a, "knobs"_a, "src"_a = "",
      "The policy of `numref cast --to TO --profile P --policy S --<knob> V ...` in the §10.3 text form.");
  m.def("policy_values", &policy_values, "to"_a, "policy"_a, "The knob values of a policy as a dict.");
  m.def(
      "default_vectors_dir", [] { return numref::conform::default_vectors_dir(); },
      "§34.2 numref conform's default golden-vector directory ($NUMREF_VECTORS, else the source tree this module "
      "was built from); '' when none holds a MANIFEST.");
  m.def("explain", &explain, "fmt"_a, "code"_a, "The fields, class and exact value of one code (§3.1, §3.4).");
  nb::class_<CastSuite>(m, "CastSuite", "One cast suite of the conformance runner (spec §34).")
      .def(nb::init<const std::string&, const std::string&, const std::string&, const std::string&, const std::string&,
                    std::uint64_t>(),
           "from_"_a, "to"_a, "profile"_a, "policy"_a, "level"_a, "seed"_a)
      .def_prop_ro("label", &CastSuite::label)
      .def_prop_ro("text", &CastSuite::text)
      .def_prop_ro("sr", &CastSuite::sr)
      .def("size", &CastSuite::size)
      .def("fill", &CastSuite::fill, "first"_a, "xs"_a, "rs"_a.none())
      .def("expected", &CastSuite::expected, "xs"_a, "rs"_a.none(), "ys"_a, "flags"_a)
      .def("vector_cases", &CastSuite::vector_cases, "dir"_a)
      .def("mismatch", &CastSuite::mismatch, "x"_a, "r"_a, "exp_y"_a, "exp_flags"_a, "got_y"_a, "got_flags"_a.none());
  nb::class_<FastQuantized>(m, "FastQuantized", "The dequantized / fake-quant tensors of a cpu-fast result, lazily.")
      .def("dequantized", &FastQuantized::dequantized, "§19.3 binary32 codes (rows x cols), or None.")
      .def("fake_quant", &FastQuantized::fake_quant, "§19.6 codes of the fake_quant format, or None.");
  m.def("quantize", &quantize, "codes"_a, "rows"_a, "cols"_a, "src"_a, "elem"_a, "profile"_a, "partition"_a.none(),
        "group"_a.none(), "scale"_a.none(), "recipe"_a.none(), "amax_nan"_a.none(), "amax_inf"_a.none(),
        "q_max"_a.none(), "apply"_a.none(), "dequant"_a, "policy"_a, "wide"_a, "random"_a.none(), "fake_quant"_a.none(),
        "path"_a = "fast", "threads"_a = 1,
        "Quantize a 2-D tensor (spec §19): cpu-fast's block quantization where it takes the operation, else the "
        "reference (path='reference': always the reference).");
  m.def("mor", &mor, "codes"_a, "rows"_a, "cols"_a, "src"_a, "recipe"_a, "partition"_a, "threshold"_a.none(), "scale"_a,
        "fake"_a, "threads"_a, "Mixture of Representations on one tensor with the reference (spec §25–§27).");
  m.def("gaussws_bitwidth", &gaussws_bitwidth, "bi"_a, "b_init"_a, "b_target"_a,
        "GaussWS Eq. 11 per block, rounded once (spec §30.8); binary32 codes.");
  m.def("gaussws", &gaussws, "w"_a, "rows"_a, "cols"_a, "w_fmt"_a, "bt"_a, "key"_a.none(), "bits"_a.none(), "sum"_a,
        "g"_a.none(), "g_fmt"_a, "Gaussian weight sampling on one matrix with the reference (spec §30).");
  m.def("cast_codes", &cast_codes, "codes"_a, "out"_a, "flags"_a.none(), "r"_a.none(), "src"_a, "to"_a, "policy"_a,
        "path"_a, "threads"_a = 1,
        "Batched conversion of unsigned codes (spec §11); releases the GIL; `threads` threads for large arrays.");
}
