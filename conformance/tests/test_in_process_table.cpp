// §34.13 A backend table made in the calling process (RunConfig::table): checked as a plugin's
// table is, by one worker in this process. The table here converts f32 -> bf16 with the
// round-to-nearest-even bit trick (expected values: the ocp profile's f32 -> bf16, §10.1, §6.3);
// a variant truncates, a variant reports an error.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "numref/backend.h"
#include "numref/conform/runner.hpp"

namespace {

enum class Mode { correct, truncate, error };

struct Ctx {
  Mode mode = Mode::correct;
  int calls = 0;
};

int cast_supported(void*, std::uint32_t from, std::uint32_t to, const numref_policy* p) {
  return from == NUMREF_FMT_F32 && to == NUMREF_FMT_BF16 && p->round == NUMREF_ROUND_RNE &&
         p->overflow == NUMREF_OVERFLOW_NONSAT && p->nan == NUMREF_NAN_PAYLOAD && p->daz == 0 && p->ftz == 0;
}

std::int64_t cast(void* ctx, std::uint32_t, std::uint32_t, const numref_policy*, std::size_t n, const std::uint32_t* in,
                  const std::uint32_t*, std::uint32_t* out, std::uint8_t*) {
  Ctx& c = *static_cast<Ctx*>(ctx);
  ++c.calls;
  if (c.mode == Mode::error) return -1;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t u = in[i];
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
      out[i] = (u >> 16) | 0x0040u;  // NaN: sign and top payload bits kept, quiet bit set (§6.3 payload)
    else if (c.mode == Mode::truncate)
      out[i] = u >> 16;  // toward zero: wrong under rne
    else
      out[i] = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;  // RNE, Inf on overflow (§4.2, §6.1 nonsat)
  }
  return static_cast<std::int64_t>(n);
}

const char* last_error(void*) { return "the table's own error text"; }

numref_backend table(Ctx& c) {
  numref_backend b{};
  b.abi_version = NUMREF_BACKEND_ABI_VERSION;
  b.struct_size = sizeof b;
  b.abi_minor = NUMREF_BACKEND_ABI_MINOR;
  b.name = "in-process";
  b.version = "1";
  b.description = "f32 -> bf16 bit trick, made in the test";
  b.ops = "cast";
  b.profiles = "ocp";
  b.ctx = &c;
  b.last_error = last_error;
  b.cast_supported = cast_supported;
  b.cast = cast;
  return b;
}

// Runs the table over cast f32 -> bf16 (ocp, level 0, no vectors); the exit status and the text.
int run(Mode m, std::string& text, int* calls = nullptr) {
  Ctx c;
  c.mode = m;
  const numref_backend b = table(c);
  numref::conform::RunConfig cfg;
  cfg.backend = "in-process";
  cfg.table = &b;
  cfg.ops = {"cast:f32:bf16"};
  cfg.profiles = {"ocp"};
  cfg.vectors_dir = "none";
  cfg.jobs = 4;  // a table is one instance: the run uses one worker whatever jobs says
  cfg.isolate = false;
  cfg.progress = 0;
  char* buf = nullptr;
  std::size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  const int status = numref::conform::run_conform(cfg, f);
  std::fclose(f);
  text.assign(buf, len);
  std::free(buf);
  if (calls) *calls = c.calls;
  return status;
}

TEST(InProcessTable, ACorrectTablePasses) {
  std::string text;
  int calls = 0;
  EXPECT_EQ(run(Mode::correct, text, &calls), 0) << text;
  EXPECT_GT(calls, 0);
  EXPECT_NE(text.find("[plugin, in process] in process: in-process"), std::string::npos) << text;
  EXPECT_NE(text.find(" 0 failed"), std::string::npos) << text;
}

TEST(InProcessTable, AWrongResultIsAMismatch) {
  std::string text;
  EXPECT_EQ(run(Mode::truncate, text), 1) << text;
  EXPECT_NE(text.find("FAIL cast f32->bf16"), std::string::npos) << text;
}

TEST(InProcessTable, AnErrorOfTheTableIsABackendFailure) {
  std::string text;
  EXPECT_EQ(run(Mode::error, text), 3) << text;
  EXPECT_NE(text.find("the table's own error text"), std::string::npos) << text;
}

TEST(InProcessTable, NoTableIsABackendFailure) {
  numref::conform::RunConfig cfg;
  cfg.backend = "none";
  cfg.ops = {"cast:f32:bf16"};
  cfg.vectors_dir = "none";
  numref_backend b{};  // struct_size 0: below the smallest table
  cfg.table = &b;
  std::FILE* f = std::tmpfile();
  EXPECT_EQ(numref::conform::run_conform(cfg, f), 3);
  std::fclose(f);
}

}  // namespace
