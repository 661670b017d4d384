// numref conformance — numref/conform/plugin.hpp: a C++ class as a backend plugin.   spec §32, §32.6
//
// Small backend classes are turned into numref_backend tables in process (backend_open<T>, and
// the NUMREF_BACKEND macro's two exported symbols) and the tables are checked against the C
// contract of backend.h: abi_version / struct_size, the ops string and the NULL entries of the
// families a class does not implement, one instance per open, exceptions -> negative returns
// with last_error, *_supported -> 0 on exceptions, and the open errors (bad arguments, a
// throwing constructor, the §32.6 "unavailable: " convention).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "numref/backend.h"
#include "numref/conform/backend.hpp"
#include "numref/conform/plugin.hpp"

// The header's prefix and the runner's are one fact (§32.6).
static_assert(numref::conform::kUnavailable == numref::conform::kUnavailablePrefix);

namespace {

using numref::conform::backend_open;

// Instances alive, to see that close frees what open created.
int g_alive = 0;

// cast only: f32 -> bf16 by truncation (the high half of the code); the batch size picks a failure.
struct CastOnly {
  static constexpr const char* name = "cast-only";
  static constexpr const char* version = "7";
  static constexpr const char* description = "truncating f32 -> bf16";
  static constexpr const char* profiles = "ocp";
  CastOnly() { ++g_alive; }
  CastOnly(const CastOnly&) = delete;
  ~CastOnly() { --g_alive; }

