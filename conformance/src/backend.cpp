// numref conformance — finding a backend (--backend) and opening it with its transport; what
// the transports share.                                              spec §32, §33, §34.1, §34.6
//
// The transports are one file each (backend_common.hpp lists them).
#include "numref/conform/backend.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "backend_common.hpp"
#include "numref/conform/util.hpp"

#ifndef NUMREF_BACKEND_BUILD_DIR
#define NUMREF_BACKEND_BUILD_DIR ""
#endif

namespace numref::conform {

namespace fs = std::filesystem;
using Kind = BackendError::Kind;

std::vector<std::string> word_list(const char* s) {
  std::vector<std::string> out;
  if (!s) return out;
  for (auto w : split_ws(s)) out.emplace_back(w);
  return out;
}

std::string one_line(const char* s) {
  std::string o = s ? s : "";
  for (char& c : o)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return o;
}

void throw_timeout(proc::Child& c, const std::string& who, double timeout_s, const std::string& what) {
  c.kill_group();
  throw BackendError(Kind::timeout, who + ": no answer within " + fmt_duration(timeout_s) + " (m:ss) during " + what +
                                        "; the backend process was killed");
}

void throw_interrupted(proc::Child& c, const std::string& who, const std::string& what) {
  c.kill_group();
  throw BackendError(Kind::interrupted, who + ": interrupted during " + what + "; the backend process was killed");
}

namespace {

std::string lib_name(const std::string& name) {
  std::string n = name;
  std::replace(n.begin(), n.end(), '-', '_');
  return "libnumref_backend_" + n + ".so";
}

}  // namespace

std::string exe_dir() {
  std::error_code ec;
  const auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.parent_path().string();
}

std::string backend_dir() {
  if (const char* e = std::getenv("NUMREF_BACKEND_DIR"); e && *e) return e;
  const std::string ed = exe_dir();
  // build layout (build/numref, build/backends), install layout (bin/numref, lib/numref/backends)
  for (const std::string& d : {ed + "/backends", ed + "/../lib/numref/backends", ed + "/../backends"})
    if (!ed.empty() && fs::is_directory(d)) return fs::weakly_canonical(d).string();
  return NUMREF_BACKEND_BUILD_DIR;
}

std::vector<std::string> builtin_backends() {
  std::vector<std::string> names;
  const std::string dir = backend_dir();
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) return names;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string f = e.path().filename().string();
    const std::string pre = "libnumref_backend_";
    if (f.rfind(pre, 0) != 0 || f.size() <= pre.size() + 3 || f.substr(f.size() - 3) != ".so") continue;
    std::string n = f.substr(pre.size(), f.size() - pre.size() - 3);
    std::replace(n.begin(), n.end(), '_', '-');
    names.push_back(n);
  }
  const std::vector<std::string> order = {"reference", "cpu-fast", "nv-host"};
  std::sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    const auto ia = std::find(order.begin(), order.end(), a) - order.begin();
    const auto ib = std::find(order.begin(), order.end(), b) - order.begin();
    return ia != ib ? ia < ib : a < b;
  });
  return names;
}

BackendSpec resolve_backend(const std::string& arg) {
  BackendSpec s;
  s.display = arg;
  if (arg.rfind("pipe:", 0) == 0) {
    s.kind = BackendSpec::Kind::pipe;
    s.target = arg.substr(5);
    if (s.target.empty())
      throw std::invalid_argument("--backend pipe: needs a command, e.g. pipe:'python3 backend.py'");
    return s;
  }
  std::string path = arg;
  const auto q = arg.find('?');
  if (q != std::string::npos) {
    path = arg.substr(0, q);
    s.args = arg.substr(q + 1);
  }
  if (path.find('/') != std::string::npos || (path.size() > 3 && path.substr(path.size() - 3) == ".so")) {
    if (!fs::exists(path)) throw std::invalid_argument("backend library '" + path + "' does not exist");
    s.target = fs::absolute(path).string();
    return s;
  }
  const std::string dir = backend_dir();
  const std::string lib = dir + "/" + lib_name(path);
  if (!fs::exists(lib)) {
    std::string known;
    for (const auto& n : builtin_backends()) {
      if (!known.empty()) known += ", ";
      known += n;
    }
    throw std::invalid_argument("unknown backend '" + path + "' (built-in backends in " +
                                (dir.empty() ? std::string("<none>") : dir) + ": " +
                                (known.empty() ? std::string("none") : known) + "; or give PATH.so or pipe:COMMAND)");
  }
  s.target = lib;
  return s;
}

std::unique_ptr<Backend> open_backend(const BackendSpec& spec, const OpenOptions& opt) {
  if (spec.kind == BackendSpec::Kind::pipe) return open_pipe_backend(spec.target, opt.timeout_s);
  if (opt.isolate) return open_isolated_plugin(spec.target, spec.args, spec.display, opt.timeout_s);
  return open_plugin_in_process(spec.target, spec.args);
}

}  // namespace numref::conform
