// numref backends "cuda" and "cuda-emu" — the same contract (spec §A.11): over every suite the
// runner plans (every family, levels 0, 1, 2 and exhaustive, every profile), the cuda-emu plugin
// (loaded with dlopen, through the C ABI as the runner loads it) answers *_supported exactly as
// the cuda backend's decision functions (contract.hpp's KernelContract, the base class whose
// static members ARE the cuda plugin's entries; the cuda plugin itself cannot be opened without a
// device), and for every refused suite the cuda-emu operation fails with the cuda backend's
// refusal message. Label `cuda`; no GPU needed.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "contract.hpp"
#include "numref/backend.h"
#include "numref/conform/core.hpp"
#include "numref/conform/plugin.hpp"
#include "numref/format.hpp"

namespace {

namespace ct = numref_cuda::contract;

const char* g_plugin = nullptr;  // argv[1]: libnumref_backend_cuda_emu.so

// The cuda backend's decisions as a plugin table: its *_supported entries are KernelContract's;
// each call also keeps the refusal's text for the message check. Its operations are never run.
thread_local std::string g_refusal;
struct CudaDecisions : ct::KernelContract {
  static constexpr const char* name = "cuda-decisions";
  static constexpr const char* version = "test";
  static constexpr const char* description = "the cuda backend's *_supported entries";
  static bool cast_supported(std::uint32_t f, std::uint32_t t, const numref_policy* p) {
    g_refusal = ct::cast_refusal(f, t, p);
    EXPECT_EQ(ct::KernelContract::cast_supported(f, t, p), g_refusal.empty());
    return g_refusal.empty();
  }
  static bool tensor_supported(std::uint32_t family, const numref_tensor_op* op) {
    g_refusal = ct::tensor_refusal(family, op);
    EXPECT_EQ(ct::KernelContract::tensor_supported(family, op), g_refusal.empty());
    return g_refusal.empty();
  }
  static bool mor_supported(std::uint32_t family, const numref_mor_op* op) {
    g_refusal = ct::mor_refusal(family, op);
    EXPECT_EQ(ct::KernelContract::mor_supported(family, op), g_refusal.empty());
    return g_refusal.empty();
  }
  static bool gaussws_supported(const numref_gaussws_op* op) {
    g_refusal = ct::gaussws_refusal(op);
    EXPECT_EQ(ct::KernelContract::gaussws_supported(op), g_refusal.empty());
    return g_refusal.empty();
  }
  static bool mma_supported(const numref_mma_op* op) {
    g_refusal = ct::mma_refusal(op);
    EXPECT_EQ(ct::KernelContract::mma_supported(op), g_refusal.empty());
    return g_refusal.empty();
  }
  [[noreturn]] static void never() { throw std::logic_error("not run"); }
  static std::int64_t cast(std::uint32_t, std::uint32_t, const numref_policy*, std::size_t, const std::uint32_t*,
                           const std::uint32_t*, std::uint32_t*, std::uint8_t*) {
    never();
  }
  static std::int64_t scale(const numref_tensor_op*, const void*, std::uint32_t*, std::uint32_t*, std::uint32_t*,
                            std::uint32_t*) {
    never();
  }
  static std::int64_t quantize(const numref_tensor_op*, const void*, const std::uint32_t*, std::uint8_t*,
                               std::uint32_t*, std::uint32_t*, std::uint32_t*, std::uint64_t*) {
    never();
  }
  static std::int64_t dequantize(const numref_tensor_op*, const std::uint8_t*, const std::uint32_t*,
                                 const std::uint32_t*, const std::uint32_t*, std::uint32_t*) {
    never();
  }
  static std::int64_t fake_quant(const numref_tensor_op*, const void*, const std::uint32_t*, std::uint32_t*,
                                 std::uint64_t*) {
    never();
  }
  static std::int64_t mor(const numref_mor_op*, const void*, numref_mor_result*, std::uint32_t*) { never(); }
  static std::int64_t mor_sub(const numref_mor_op*, const void*, std::uint8_t*, std::uint8_t*, std::uint8_t*,
                              numref_error_sum*, numref_error_sum*, std::uint32_t*, std::uint32_t*, std::uint32_t*,
                              std::uint32_t*) {
    never();
  }
  static std::int64_t gaussws(const numref_gaussws_op*, const void*, const std::uint32_t*, const std::uint16_t*,
                              const std::uint64_t*, const void*, std::uint32_t*, std::uint32_t*, std::uint32_t*,
                              std::uint32_t*) {
    never();
  }
  static std::int64_t mma(const numref_mma_op*, const std::uint32_t*, const std::uint32_t*, const std::uint32_t*,
                          const std::uint32_t*, const std::uint32_t*, std::uint32_t*, std::uint8_t*) {
    never();
  }
};

struct Plugin {
  void* h = nullptr;
  const numref_backend* b = nullptr;
  explicit Plugin(const char* path) {
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) return;
    using Open = const numref_backend* (*)(const char*, char*, std::size_t);
    auto open = reinterpret_cast<Open>(dlsym(h, "numref_backend_open"));
    char err[512] = {0};
    if (open) b = open("", err, sizeof err);
  }
  ~Plugin() {
    if (b) b->close(b->ctx);
    if (h) dlclose(h);
  }
};