  static bool cast_supported(std::uint32_t from, std::uint32_t to, const numref_policy*) {
    if (from == NUMREF_FMT_INT8) throw std::runtime_error("a query that throws");
    return from == NUMREF_FMT_F32 && to == NUMREF_FMT_BF16;
  }
  std::int64_t cast(std::uint32_t, std::uint32_t, const numref_policy*, std::size_t n, const std::uint32_t* in,
                    const std::uint32_t*, std::uint32_t* out, std::uint8_t*) {
    if (n == 3) throw std::runtime_error("three is a bad batch");
    if (n == 4) throw 4;  // not a std::exception
    if (n == 5) return -7;
    for (std::size_t i = 0; i < n; ++i) out[i] = in[i] >> 16;
    ++batches;
    return static_cast<std::int64_t>(n);
  }
  int batches = 0;
};

// Every family (bodies trivial: the table is what is checked), caps and departures, a
// std::string version.
struct Everything {
  static constexpr const char* name = "everything";
  static inline const std::string version = std::string("v") + "2";
  static constexpr const char* description = "all families";
  static constexpr const char* profiles = "ocp cuda_satfinite";
  static constexpr std::uint32_t caps = NUMREF_CAP_FLAGS | NUMREF_CAP_COUNTS;
  static constexpr const char* departures = "cast bf16 f32 * nan | a test departure\n";
  bool cast_supported(std::uint32_t, std::uint32_t, const numref_policy*) const { return true; }
  std::int64_t cast(std::uint32_t, std::uint32_t, const numref_policy*, std::size_t n, const std::uint32_t*,
                    const std::uint32_t*, std::uint32_t*, std::uint8_t*) const {
    return static_cast<std::int64_t>(n);
  }
  bool tensor_supported(std::uint32_t, const numref_tensor_op*) const { return true; }
  std::int64_t scale(const numref_tensor_op*, const void*, std::uint32_t*, std::uint32_t*, std::uint32_t*,
                     std::uint32_t*) const {
    throw std::invalid_argument("scale failed");
  }
  std::int64_t quantize(const numref_tensor_op*, const void*, const std::uint32_t*, std::uint8_t*, std::uint32_t*,
                        std::uint32_t*, std::uint32_t*, std::uint64_t*) const {
    return 11;
  }
  std::int64_t dequantize(const numref_tensor_op*, const std::uint8_t*, const std::uint32_t*, const std::uint32_t*,
                          const std::uint32_t*, std::uint32_t*) const {
    return 12;
  }
  std::int64_t fake_quant(const numref_tensor_op*, const void*, const std::uint32_t*, std::uint32_t*,
                          std::uint64_t*) const {
    return 13;
  }
  bool mor_supported(std::uint32_t family, const numref_mor_op*) const { return family == NUMREF_TENSOR_MOR; }
  std::int64_t mor(const numref_mor_op*, const void*, numref_mor_result*, std::uint32_t*) const { return 14; }
  std::int64_t mor_sub(const numref_mor_op*, const void*, std::uint8_t*, std::uint8_t*, std::uint8_t*,
                       numref_error_sum*, numref_error_sum*, std::uint32_t*, std::uint32_t*, std::uint32_t*,
                       std::uint32_t*) const {
    return 15;
  }
};

// Two families only, one tensor and one MoR entry: Everything's, the rest of it private (an
// inaccessible member is not an entry point, and neither are private caps / departures).
struct ScaleAndMorSub : private Everything {
  static constexpr const char* name = "scale-and-mor-sub";
  static constexpr const char* version = "1";
  using Everything::description;
  using Everything::mor_sub;
  using Everything::mor_supported;
  using Everything::profiles;
  using Everything::scale;
  using Everything::tensor_supported;
};

// Takes arguments; "bad" is refused; the cast reports the argument's length in every result.
struct WithArgs {
  static constexpr const char* name = "with-args";
  static constexpr const char* version = "1";
  static constexpr const char* description = "";
  static constexpr const char* profiles = "ocp";
  explicit WithArgs(std::string_view args) : arg(args) {
    if (arg == "bad") throw std::invalid_argument("with-args: unknown argument 'bad'");
  }
  static bool cast_supported(std::uint32_t, std::uint32_t, const numref_policy*) { return true; }
  std::int64_t cast(std::uint32_t, std::uint32_t, const numref_policy*, std::size_t n, const std::uint32_t*,
                    const std::uint32_t*, std::uint32_t* out, std::uint8_t*) const {
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint32_t>(arg.size());
    return static_cast<std::int64_t>(n);
  }
  std::string arg;
};

// A GPU backend on a machine without a GPU (§32.6).
struct NoDevice {
  static constexpr const char* name = "no-device";
  static constexpr const char* version = "1";
  static constexpr const char* description = "";
  static constexpr const char* profiles = "ocp";
  NoDevice() { throw numref::conform::Unavailable("no widget (probe: 0 widgets)"); }
  static bool cast_supported(std::uint32_t, std::uint32_t, const numref_policy*) { return true; }
  static std::int64_t cast(std::uint32_t, std::uint32_t, const numref_policy*, std::size_t, const std::uint32_t*,
                           const std::uint32_t*, std::uint32_t*, std::uint8_t*) {
    return 0;
  }
};

// ABI 1.3: the gaussws family alone.
struct GausswsOnly {
  static constexpr const char* name = "gaussws-only";
  static constexpr const char* version = "1";
  static constexpr const char* description = "";
  static constexpr const char* profiles = "ocp";
  static bool gaussws_supported(const numref_gaussws_op* op) { return op && op->rows == 2; }
  static std::int64_t gaussws(const numref_gaussws_op*, const void*, const std::uint32_t*, const std::uint16_t*,
                              const std::uint64_t*, const void*, std::uint32_t*, std::uint32_t*, std::uint32_t*,
                              std::uint32_t*) {
    return 16;
  }
};

// The escape hatch: a table that claims ABI 1.0 (struct_size ends before tensor_supported).
struct OldMinor : CastOnly {
  static constexpr const char* name = "old-minor";
  void adjust_table(numref_backend& b) const {
    b.struct_size = static_cast<std::uint32_t>(offsetof(numref_backend, tensor_supported));
  }
};

// The entry points of the families that are not NULL, in backend.h's order.
std::string present(const numref_backend& b) {
  const std::pair<const char*, bool> entries[] = {{"cast_supported", b.cast_supported != nullptr},
                                                  {"cast", b.cast != nullptr},
                                                  {"tensor_supported", b.tensor_supported != nullptr},
                                                  {"scale", b.scale != nullptr},
                                                  {"quantize", b.quantize != nullptr},
                                                  {"dequantize", b.dequantize != nullptr},
                                                  {"fake_quant", b.fake_quant != nullptr},
                                                  {"mor_supported", b.mor_supported != nullptr},
                                                  {"mor", b.mor != nullptr},
                                                  {"mor_sub", b.mor_sub != nullptr},
                                                  {"gaussws_supported", b.gaussws_supported != nullptr},
                                                  {"gaussws", b.gaussws != nullptr}};
  std::string s;
  for (const auto& [name, set] : entries)
    if (set) s += (s.empty() ? "" : " ") + std::string(name);
  return s;
}

// One instance of backend_open<T>(args), closed at the end of the scope.
class Opened {
 public:
  Opened(const numref_backend* b, std::string err) : b_(b), err_(std::move(err)) {}
  Opened(const Opened&) = delete;
  Opened& operator=(const Opened&) = delete;
  ~Opened() { close(); }
  void close() {
    if (b_) b_->close(b_->ctx);
    b_ = nullptr;
  }
  const numref_backend* get() const { return b_; }
  const numref_backend* operator->() const { return b_; }
  const std::string& err() const { return err_; }

