// numref conformance — a C ABI plugin loaded in this process (dlopen): --no-isolate, and the
// child side of an isolated plugin (backend_isolated.cpp); a table made in this process
// (numref.conform.check from Python).                                        spec §32
#include <dlfcn.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>

#include "backend_common.hpp"
#include "numref/conform/backend.hpp"

namespace numref::conform {

namespace {

using Kind = BackendError::Kind;

// §32.2 The minor version a table declares (abi_minor, 1.8), else the earliest one its layout and
// capabilities prove: the gaussws entries 1.3, mor 1.2, the tensor entries 1.1; NUMREF_CAP_RECIPE 1.4.
std::uint32_t declared_minor(const numref_backend& b) {
  if (b.struct_size >= offsetof(numref_backend, abi_minor) + sizeof b.abi_minor) return b.abi_minor;
  std::uint32_t m = 0;
  if (b.struct_size >= offsetof(numref_backend, gaussws) + sizeof b.gaussws)
    m = 3;
  else if (b.struct_size >= offsetof(numref_backend, mor_sub) + sizeof b.mor_sub)
    m = 2;
  else if (b.struct_size >= offsetof(numref_backend, tensor_supported) + sizeof b.tensor_supported)
    m = 1;
  if (b.caps & NUMREF_CAP_RECIPE) m = std::max<std::uint32_t>(m, 4);
  return m;
}

class PluginBackend final : public Backend {
 public:
  // A plugin library: loaded, its ABI version checked, opened with `args`.
  PluginBackend(const std::string& path, const std::string& args) {
    h_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h_) {
      const char* e = dlerror();
      throw BackendError(Kind::load, "cannot load backend " + path + ": " + (e ? e : "dlopen failed"));
    }
    auto ver = reinterpret_cast<numref_backend_abi_version_fn>(dlsym(h_, "numref_backend_abi_version"));
    auto open = reinterpret_cast<numref_backend_open_fn>(dlsym(h_, "numref_backend_open"));
    if (!ver || !open)
      throw BackendError(Kind::abi, path +
                                        " is not a numref backend: it does not export numref_backend_abi_version "
                                        "and numref_backend_open (see conformance/include/numref/backend.h)");
    const std::uint32_t v = ver();
    if (v != NUMREF_BACKEND_ABI_VERSION)
      throw BackendError(Kind::abi, path + " was built for numref backend ABI version " + std::to_string(v) +
                                        "; this runner speaks version " + std::to_string(NUMREF_BACKEND_ABI_VERSION) +
                                        ": rebuild the backend against this numref's backend.h");
    char err[1024] = {0};
    b_ = open(args.c_str(), err, sizeof err);
    err[sizeof err - 1] = 0;
    if (!b_) {
      // §32.6 "unavailable: <reason>": correctly built, but cannot run here (no device).
      const std::string_view msg(err);
      if (msg.substr(0, kUnavailablePrefix.size()) == kUnavailablePrefix)
        throw BackendError(Kind::unavailable, std::string(msg.substr(kUnavailablePrefix.size())));
      throw BackendError(Kind::load, path + ": numref_backend_open failed: " + (err[0] ? err : "(no message)"));
    }
    describe(path);
  }
  // A table made in this process (numref.conform.check from Python): no library, the same checks.
  PluginBackend(const numref_backend* table, const std::string& location) : b_(table) {
    if (!b_) throw BackendError(Kind::load, location + ": no backend table");
    describe(location);
  }
  ~PluginBackend() override {
    if (b_ && b_->close) b_->close(b_->ctx);
  }
  const BackendInfo& info() const override { return info_; }
  bool supported(const Params& p) override { return p.plugin_supported(*b_); }
  void run(const Params& p, std::size_t n, const std::uint32_t* in, std::uint32_t* out) override {
    std::string err;
    if (!p.plugin_call(*b_, n, in, out, info_.reports(p), err))
      throw BackendError(err.find("results for a batch") != std::string::npos ? Kind::count : Kind::error,
                         info_.name + ": " + err + " (" + std::string(p.family().name()) + " " + p.label() + ")");
  }

 private:
  // The table's identity, after the checks every table passes (§32.2).
  void describe(const std::string& path) {
    info_.kind = "plugin";
    info_.location = path;
    if (b_->abi_version != NUMREF_BACKEND_ABI_VERSION)
      throw BackendError(Kind::abi, path + ": the backend struct says ABI version " + std::to_string(b_->abi_version));
    if (b_->struct_size < offsetof(numref_backend, cast_supported))
      throw BackendError(Kind::abi, path + ": struct_size " + std::to_string(b_->struct_size) + " is too small");
    info_.name = b_->name ? one_line(b_->name) : std::filesystem::path(path).stem().string();
    info_.version = one_line(b_->version);
    info_.description = one_line(b_->description);
    info_.ops = word_list(b_->ops);
    info_.profiles = word_list(b_->profiles);
    info_.abi_minor = declared_minor(*b_);
    info_.flags = (b_->caps & NUMREF_CAP_FLAGS) != 0;
    info_.counts = (b_->caps & NUMREF_CAP_COUNTS) != 0;
    if (b_->departures) {
      try {
        info_.departures = parse_departures(b_->departures);
      } catch (const std::invalid_argument& e) {
        throw BackendError(Kind::abi, path + ": malformed departures list: " + e.what());
      }
    }
  }

  void* h_ = nullptr;  // never dlclose'd: a backend may leave threads or atexit handlers
  const numref_backend* b_ = nullptr;
  BackendInfo info_;
};

}  // namespace

std::unique_ptr<Backend> open_plugin_in_process(const std::string& path, const std::string& args) {
  return std::make_unique<PluginBackend>(path, args);
}

std::unique_ptr<Backend> open_table_in_process(const numref_backend* table, const std::string& location) {
  return std::make_unique<PluginBackend>(table, location);
}

}  // namespace numref::conform
