// numref vectors — generate and verify the golden-vector files.          spec §31
#include <cstdio>
#include <filesystem>
#include <string>

#include "cli.hpp"
#include "numref/conform/runner.hpp"
#include "numref/conform/vectors.hpp"

namespace numref::cli::cmd_vectors_export {
int run_vectors_export(Args& a);  // `numref vectors export`, cmd_vectors_export.cpp (§31.8)
}  // namespace numref::cli::cmd_vectors_export

namespace numref::cli::cmd_vectors {
namespace {

constexpr const char* kUsage = R"(usage: numref vectors generate [--out DIR]
       numref vectors verify [DIR] [--against-generator]

generate  writes every golden-vector file and DIR/MANIFEST (sha256 per file), byte for
          byte reproducible, each through a temporary file renamed into place (§35). Removes
          a *.vec file only where DIR's existing MANIFEST lists it, the generator no longer
          produces it and it is unchanged (§35.3); never other files or directories.
          DIR defaults to the source tree's vectors/ (spec §31.4).
verify    checks DIR (default: the source tree's vectors/): the MANIFEST parses, every
          listed file exists with its sha256, no file is unlisted, and every file parses
          completely. --against-generator also compares every file with what the
          generator produces now (drift). Exit status 0 when consistent, 1 otherwise.
)";

int run(Args& a) {
  if (const auto p = Args(a).positional(); !p.empty() && p[0] == "export")
    return cmd_vectors_export::run_vectors_export(a);
  if (a.flag("help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  const auto pos = a.positional();
  if (pos.empty()) throw UsageError("expected 'generate' or 'verify' (numref vectors --help)");
  const std::string what = pos[0];
  if (what == "generate") {
    if (pos.size() > 1) throw UsageError("unexpected argument '" + pos[1] + "'");
    const std::string dir = a.opt_or("out", conform::default_vectors_dir());
    a.finish();
    if (dir.empty()) throw UsageError("no vector directory known: give --out DIR");
    std::error_code ec;
    if (const auto st = std::filesystem::status(dir, ec);
        std::filesystem::exists(st) && !std::filesystem::is_directory(st))
      throw UsageError("--out " + dir + ": exists and is not a directory");
    const auto files = conform::generate_all_vectors();
    const auto res = conform::write_vectors(dir, files);
    std::size_t bytes = 0;
    for (const auto& f : files) bytes += f.text.size();
    std::printf("wrote %zu vector files (%.1f KiB) and MANIFEST to %s\n", files.size(),
                static_cast<double>(bytes) / 1024.0, dir.c_str());
    for (const auto& r : res.removed) std::printf("removed stale %s\n", r.c_str());
    for (const auto& k : res.kept)
      std::printf("kept %s: the old MANIFEST lists it but it was edited since; remove it by hand if unwanted\n",
                  k.c_str());
    return 0;
  }
  if (what == "verify") {
    if (pos.size() > 2) throw UsageError("unexpected argument '" + pos[2] + "'");
    const std::string dir = pos.size() == 2 ? pos[1] : conform::default_vectors_dir();
    const bool gen = a.flag("against-generator");
    a.finish();
    if (dir.empty()) throw UsageError("no vector directory known: give DIR");
    const auto res = conform::verify_directory(dir, gen);
    for (const auto& p : res.problems) std::printf("%s\n", p.c_str());
    if (!res.problems.empty()) {
      std::printf("%s: %s\n", dir.c_str(), count(res.problems.size(), "problem").c_str());
      return 1;
    }
    std::printf("%s: %s, %s, MANIFEST verified%s\n", dir.c_str(), count(res.files, "file").c_str(),
                count(res.cases, "case").c_str(), gen ? ", identical to the generator's output" : "");
    return 0;
  }
  throw UsageError("unknown action '" + what + "' (expected generate or verify)");
}

NUMREF_VERB("vectors", "generate / verify the golden-vector files and their MANIFEST (§31)", run);

}  // namespace
}  // namespace numref::cli::cmd_vectors