// A cast suite ("FROM TO ...") with an extra P3109 member (spec §2.5 item 1): both plugins refuse the
// family by name (§A.12 item 9); its level-0 and level-1 suites (the f32 pairs) are checked, the
// thousands of level-2 / exhaustive ones (bf16, f16, same-K pairs) are not checked again.
bool extra_p3109_suite(const std::string& text) {
  std::istringstream ss(text);
  std::string a, b;
  ss >> a >> b;
  for (const std::string& w : {a, b})
    if (const auto id = numref::find_format(w); id && numref::format(*id).is_p3109_extra()) return true;
  return false;
}

TEST(CudaEmuContract, SameDecisionsAndMessagesOverEveryPlannedSuite) {
  ASSERT_NE(g_plugin, nullptr) << "usage: test_cuda_emu_contract PATH/libnumref_backend_cuda_emu.so";
  Plugin emu(g_plugin);
  ASSERT_NE(emu.b, nullptr) << "cannot open " << g_plugin << ": " << dlerror();
  char err[512] = {0};
  const numref_backend* cuda = numref::conform::backend_open<CudaDecisions>("", err, sizeof err);
  ASSERT_NE(cuda, nullptr) << err;
  EXPECT_EQ(std::string(emu.b->ops), std::string(cuda->ops));  // the same op families
  EXPECT_EQ(std::string(emu.b->profiles), std::string(cuda->profiles));

  std::map<std::string, std::pair<int, int>> per_family;  // family -> (supported, refused)
  std::size_t suites = 0;
  std::map<std::string, bool> seen;  // a suite planned at several levels is checked once
  for (const numref::conform::Family* fam : numref::conform::registry().all()) {
    for (auto level : {numref::conform::Level::l0, numref::conform::Level::l1, numref::conform::Level::l2,
                       numref::conform::Level::exhaustive}) {
      numref::conform::PlanRequest req;
      req.level = level;
      req.profiles = {"ocp", "ieee", "cuda_satfinite", "cuda_nosat", "ml_dtypes"};
      for (int i = 0; i < numref::kProfileCount; ++i)  // §10.4 recipe profiles: refused by name (§A.12 item 8)
        if (numref::all_profiles()[i].recipe) req.profiles.emplace_back(numref::all_profiles()[i].name);
      std::vector<numref::conform::GeneratedSuite> plan;
      fam->plan(req, plan);
      for (const auto& s : plan) {
        const numref::conform::Params& p = *s.params;
        const std::string key = std::string(fam->name()) + " " + p.text();
        if (seen[key]) continue;
        const bool wide_level = level == numref::conform::Level::l2 || level == numref::conform::Level::exhaustive;
        if (wide_level && std::string(fam->name()) == "cast" && extra_p3109_suite(p.text())) continue;
        seen[key] = true;
        ++suites;
        g_refusal.clear();  // a family without an entry point (gaussws) decides without setting it
        const bool c = p.plugin_supported(*cuda);
        const std::string refusal = g_refusal;
        const bool e = p.plugin_supported(*emu.b);
        ASSERT_EQ(c, e) << key << ": cuda " << (c ? "accepts" : "refuses (" + refusal + ")") << ", cuda-emu "
                        << (e ? "accepts" : "refuses");
        auto& counts = per_family[std::string(fam->name())];
        (c ? counts.first : counts.second) += 1;
        if (c || s.cases->size() == 0) continue;
        // A family neither plugin has an entry point for: both refuse it (checked above) without a
        // message to compare.
        if (refusal.empty()) continue;
        // Refused: the operation itself fails with the cuda backend's message.
        std::vector<std::uint32_t> in(static_cast<std::size_t>(p.shape().in)),
            out(static_cast<std::size_t>(p.shape().out));
        s.cases->fill(0, 1, in.data());
        std::string error;
        EXPECT_FALSE(p.plugin_call(*emu.b, 1, in.data(), out.data(), false, error)) << key;
        EXPECT_NE(error.find(refusal), std::string::npos) << key << ": got '" << error << "', want '" << refusal << "'";
      }
    }
  }
  cuda->close(cuda->ctx);
  EXPECT_GT(suites, 100u);
  // The op families the kernels do not implement yet: both plugins lack their entry points, so
  // both refuse every suite (checked above). The list must shrink when a family gets kernels.
  static const std::set<std::string> kWithoutKernels = {};
  const std::string ops = " " + std::string(cuda->ops) + " ";
  for (const auto& [fam, n] : per_family) {
    std::printf("%-12s %5d supported %5d refused\n", fam.c_str(), n.first, n.second);
    if (kWithoutKernels.count(fam)) {
      EXPECT_EQ(n.first, 0) << fam << ": the kernels accept it now: remove it from kWithoutKernels";
      EXPECT_EQ(ops.find(" " + fam + " "), std::string::npos) << fam << " is in the cuda backend's ops";
      continue;
    }
    EXPECT_GT(n.first, 0) << fam << ": the kernels accept no suite of the family";
  }
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc > 1) g_plugin = argv[1];
  return RUN_ALL_TESTS();
}