 private:
  const numref_backend* b_;
  std::string err_;
};
template <class T>
Opened opened(const char* args = "") {
  char err[256] = "";
  const numref_backend* b = backend_open<T>(args, err, sizeof err);
  return Opened(b, err);
}

TEST(PluginHeader, TableOfACastOnlyBackend) {
  char err[256] = "untouched";
  const Opened b(backend_open<CastOnly>("", err, sizeof err), err);
  ASSERT_NE(b.get(), nullptr) << err;
  EXPECT_STREQ(err, "untouched");  // success writes no message
  EXPECT_EQ(b->abi_version, NUMREF_BACKEND_ABI_VERSION);
  EXPECT_EQ(b->struct_size, sizeof(numref_backend));
  EXPECT_STREQ(b->name, "cast-only");
  EXPECT_STREQ(b->version, "7");
  EXPECT_STREQ(b->description, "truncating f32 -> bf16");
  EXPECT_STREQ(b->ops, "cast");
  EXPECT_STREQ(b->profiles, "ocp");
  EXPECT_EQ(b->caps, 0u);             // no caps member: none
  EXPECT_EQ(b->departures, nullptr);  // no departures member: NULL
  EXPECT_NE(b->ctx, nullptr);
  ASSERT_NE(b->last_error, nullptr);
  ASSERT_NE(b->close, nullptr);
  // the families the class does not implement stay NULL: skipped-unsupported by the runner
  EXPECT_EQ(present(*b.get()), "cast_supported cast");
  EXPECT_EQ(b->last_error(b->ctx), nullptr);  // no error yet
}

// §32.4 cast_supported answers 1 for an implemented conversion and 0 otherwise; cast converts n
// codes (r and flags NULL here: rne, no NUMREF_CAP_FLAGS) and returns n.
TEST(PluginHeader, CallsReachTheInstance) {
  Opened b = opened<CastOnly>(nullptr);  // NULL args = ""
  ASSERT_NE(b.get(), nullptr) << b.err();
  EXPECT_EQ(b->cast_supported(b->ctx, NUMREF_FMT_F32, NUMREF_FMT_BF16, nullptr), 1);
  EXPECT_EQ(b->cast_supported(b->ctx, NUMREF_FMT_F16, NUMREF_FMT_BF16, nullptr), 0);
  // 1.0f = 0x3F800000 -> bf16 0x3F80; -2.5f = 0xC0200000 -> 0xC020 (the high halves)
  const std::uint32_t in[2] = {0x3F800000u, 0xC0200000u};
  std::uint32_t out[2] = {0, 0};
  EXPECT_EQ(b->cast(b->ctx, NUMREF_FMT_F32, NUMREF_FMT_BF16, nullptr, 2, in, nullptr, out, nullptr), 2);
  EXPECT_EQ(out[0], 0x3F80u);
  EXPECT_EQ(out[1], 0xC020u);
  EXPECT_EQ(static_cast<const numref::conform::plugin_detail::Instance<CastOnly>*>(b->ctx)->impl.batches, 1);
}

// §32.4 a failed cast returns a negative value with last_error set.
TEST(PluginHeader, ExceptionsBecomeErrorReturns) {
  Opened b = opened<CastOnly>();
  ASSERT_NE(b.get(), nullptr) << b.err();
  std::uint32_t in[5] = {}, out[5] = {};
  EXPECT_LT(b->cast(b->ctx, NUMREF_FMT_F32, NUMREF_FMT_BF16, nullptr, 3, in, nullptr, out, nullptr), 0);
  ASSERT_NE(b->last_error(b->ctx), nullptr);
  EXPECT_STREQ(b->last_error(b->ctx), "three is a bad batch");
  EXPECT_LT(b->cast(b->ctx, NUMREF_FMT_F32, NUMREF_FMT_BF16, nullptr, 4, in, nullptr, out, nullptr), 0);
  ASSERT_NE(b->last_error(b->ctx), nullptr);
  EXPECT_STREQ(b->last_error(b->ctx), "unknown exception");
  // a negative value returned without an exception passes unchanged, with no stale message
  EXPECT_EQ(b->cast(b->ctx, NUMREF_FMT_F32, NUMREF_FMT_BF16, nullptr, 5, in, nullptr, out, nullptr), -7);
  EXPECT_EQ(b->last_error(b->ctx), nullptr);
  // a query that throws answers 0
  EXPECT_EQ(b->cast_supported(b->ctx, NUMREF_FMT_INT8, NUMREF_FMT_BF16, nullptr), 0);
}

TEST(PluginHeader, EveryFamily) {
  Opened b = opened<Everything>();
  ASSERT_NE(b.get(), nullptr) << b.err();
  // backend.h: the op families in the order of the struct
  EXPECT_STREQ(b->ops, "cast scale quantize dequantize fake-quant mor mor-sub");
  EXPECT_STREQ(b->version, "v2");
  EXPECT_STREQ(b->profiles, "ocp cuda_satfinite");
  EXPECT_EQ(b->caps, 0x3u);  // NUMREF_CAP_FLAGS 0x1 | NUMREF_CAP_COUNTS 0x2
  EXPECT_STREQ(b->departures, "cast bf16 f32 * nan | a test departure\n");
  ASSERT_EQ(present(*b.get()),
            "cast_supported cast tensor_supported scale quantize dequantize fake_quant mor_supported mor mor_sub");
  // each entry reaches the member of its own name (the return values tell them apart)
  EXPECT_EQ(b->quantize(b->ctx, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr), 11);
  EXPECT_EQ(b->dequantize(b->ctx, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr), 12);
  EXPECT_EQ(b->fake_quant(b->ctx, nullptr, nullptr, nullptr, nullptr, nullptr), 13);
  EXPECT_EQ(b->mor(b->ctx, nullptr, nullptr, nullptr, nullptr), 14);
  EXPECT_EQ(b->mor_sub(b->ctx, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                       nullptr),
            15);
  EXPECT_EQ(b->mor_supported(b->ctx, NUMREF_TENSOR_MOR, nullptr), 1);
  EXPECT_EQ(b->mor_supported(b->ctx, NUMREF_TENSOR_MOR_SUB, nullptr), 0);
  EXPECT_EQ(b->scale(b->ctx, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr), -1);
  EXPECT_STREQ(b->last_error(b->ctx), "scale failed");
}

TEST(PluginHeader, OnlyTheFamiliesPresent) {
  Opened b = opened<ScaleAndMorSub>();
  ASSERT_NE(b.get(), nullptr) << b.err();
  EXPECT_STREQ(b->ops, "scale mor-sub");
  ASSERT_EQ(present(*b.get()), "tensor_supported scale mor_supported mor_sub");
  EXPECT_EQ(b->struct_size, sizeof(numref_backend));
  EXPECT_EQ(b->caps, 0u);
  EXPECT_EQ(b->departures, nullptr);
  EXPECT_EQ(b->mor_sub(b->ctx, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                       nullptr),
            15);
}

TEST(PluginHeader, OneInstancePerOpenAndCloseFreesIt) {
  const int before = g_alive;
  Opened a = opened<CastOnly>();
  Opened b = opened<CastOnly>();
  ASSERT_NE(a.get(), nullptr) << a.err();
  ASSERT_NE(b.get(), nullptr) << b.err();
  EXPECT_NE(a.get(), b.get());
  EXPECT_NE(a->ctx, b->ctx);
  EXPECT_EQ(g_alive, before + 2);
  std::uint32_t in[3] = {}, out[3] = {};
  EXPECT_LT(a->cast(a->ctx, NUMREF_FMT_F32, NUMREF_FMT_BF16, nullptr, 3, in, nullptr, out, nullptr), 0);
  EXPECT_STREQ(a->last_error(a->ctx), "three is a bad batch");
  EXPECT_EQ(b->last_error(b->ctx), nullptr);  // the error is a's alone
  a.close();
  EXPECT_EQ(g_alive, before + 1);
  b.close();
  EXPECT_EQ(g_alive, before);
}

TEST(PluginHeader, ArgumentsReachTheConstructor) {
  Opened a = opened<WithArgs>("device=1");
  Opened b = opened<WithArgs>();
  ASSERT_NE(a.get(), nullptr) << a.err();
  ASSERT_NE(b.get(), nullptr) << b.err();
  std::uint32_t in[1] = {0}, out[1] = {99};
  EXPECT_EQ(a->cast(a->ctx, 0, 0, nullptr, 1, in, nullptr, out, nullptr), 1);
  EXPECT_EQ(out[0], 8u);  // strlen("device=1")
  EXPECT_EQ(b->cast(b->ctx, 0, 0, nullptr, 1, in, nullptr, out, nullptr), 1);
  EXPECT_EQ(out[0], 0u);
}

TEST(PluginHeader, OpenErrors) {
  char err[256] = "";
  // a class without an argument constructor: the standard message
  EXPECT_EQ(backend_open<CastOnly>("x=1", err, sizeof err), nullptr);
  EXPECT_STREQ(err, "cast-only takes no arguments (got 'x=1')");
  // a constructor that throws: its message
  EXPECT_EQ(backend_open<WithArgs>("bad", err, sizeof err), nullptr);
  EXPECT_STREQ(err, "with-args: unknown argument 'bad'");
  // §32.6 "unavailable: <reason>"
  EXPECT_EQ(backend_open<NoDevice>("", err, sizeof err), nullptr);
  EXPECT_STREQ(err, "unavailable: no widget (probe: 0 widgets)");
  // the message is cut to err_size (NUL included); no buffer, no message, no crash
  char small[10];
  EXPECT_EQ(backend_open<CastOnly>("x=1", small, sizeof small), nullptr);
  EXPECT_STREQ(small, "cast-only");
  EXPECT_EQ(backend_open<CastOnly>("x=1", nullptr, 0), nullptr);
}

TEST(PluginHeader, AdjustTableHasTheLastWord) {
  Opened b = opened<OldMinor>();
  ASSERT_NE(b.get(), nullptr) << b.err();
  EXPECT_STREQ(b->name, "old-minor");
  EXPECT_EQ(b->struct_size, offsetof(numref_backend, tensor_supported));
  EXPECT_EQ(b->abi_version, NUMREF_BACKEND_ABI_VERSION);
}

}  // namespace

