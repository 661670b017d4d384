// numref conformance — --dump-failures: a failing tensor case written as files.     spec §34.4
//
// The tensor inputs of a failing case as .npy (f32 <f4, f16 <f2, bf16 bit patterns <u2, 8-bit
// codes |u1; the memory layout of the case) and DIR/<name>.txt with the FAIL line and the
// command that re-runs the case alone (--case). Files are written through OutputFile (§35.1); a
// failure to write is reported once as a note on stderr.
#include <cctype>
#include <cstdio>
#include <filesystem>

#include "numref/conform/output.hpp"
#include "numref/npy.hpp"
#include "run.hpp"

namespace numref::conform::runner {

namespace fs = std::filesystem;

namespace {

std::string join_commas(const std::vector<std::string>& v) {
  std::string t;
  for (const auto& x : v) t += (t.empty() ? "" : ",") + x;
  return t;
}

// The `numref conform` command that runs case m alone (§34.4 --case).
std::string rerun_command(const Context& c, const Mismatch& m) {
  const RunConfig& cfg = c.cfg;
  std::string cmd = "numref conform --backend '" + (c.rep.display.empty() ? cfg.backend : c.rep.display) + "'";
  if (!cfg.ops.empty()) cmd += " --ops '" + join_commas(cfg.ops) + "'";
  if (!cfg.profiles.empty()) cmd += " --profile '" + join_commas(cfg.profiles) + "'";
  cmd += " --level " + level_name(cfg.level) + " --seed " + std::to_string(cfg.seed);
  if (!cfg.vectors_dir.empty()) cmd += " --vectors '" + cfg.vectors_dir + "'";
  if (cfg.any_nan) cmd += " --any-nan";
  if (cfg.strict) cmd += " --strict";
  cmd += " --case '" + m.where + "'";
  return cmd;
}

// Writes input column `col` of case m as <base>.<column>.npy; returns its line for the .txt.
std::string write_column(const fs::path& base, const Column& col, const Mismatch& m) {
  const std::size_t n = col.count();
  const Format& f = *col.format;
  const auto dt = f.bits == 32   ? npy::Dtype::u4
                  : f.bits == 16 ? (&f == &format(FormatId::f16) ? npy::Dtype::f2 : npy::Dtype::u2)
                                 : npy::Dtype::u1;
  std::vector<std::uint8_t> data;
  const std::size_t isz = npy::itemsize(dt == npy::Dtype::u4 ? npy::Dtype::f4 : dt);
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint32_t w = m.dump_in[static_cast<std::size_t>(col.at) + k * static_cast<std::size_t>(col.width)];
    for (std::size_t b = 0; b < isz; ++b) data.push_back(static_cast<std::uint8_t>(w >> (8 * b)));
  }
  const std::vector<std::size_t> shape{col.rows, col.cols};
  const std::string file = base.string() + "." + col.name + ".npy";
  OutputFile out(file);
  const auto bytes = npy::encode(dt == npy::Dtype::u4 ? npy::Dtype::f4 : dt, shape, data);
  out.write(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  out.commit();
  return "  " + col.name + ": " + fs::path(file).filename().string() + " (" + std::string(f.name) + ", " +
         std::to_string(col.rows) + "x" + std::to_string(col.cols) +
         (f.bits == 16 && &f != &format(FormatId::f16) ? ", bit patterns: --input-format " + std::string(f.name) : "") +
         ")\n";
}

}  // namespace

void dump_case(Context& c, const Mismatch& m) {
  const Params& p = *m.dump_params;
  std::string name = "case-" + std::to_string(++c.dumped) + "-" + m.op + "-" + m.where;
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '.') ch = '_';
  const fs::path base = fs::path(c.cfg.dump_dir) / name;
  std::string txt =
      "FAIL " + m.op + " " + m.label + " | " + m.inputs + " | got " + m.got + " | expected " + m.expected + " | " +
      m.cls + " | " + m.where + (m.detail.empty() ? "" : " | " + m.detail) + "\n\nsuite: " + m.op + " " + m.params +
      "\n\nre-run this case alone (add --no-isolate for a debugger):\n  " + rerun_command(c, m) + "\n\ninputs:\n";
  try {
    for (const Column& col : p.schema().columns) {
      if (col.output() || !col.format) continue;
      txt += write_column(base, col, m);
    }
    OutputFile out(base.string() + ".txt");
    out.write(txt);
    out.commit();
  } catch (const std::exception& e) {
    if (!c.dump_failed) std::fprintf(stderr, "numref conform: --dump-failures: %s\n", e.what());
    c.dump_failed = true;
  }
}

}  // namespace numref::conform::runner
