// numref conformance — what a run checks: the op families (--ops), the profiles of a backend,
// the one case of --case, a shard's share of a suite, the golden-vector directory.   spec §34
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "numref/conform/backend.hpp"
#include "numref/conform/runner.hpp"
#include "numref/conform/util.hpp"
#include "numref/policy.hpp"
#include "run.hpp"

#ifndef NUMREF_SOURCE_VECTORS_DIR
#define NUMREF_SOURCE_VECTORS_DIR ""
#endif

namespace numref::conform {

namespace fs = std::filesystem;

std::vector<std::string> default_vectors_candidates() {
  if (const char* e = std::getenv("NUMREF_VECTORS"); e && *e) return {e};
  std::vector<std::string> c;
  // install layout (bin/numref, share/numref/vectors), then the source tree of this build
  if (const std::string ed = exe_dir(); !ed.empty()) c.push_back(ed + "/../share/numref/vectors");
  c.push_back(NUMREF_SOURCE_VECTORS_DIR);
  return c;
}

std::string default_vectors_dir() {
  std::error_code ec;
  const auto c = default_vectors_candidates();
  for (const auto& d : c)
    if (fs::is_regular_file(fs::path(d) / "MANIFEST", ec)) return fs::weakly_canonical(d, ec).string();
  return {};
}

namespace runner {

// Families selected by --ops, with their selectors.
Families select_families(const RunConfig& cfg) {
  Families out;
  if (cfg.ops.empty()) {
    for (const Family* f : registry().all()) out.push_back({f, {}});
    return out;
  }
  for (const auto& o : cfg.ops) {
    const auto c = o.find(':');
    const std::string name = o.substr(0, c);
    const Family* f = registry().find(name);
    if (!f) {
      std::string known;
      for (const Family* g : registry().all()) {
        if (!known.empty()) known += ", ";
        known += std::string(g->name());
      }
      throw std::invalid_argument("--ops: unknown operation '" + name + "' (known: " + known + ")");
    }
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == f; });
    if (it == out.end()) {
      out.push_back({f, {}});
      it = out.end() - 1;
    }
    it->second.push_back(c == std::string::npos ? std::string() : o.substr(c + 1));
  }
  return out;
}

std::vector<std::string> profiles_for(const RunConfig& cfg, const BackendInfo& info, std::vector<std::string>& notes) {
  std::vector<std::string> out;
  auto add = [&](const std::string& p) {
    if (!find_profile(p)) {
      notes.push_back("unknown profile '" + p + "' ignored");
      return;
    }
    const Profile& pr = profile(*find_profile(p));
    // §34.2 the same checks: the same policies, and neither has pair rules or a recipe (those differ
    // between profiles whose policies agree: torchao_mx_floor / _ceil / _even / _rceil)
    const auto plain = [](const Profile& x) { return x.rules.empty() && x.recipe == nullptr; };
    for (const auto& q : out) {
      const Profile& qr = profile(*find_profile(q));
      if (plain(qr) && plain(pr) && qr.narrow == pr.narrow && qr.wide == pr.wide) {
        notes.push_back("profile " + p + " has the same policies as " + q + ": checked once");
        return;
      }
    }
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  if (!cfg.profiles.empty()) {
    for (const auto& p : cfg.profiles) {
      if (!find_profile(p)) throw std::invalid_argument("--profile: unknown profile '" + p + "'");
      if (!info.profiles.empty() && std::find(info.profiles.begin(), info.profiles.end(), p) == info.profiles.end())
        notes.push_back("the backend does not claim profile " + p +
                        "; its suites run anyway (unsupported ones are skipped)");
      add(p);
    }
  } else if (info.profiles.empty()) {
    notes.push_back("the backend claims no profile: checking ocp, cuda_satfinite, cuda_nosat, ml_dtypes");
    for (const char* p : {"ocp", "cuda_satfinite", "cuda_nosat", "ml_dtypes"}) add(p);
  } else {
    for (const auto& p : info.profiles) add(p);
  }
  return out;
}

std::optional<CaseId> parse_case_id(const std::string& s) {
  if (s.empty()) return std::nullopt;
  CaseId c;
  const auto bad = [&] {
    return std::invalid_argument("--case: '" + s +
                                 "' is not a case location (<vector file>:<line> or generated:<suite>#<index>, "
                                 "as printed at the end of a FAIL line)");
  };
  auto number = [&](const std::string& t) {
    if (t.empty() || t.size() > 18 || t.find_first_not_of("0123456789") != std::string::npos) throw bad();
    return static_cast<std::uint64_t>(std::stoull(t));
  };
  if (s.rfind("generated:", 0) == 0) {
    const auto hash = s.find('#');
    if (hash == std::string::npos) throw bad();
    c.generated = true;
    c.suite = s.substr(10, hash - 10);
    if (c.suite.size() != 12 || !parse_hex(c.suite)) throw bad();
    c.index = number(s.substr(hash + 1));
    return c;
  }
  const auto colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0) throw bad();
  c.file = s.substr(0, colon);
  c.line = number(s.substr(colon + 1));
  return c;
}

std::pair<std::uint64_t, std::uint64_t> shard_range(std::uint64_t size, const RunConfig& c) {
  // §34.3 shard rule: shard i of N runs cases [floor(S*i/N), floor(S*(i+1)/N)) of every suite.
  const auto lo = static_cast<std::uint64_t>((static_cast<unsigned __int128>(size) * c.shard_index) / c.shard_count);
  const auto hi =
      static_cast<std::uint64_t>((static_cast<unsigned __int128>(size) * (c.shard_index + 1)) / c.shard_count);
  return {lo, hi};
}

std::string vectors_dir_of(const RunConfig& cfg, std::string& description) {
  if (cfg.vectors_dir == "none") {
    description = "skipped (--vectors none)";
    return {};
  }
  std::error_code ec;
  if (!cfg.vectors_dir.empty()) {
    if (!fs::exists(cfg.vectors_dir, ec))
      throw std::invalid_argument("--vectors: directory '" + cfg.vectors_dir + "' does not exist");
    if (!fs::is_directory(cfg.vectors_dir, ec))
      throw std::invalid_argument("--vectors: '" + cfg.vectors_dir + "' is not a directory");
    description = cfg.vectors_dir;
    return cfg.vectors_dir;
  }
  // §34.2 golden vectors are asked for by default: not finding them is an error, never a run of
  // generated cases only that looks like a pass.
  const std::string d = default_vectors_dir();
  if (d.empty()) {
    std::string looked;
    for (const auto& c : default_vectors_candidates()) looked += (looked.empty() ? "" : ", ") + c;
    throw std::invalid_argument("golden vectors not found (looked in " + looked +
                                "); give --vectors DIR, set NUMREF_VECTORS, or --vectors none");
  }
  description = d;
  return d;
}

}  // namespace runner

}  // namespace numref::conform