// The two exported symbols of backend.h, as a plugin's source writes them.
NUMREF_BACKEND(WithArgs)

namespace {

TEST(PluginHeader, TheMacroExportsBothSymbols) {
  EXPECT_EQ(numref_backend_abi_version(), NUMREF_BACKEND_ABI_VERSION);
  char err[256] = "";
  const numref_backend* b = numref_backend_open("abc", err, sizeof err);
  ASSERT_NE(b, nullptr) << err;
  EXPECT_STREQ(b->name, "with-args");
  std::uint32_t in[1] = {0}, out[1] = {0};
  EXPECT_EQ(b->cast(b->ctx, 0, 0, nullptr, 1, in, nullptr, out, nullptr), 1);
  EXPECT_EQ(out[0], 3u);  // strlen("abc")
  b->close(b->ctx);
  EXPECT_EQ(numref_backend_open("bad", err, sizeof err), nullptr);
  EXPECT_STREQ(err, "with-args: unknown argument 'bad'");
}

}  // namespace

// §32.8 (ABI 1.3) the gaussws members become the gaussws entries, appended after mor_sub.
TEST(PluginHeader, GausswsFamily) {
  static_assert(NUMREF_BACKEND_ABI_MINOR >= 3u);  // 1.4 appended numref_tensor_op.recipe
  static_assert(offsetof(numref_tensor_op, recipe) > offsetof(numref_tensor_op, text));
  static_assert(offsetof(numref_backend, gaussws_supported) > offsetof(numref_backend, mor_sub));
  Opened b = opened<GausswsOnly>();
  ASSERT_NE(b.get(), nullptr) << b.err();
  EXPECT_STREQ(b->ops, "gaussws");
  ASSERT_EQ(present(*b.get()), "gaussws_supported gaussws");
  numref_gaussws_op op{};
  op.rows = 2;
  EXPECT_EQ(b->gaussws_supported(b->ctx, &op), 1);
  op.rows = 3;
  EXPECT_EQ(b->gaussws_supported(b->ctx, &op), 0);
  EXPECT_EQ(b->gaussws(b->ctx, &op, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr),
            16);
}
