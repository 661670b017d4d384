// numref conformance — loading backends: C ABI plugins in process or isolated in a child
// process, and pipe-protocol programs.                       spec §31, §32, §33.6
#include "numref/conform/backend.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>

#include "numref/conform/protocol.hpp"
#include "numref/conform/util.hpp"

#ifndef NUMREF_BACKEND_BUILD_DIR
#define NUMREF_BACKEND_BUILD_DIR ""
#endif

namespace numref::conform {

namespace fs = std::filesystem;
using Kind = BackendError::Kind;

namespace {

std::vector<std::string> words(const char* s) {
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

std::string signal_name(int sig) {
  const char* a = sigabbrev_np(sig);
  return a ? "SIG" + std::string(a) : "signal " + std::to_string(sig);
}

// How a backend process ended. A pipe backend runs under /bin/sh -c: a shell that ran the
// program as its child exits with 128 + N when the program was killed by signal N.
std::string status_text(int status, bool via_shell = false) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "killed by " + signal_name(sig) + " (signal " + std::to_string(sig) + ")";
  }
  if (WIFEXITED(status)) {
    const int e = WEXITSTATUS(status);
    if (via_shell && e > 128 && e - 128 < NSIG)
      return "killed by " + signal_name(e - 128) + " (exit status " + std::to_string(e) + " from /bin/sh)";
    return "exited with status " + std::to_string(e);
  }
  return "stopped";
}

// ---- backend processes: process groups, stop requests (§33.6) --------------------------------

std::atomic<bool> g_stop{false};
// The process groups of the live backend processes (0 = free slot); read by request_stop().
constexpr std::size_t kMaxGroups = 1024;
std::atomic<pid_t> g_groups[kMaxGroups]{};
static_assert(std::atomic<pid_t>::is_always_lock_free);

void track_group(pid_t g) {
  for (auto& s : g_groups) {
    pid_t free = 0;
    if (s.compare_exchange_strong(free, g)) return;
  }
}
void untrack_group(pid_t g) {
  for (auto& s : g_groups) {
    pid_t v = g;
    if (s.compare_exchange_strong(v, 0)) return;
  }
}
void kill_groups() noexcept {
  for (auto& s : g_groups)
    if (const pid_t g = s.load(); g > 0) kill(-g, SIGKILL);
}

// In a child just forked from the runner (`parent`): its own process group, killed when the
// runner dies (PR_SET_PDEATHSIG, with the getppid() check for a runner that died before the
// prctl), default signals, and no copy of the runner's table of groups.
void in_child(pid_t parent) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  for (auto& s : g_groups) s.store(0);
  signal(SIGPIPE, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGINT, SIG_IGN);  // the runner decides when to stop
}

// Closes every descriptor from 3 up except `a` and `b` (a child keeps no other backend's pipes
// and no report file of the runner).
void close_other_fds(int a, int b) {
  const unsigned lo = static_cast<unsigned>(std::min(a, b)), hi = static_cast<unsigned>(std::max(a, b));
  if (lo > 3) close_range(3, lo - 1, 0);
  if (hi > lo + 1) close_range(lo + 1, hi - 1, 0);
  close_range(hi + 1, ~0u, 0);
}

// The leader of a pipe backend's process group. /bin/sh may run the program as its own child,
// which PR_SET_PDEATHSIG does not reach: this process runs the shell as its child, kills the
// whole group when the runner dies (its death signal, SIGTERM here) and then ends as the shell
// ended (the same exit status or signal), so that the runner sees the shell's own status.
extern "C" void kill_own_group(int) { kill(0, SIGKILL); }
[[noreturn]] void pipe_supervisor(const char* cmd) {
  struct sigaction sa {};
  sa.sa_handler = kill_own_group;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  prctl(PR_SET_PDEATHSIG, SIGTERM);  // replaces in_child()'s SIGKILL; the getppid() check was done
  const pid_t sh = fork();
  if (sh < 0) _exit(127);
  if (sh == 0) {
    signal(SIGTERM, SIG_DFL);
    execl("/bin/sh", "sh", "-c", cmd, static_cast<char*>(nullptr));
    _exit(127);
  }
  ::close(0);  // the runner sees the end of the backend's output when the shell's side ends
  ::close(1);
  int st = 0;
  while (waitpid(sh, &st, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(st)) {
    signal(WTERMSIG(st), SIG_DFL);
    kill(getpid(), WTERMSIG(st));
  }
  _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 127);
}

using Clock = std::chrono::steady_clock;

// A backend process as the runner holds it: the leader of its process group and two pipes.
struct Child {
  pid_t pid = -1;
  int to = -1, from = -1;
  bool reaped = false;
  int status = 0;

  void adopt(pid_t p, int to_fd, int from_fd) {
    pid = p;
    setpgid(p, p);  // also in the child: whichever runs first
    track_group(p);
    to = to_fd;
    from = from_fd;
    reaped = false;
    status = 0;
  }
  bool exited() {  // reaps the leader if it has ended
    if (!reaped && pid > 0 && waitpid(pid, &status, WNOHANG) == pid) reaped = true;
    return reaped;
  }
  // Kills the whole process group (helpers the backend forked included) and reaps the leader;
  // the leader's own status is kept when it had already ended.
  void kill_group() {
    if (pid <= 0) return;
    kill(-pid, SIGKILL);
    untrack_group(pid);
    if (!reaped) waitpid(pid, &status, 0);
    reaped = true;
  }
  // After EOF on its output: the leader's own status if it ends within 200 ms, else killed.
  void reap_soon() {
    for (int i = 0; i < 100 && !exited(); ++i) usleep(2000);
    kill_group();
  }
  void close_fds() {
    if (to >= 0) ::close(to);
    if (from >= 0) ::close(from);
    to = from = -1;
  }
  // Ends it: `quit` already sent; waits up to `ms` for the leader, then kills the group.
  void finish(int ms) {
    close_fds();
    for (int i = 0; i < ms / 2 && !exited(); ++i) usleep(2000);
    kill_group();
    pid = -1;
  }
};

enum class Wait { ready, exited, silent, stopped };

// Waits until fd is ready for `events`, the process ends (its pipe may be held open by a
// helper it forked), `deadline` passes, or a stop is requested. Slices of 50 ms.
Wait wait_child(Child& c, int fd, short events, Clock::time_point deadline) {
  while (true) {
    if (stop_requested()) return Wait::stopped;
    pollfd p{fd, events, 0};
    const int r = poll(&p, 1, 50);
    if (r > 0 || (r < 0 && errno != EINTR)) return Wait::ready;  // a read/write reports an error
    if (c.exited()) return Wait::exited;
    if (Clock::now() >= deadline) return Wait::silent;
  }
}

// ---- in-process plugin ---------------------------------------------------------------------

class PluginBackend final : public Backend {
 public:
  PluginBackend(const std::string& path, const std::string& args) {
    info_.kind = "plugin";
    info_.location = path;
    h_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h_) {
      const char* e = dlerror();
      throw BackendError(Kind::load, "cannot load backend " + path + ": " + (e ? e : "dlopen failed"));
    }
    auto ver = reinterpret_cast<numref_backend_abi_version_fn>(dlsym(h_, "numref_backend_abi_version"));
    auto open = reinterpret_cast<numref_backend_open_fn>(dlsym(h_, "numref_backend_open"));
    if (!ver || !open)
      throw BackendError(Kind::abi, path + " is not a numref backend: it does not export numref_backend_abi_version "
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
      // §31.6 "unavailable: <reason>": correctly built, but cannot run here (no device).
      const std::string_view msg(err);
      if (msg.substr(0, kUnavailablePrefix.size()) == kUnavailablePrefix)
        throw BackendError(Kind::unavailable, std::string(msg.substr(kUnavailablePrefix.size())));
      throw BackendError(Kind::load, path + ": numref_backend_open failed: " + (err[0] ? err : "(no message)"));
    }
    if (b_->abi_version != NUMREF_BACKEND_ABI_VERSION)
      throw BackendError(Kind::abi, path + ": the backend struct says ABI version " + std::to_string(b_->abi_version));
    if (b_->struct_size < offsetof(numref_backend, cast_supported))
      throw BackendError(Kind::abi, path + ": struct_size " + std::to_string(b_->struct_size) + " is too small");
    info_.name = b_->name ? one_line(b_->name) : fs::path(path).stem().string();
    info_.version = one_line(b_->version);
    info_.description = one_line(b_->description);
    info_.ops = words(b_->ops);
    info_.profiles = words(b_->profiles);
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
  void* h_ = nullptr;  // never dlclose'd: a backend may leave threads or atexit handlers
  const numref_backend* b_ = nullptr;
  BackendInfo info_;
};

// ---- isolated plugin: a child process that loads the plugin ------------------------------------
//
// Messages (both directions): u32 type-or-status, u32 value, u32 text length, text.
// Case words travel through a shared anonymous mapping created before fork(): a call of m
// cases has its inputs at word 0, its outputs after them (the batch layout of Params::shape()
// for m cases) and then a guard zone of canary words (§33.6 overruns).

enum : std::uint32_t { kMsgSupported = 1, kMsgRun = 2, kMsgQuit = 3 };
enum : std::uint32_t { kStOk = 0, kStError = 1 };
constexpr std::size_t kShmBytes = std::size_t{24} << 20;
constexpr std::size_t kShmWords = kShmBytes / sizeof(std::uint32_t);
// §33.6 progress: a batch is handed to the plugin in calls of at most this many cases (and
// about 2^18 words); each answered call is progress, --timeout bounds the silence.
constexpr std::size_t kCallCases = 1024;
constexpr std::size_t kCallWords = std::size_t{1} << 18;
// §33.6 crash bisection: the crashing cases one backend instance isolates before a crash ends
// its run, as before.
constexpr int kMaxCrashes = 8;
constexpr std::uint32_t kCanary = 0xDEADBEEFu;

bool write_all(int fd, const void* p, std::size_t n) {
  const auto* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

bool read_all(int fd, void* p, std::size_t n) {  // blocking
  auto* c = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = ::read(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

bool send_msg(int fd, std::uint32_t type, std::uint32_t value, const std::string& text) {
  const std::uint32_t h[3] = {type, value, static_cast<std::uint32_t>(text.size())};
  return write_all(fd, h, sizeof h) && write_all(fd, text.data(), text.size());
}

std::string encode_info(const BackendInfo& i) {
  std::string s = "name\t" + i.name + "\nversion\t" + i.version + "\ndescription\t" + i.description + "\nops\t";
  for (const auto& o : i.ops) s += o + " ";
  s += "\nprofiles\t";
  for (const auto& p : i.profiles) s += p + " ";
  s += "\nflags\t" + std::string(i.flags ? "1" : "0") + "\n";
  s += "counts\t" + std::string(i.counts ? "1" : "0") + "\n";
  for (const auto& d : i.departures)
    s += "departure\t" + d.op + " " + d.from + " " + d.to + " " + d.profile + " " + d.cls + " | " + d.why + "\n";
  return s;
}

BackendInfo decode_info(const std::string& s) {
  BackendInfo i;
  std::size_t pos = 0;
  while (pos < s.size()) {
    const std::size_t e = std::min(s.find('\n', pos), s.size());
    const std::string line = s.substr(pos, e - pos);
    pos = e + 1;
    const auto tab = line.find('\t');
    if (tab == std::string::npos) continue;
    const std::string k = line.substr(0, tab), v = line.substr(tab + 1);
    if (k == "name") i.name = v;
    else if (k == "version") i.version = v;
    else if (k == "description") i.description = v;
    else if (k == "ops") i.ops = words(v.c_str());
    else if (k == "profiles") i.profiles = words(v.c_str());
    else if (k == "flags") i.flags = v == "1";
    else if (k == "counts") i.counts = v == "1";
    else if (k == "departure") i.departures.push_back(parse_departure(v));
  }
  return i;
}

[[noreturn]] void child_main(int rd, int wr, void* shm, const std::string& path, const std::string& args) {
  std::unique_ptr<Backend> b;
  try {
    b = std::make_unique<PluginBackend>(path, args);
  } catch (const BackendError& e) {
    send_msg(wr, kStError, static_cast<std::uint32_t>(e.kind), e.what());
    _exit(0);
  }
  if (!send_msg(wr, kStOk, 0, encode_info(b->info()))) _exit(0);
  std::map<std::string, ParamsPtr> cache;
  std::string text;
  while (true) {
    std::uint32_t h[3];
    if (!read_all(rd, h, sizeof h)) _exit(0);
    text.resize(h[2]);
    if (h[2] && !read_all(rd, text.data(), h[2])) _exit(0);
    if (h[0] == kMsgQuit) _exit(0);
    ParamsPtr p;
    try {
      auto it = cache.find(text);
      if (it == cache.end()) {
        const auto nl = text.find('\n');
        const Family* fam = registry().find(text.substr(0, nl));
        if (!fam) throw std::invalid_argument("unknown op family");
        it = cache.emplace(text, fam->parse_params(text.substr(nl + 1))).first;
      }
      p = it->second;
      if (h[0] == kMsgSupported) {
        send_msg(wr, kStOk, b->supported(*p) ? 1u : 0u, "");
      } else {
        const Shape s = p->shape();
        const std::size_t n = h[1];
        auto* in = static_cast<std::uint32_t*>(shm);
        std::uint32_t* out = in + n * static_cast<std::size_t>(s.in);
        b->run(*p, n, in, out);
        send_msg(wr, kStOk, static_cast<std::uint32_t>(n), "");
      }
    } catch (const BackendError& e) {
      send_msg(wr, kStError, static_cast<std::uint32_t>(e.kind), e.what());
    } catch (const std::exception& e) {
      send_msg(wr, kStError, static_cast<std::uint32_t>(Kind::error), e.what());
    }
  }
}

// Copies cases [a, a + m) of a batch of n cases (`words` per case, Params::shape() layout) into
// a batch of m cases, and back.
void pack_cases(const std::uint32_t* src, std::size_t n, std::size_t a, std::size_t m, int words, bool case_major,
                std::uint32_t* dst) {
  const auto w = static_cast<std::size_t>(words);
  if (case_major) {
    std::memcpy(dst, src + a * w, m * w * sizeof(std::uint32_t));
    return;
  }
  for (std::size_t k = 0; k < w; ++k) std::memcpy(dst + k * m, src + k * n + a, m * sizeof(std::uint32_t));
}
void unpack_cases(const std::uint32_t* src, std::size_t m, std::size_t n, std::size_t a, int words, bool case_major,
                  std::uint32_t* dst) {
  const auto w = static_cast<std::size_t>(words);
  if (case_major) {
    std::memcpy(dst + a * w, src, m * w * sizeof(std::uint32_t));
    return;
  }
  for (std::size_t k = 0; k < w; ++k) std::memcpy(dst + k * n + a, src + k * m, m * sizeof(std::uint32_t));
}

// Two close-on-exec pipes for a child's stdin/stdout (or request/answer) channels; on failure
// nothing stays open.
void pipe_pair(int a[2], int b[2]) {
  if (pipe2(a, O_CLOEXEC) != 0) throw BackendError(BackendError::Kind::load, "pipe() failed");
  if (pipe2(b, O_CLOEXEC) != 0) {
    ::close(a[0]);
    ::close(a[1]);
    throw BackendError(BackendError::Kind::load, "pipe() failed");
  }
}

class IsolatedBackend final : public Backend {
 public:
  IsolatedBackend(const std::string& path, const std::string& args, const std::string& display, double timeout_s)
      : path_(path), args_(args), display_(display), timeout_s_(timeout_s) {
    shm_ = mmap(nullptr, kShmBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shm_ == MAP_FAILED) throw BackendError(Kind::load, "mmap of the shared batch buffer failed");
    info_ = spawn();
    info_.kind = "plugin";
    info_.location = path;
  }

  ~IsolatedBackend() override {
    shutdown();
    if (shm_ && shm_ != MAP_FAILED) munmap(shm_, kShmBytes);
  }

  const BackendInfo& info() const override { return info_; }
  const std::vector<CaseFault>& faults() const override { return faults_; }

  std::size_t max_batch(Shape s) const override {
    // a call's words and its guard zone (twice its outputs) fit the shared buffer
    return std::max<std::size_t>(1, kShmWords / (static_cast<std::size_t>(s.in) + 3 * static_cast<std::size_t>(s.out) + 1));
  }

  bool supported(const Params& p) override {
    const std::string what = "the support query for " + std::string(p.family().name()) + " " + p.label();
    request(kMsgSupported, 0, p, what);
    std::uint32_t st, val;
    std::string text;
    if (!receive(st, val, text, what)) died(what);
    if (st != kStOk) throw BackendError(static_cast<Kind>(std::min<std::uint32_t>(val, 6)), text);
    return val == 1;
  }

  void run(const Params& p, std::size_t n, const std::uint32_t* in, std::uint32_t* out) override {
    faults_.clear();
    const Shape s = p.shape();
    const std::size_t words = static_cast<std::size_t>(std::max(1, s.in + s.out));
    const std::size_t m = std::max<std::size_t>(1, std::min(kCallCases, kCallWords / words));
    for (std::size_t a = 0; a < n; a += m) run_range(p, n, in, out, a, std::min(m, n - a));
  }

 private:
  std::string who() const { return info_.name.empty() ? display_ : info_.name; }

  // Starts a backend process and reads its answer to loading the plugin (its identity).
  BackendInfo spawn() {
    if (stop_requested()) interrupted("loading " + path_);
    int down[2], up[2];
    pipe_pair(down, up);
    std::fflush(nullptr);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) throw BackendError(Kind::load, "fork() failed");
    if (pid == 0) {
      in_child(parent);
      close_other_fds(down[0], up[1]);
      dup2(2, 1);  // a chatty plugin must not write into the runner's report
      child_main(down[0], up[1], shm_, path_, args_);
    }
    ::close(down[0]);
    ::close(up[1]);
    c_.adopt(pid, down[1], up[0]);
    std::uint32_t st, val;
    std::string text;
    const std::string what = "loading " + path_;
    if (!receive(st, val, text, what)) died(what);
    if (st != kStOk) {
      const Kind k = val <= static_cast<std::uint32_t>(Kind::unavailable) ? static_cast<Kind>(val) : Kind::load;
      throw BackendError(k, text);
    }
    return decode_info(text);
  }

  void shutdown() {
    if (c_.pid <= 0) return;
    if (!c_.reaped) send_msg(c_.to, kMsgQuit, 0, "");
    c_.finish(100);
  }

  // A fresh backend process in place of one that crashed (or, bisecting, of a used one).
  void respawn() {
    shutdown();
    (void)spawn();
  }

  void request(std::uint32_t type, std::uint32_t n, const Params& p, const std::string& what) {
    if (c_.reaped) died(what);
    if (!send_msg(c_.to, type, n, std::string(p.family().name()) + "\n" + p.text())) died(what);
  }

  // One message; false when the process ended (c_.status). Throws on silence and on a stop.
  bool receive(std::uint32_t& st, std::uint32_t& val, std::string& text, const std::string& what) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<long long>(timeout_s_ * 1000));
    std::uint32_t h[3];
    if (!read_deadline(h, sizeof h, deadline, what)) return false;
    st = h[0];
    val = h[1];
    text.resize(h[2]);
    return h[2] == 0 || read_deadline(text.data(), h[2], deadline, what);
  }

  bool read_deadline(void* p, std::size_t n, Clock::time_point deadline, const std::string& what) {
    auto* c = static_cast<char*>(p);
    while (n > 0) {
      switch (wait_child(c_, c_.from, POLLIN, deadline)) {
        case Wait::stopped: interrupted(what);
        case Wait::silent:
          c_.kill_group();
          throw BackendError(Kind::timeout, who() + ": no answer within " + fmt_duration(timeout_s_) +
                                                " (m:ss) during " + what + "; the backend process was killed");
        case Wait::exited:  // its pipe is held open by a process it forked
          c_.kill_group();
          return false;
        case Wait::ready: break;
      }
      const ssize_t r = ::read(c_.from, c, n);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        c_.reap_soon();
        return false;
      }
      c += r;
      n -= static_cast<std::size_t>(r);
    }
    return true;
  }

  [[noreturn]] void interrupted(const std::string& what) {
    c_.kill_group();
    throw BackendError(Kind::interrupted, who() + ": interrupted during " + what + "; the backend process was killed");
  }

  [[noreturn]] void died(const std::string& what) {
    c_.kill_group();
    if (stop_requested()) interrupted(what);
    throw BackendError(Kind::crash, who() + ": the backend process " + status_text(c_.status) + " during " + what);
  }

  static std::string call_text(const Params& p, std::size_t n, std::size_t a, std::size_t m) {
    std::string t = "a batch of " + std::to_string(n) + " cases of " + std::string(p.family().name()) + " " + p.label();
    if (m < n) t += " (a call with its cases " + std::to_string(a) + " to " + std::to_string(a + m - 1) + ")";
    return t;
  }

  // Runs cases [a, a + m) of the batch in one call; the leader's wait status if the process
  // died in it (the group is killed). Throws for every other failure.
  std::optional<int> call(const Params& p, std::size_t n, const std::uint32_t* in, std::uint32_t* out, std::size_t a,
                          std::size_t m) {
    const Shape s = p.shape();
    const std::string what = call_text(p, n, a, m);
    auto* buf = static_cast<std::uint32_t*>(shm_);
    const std::size_t in_w = m * static_cast<std::size_t>(s.in), out_w = m * static_cast<std::size_t>(s.out);
    if (in_w + out_w > kShmWords) throw BackendError(Kind::error, "batch too large for the shared buffer");
    pack_cases(in, n, a, m, s.in, s.case_major, buf);
    sent_.assign(buf, buf + in_w);
    std::uint32_t* guard = buf + in_w + out_w;
    const std::size_t guard_w = std::min(2 * out_w + 64, kShmWords - in_w - out_w);
    std::fill(guard, guard + guard_w, kCanary);
    if (c_.reaped || !send_msg(c_.to, kMsgRun, static_cast<std::uint32_t>(m), std::string(p.family().name()) + "\n" + p.text())) {
      c_.kill_group();
      if (stop_requested()) interrupted(what);
      return c_.status;
    }
    std::uint32_t st, val;
    std::string text;
    if (!receive(st, val, text, what)) {
      if (stop_requested()) interrupted(what);
      return c_.status;
    }
    if (st != kStOk) throw BackendError(static_cast<Kind>(std::min<std::uint32_t>(val, 6)), text);
    // §33.6 overruns: the guard zone after the outputs and the inputs are as the runner wrote them
    const auto bad = std::find_if(guard, guard + guard_w, [](std::uint32_t w) { return w != kCanary; });
    if (bad != guard + guard_w)
      throw BackendError(Kind::error, who() + ": wrote past the end of its output buffer (word " +
                                          std::to_string(out_w + static_cast<std::size_t>(bad - guard)) + " of an output buffer of " +
                                          std::to_string(out_w) + " words) during " + what);
    if (!std::equal(sent_.begin(), sent_.end(), buf))
      throw BackendError(Kind::error, who() + ": wrote into its input buffer (read-only) during " + what);
    unpack_cases(buf + in_w, m, n, a, s.out, s.case_major, out);
    return std::nullopt;
  }

  void run_range(const Params& p, std::size_t n, const std::uint32_t* in, std::uint32_t* out, std::size_t a,
                 std::size_t m) {
    const std::optional<int> st = call(p, n, in, out, a, m);
    if (!st) return;
    const std::string what = call_text(p, n, a, m);
    const std::string crash = who() + ": the backend process " + status_text(*st) + " during " + what;
    if (crashes_ >= kMaxCrashes)
      throw BackendError(Kind::crash, crash + " (" + std::to_string(kMaxCrashes) +
                                          " crashing cases already isolated: no more bisection)");
    respawn();
    const std::optional<int> again = call(p, n, in, out, a, m);
    if (!again)
      throw BackendError(Kind::crash, crash + "; the same call runs in a fresh process: the crash depends on earlier calls");
    respawn();
    bisect(p, n, in, out, a, m, *again);
  }

  // §33.6 [a, a + m) crashes a fresh process: halves in fresh processes until one case (or the
  // smallest batch that crashes) is found; at most 2 * ceil(log2 m) processes.
  void bisect(const Params& p, std::size_t n, const std::uint32_t* in, std::uint32_t* out, std::size_t a,
              std::size_t m, int status) {
    if (m == 1) {
      fault(a, 1, status);
      return;
    }
    const std::size_t h = m / 2;
    if (const auto sa = call(p, n, in, out, a, h)) {
      respawn();
      bisect(p, n, in, out, a, h, *sa);
      run_range(p, n, in, out, a + h, m - h);
      return;
    }
    respawn();
    if (const auto sb = call(p, n, in, out, a + h, m - h)) {
      respawn();
      bisect(p, n, in, out, a + h, m - h, *sb);
      return;
    }
    fault(a, m, status);  // neither half crashes alone
  }

  void fault(std::size_t a, std::size_t m, int status) {
    ++crashes_;
    std::string what = "crash: ";
    what += WIFSIGNALED(status) ? signal_name(WTERMSIG(status)) : status_text(status);
    if (m > 1) what += " (in a call of cases " + std::to_string(a) + " to " + std::to_string(a + m - 1) + " together; no half crashes alone)";
    for (std::size_t k = a; k < a + m; ++k) faults_.push_back({k, what});
    std::sort(faults_.begin(), faults_.end(), [](const CaseFault& x, const CaseFault& y) { return x.index < y.index; });
  }

  std::string path_, args_, display_;
  double timeout_s_;
  void* shm_ = nullptr;
  Child c_;
  BackendInfo info_;
  std::vector<std::uint32_t> sent_;
  std::vector<CaseFault> faults_;
  int crashes_ = 0;
};

// ---- pipe backend ------------------------------------------------------------------------------

class PipeBackend final : public Backend {
 public:
  PipeBackend(const std::string& cmd, double timeout_s) : timeout_s_(timeout_s) {
    info_.kind = "pipe";
    info_.location = cmd;
    int in[2], out[2];
    pipe_pair(in, out);
    std::fflush(nullptr);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) throw BackendError(Kind::load, "fork() failed");
    if (pid == 0) {
      in_child(parent);
      dup2(in[0], 0);  // dup2 clears O_CLOEXEC on 0 and 1
      dup2(out[1], 1);
      close_range(3, ~0u, 0);
      pipe_supervisor(cmd.c_str());
    }
    ::close(in[0]);
    ::close(out[1]);
    c_.adopt(pid, in[1], out[0]);
    fcntl(c_.to, F_SETFL, fcntl(c_.to, F_GETFL) | O_NONBLOCK);
    fcntl(c_.from, F_SETFL, fcntl(c_.from, F_GETFL) | O_NONBLOCK);
    progress();
    std::string line;
    try {
      transfer("numref-pipe " + std::to_string(kPipeProtocolVersion) + "\n", "the greeting");
    } catch (const BackendError&) {
      // A program that wrote something and exited before reading the greeting: judge what
      // it wrote (a wrong greeting is a protocol error, not just an exit).
      (void)fill_buffer();
      if (!take_line(line)) throw;
      try {
        (void)parse_pipe_hello(line);
      } catch (const ProtocolError& e) {
        throw BackendError(Kind::protocol, "pipe backend '" + cmd + "': " + e.what());
      }
      throw;
    }
    try {
      next_line(line, "the greeting");
      const PipeHello h = parse_pipe_hello(line);
      info_.name = h.name;
      info_.version = h.version;
      info_.ops = h.ops;
      info_.profiles = h.profiles;
      info_.flags = h.flags;
      info_.counts = h.counts;
      while (true) {
        next_line(line, "the greeting");
        if (parse_pipe_preamble(line, info_.departures)) break;
      }
    } catch (const ProtocolError& e) {
      throw BackendError(Kind::protocol, "pipe backend '" + cmd + "': " + e.what());
    }
    info_.description = "pipe: " + cmd;
  }

  ~PipeBackend() override {
    if (c_.pid <= 0) return;
    if (!c_.reaped) {
      const std::string q = "quit\n";
      (void)::write(c_.to, q.data(), q.size());
    }
    c_.finish(500);
  }

  const BackendInfo& info() const override { return info_; }
  std::size_t max_batch(Shape s) const override {
    // A batch's request is written as one block of lines: keep it below ~4 MiB of text.
    const std::size_t words = static_cast<std::size_t>(s.in + s.out);
    return std::max<std::size_t>(1, std::min<std::size_t>(4096, (std::size_t{1} << 19) / std::max<std::size_t>(words, 1)));
  }

  bool supported(const Params& p) override {
    progress();
    const std::string what = "the support query for " + std::string(p.family().name()) + " " + p.label();
    transfer("supports " + std::string(p.family().name()) + " " + p.pipe_params() + "\n", what);
    std::string line;
    next_line(line, what);
    try {
      return parse_pipe_supports(line);
    } catch (const ProtocolError& e) {
      throw BackendError(Kind::protocol, info_.name + ": " + e.what() + " (" + what + ")");
    }
  }

  void run(const Params& p, std::size_t n, const std::uint32_t* in, std::uint32_t* out) override {
    progress();
    const std::string what =
        "a batch of " + std::to_string(n) + " cases of " + std::string(p.family().name()) + " " + p.label();
    std::string req = "run " + std::string(p.family().name()) + " " + std::to_string(n) + " " + p.pipe_params() + "\n";
    std::string line;
    const Shape sh = p.shape();
    for (std::size_t i = 0; i < n; ++i) {
      pipe_case(p, case_view(in, n, i, sh, sh.in), line);
      req += line;
      req += '\n';
    }
    PipeBatchParser parser(p, n, info_.reports(p), out);
    try {
      transfer(req, what, &parser);
      while (true) {
        next_line(line, what);
        if (parser.feed(line)) break;
      }
    } catch (const ProtocolError& e) {
      throw BackendError(Kind::protocol, info_.name + ": " + e.what() + " (" + what + ")");
    } catch (const BackendError& e) {
      throw BackendError(e.kind, info_.name + ": " + e.what() + " (" + what + ")");
    }
  }

 private:
  std::string who() const { return info_.name.empty() ? info_.location : info_.name; }
  // §33.6 progress of a pipe backend: any byte it reads or writes.
  void progress() { silent_after_ = Clock::now() + std::chrono::milliseconds(static_cast<long long>(timeout_s_ * 1000)); }

  // Writes `data` while reading whatever the backend writes meanwhile (so that neither
  // side blocks on a full pipe); complete lines read are fed to `parser` if given, else
  // kept for next_line().
  void transfer(const std::string& data, const std::string& what, PipeBatchParser* parser = nullptr) {
    std::size_t off = 0;
    while (off < data.size()) {
      if (stop_requested()) interrupted(what);
      if (Clock::now() >= silent_after_) timeout(what);
      pollfd fds[2] = {{c_.to, POLLOUT, 0}, {c_.from, POLLIN, 0}};
      const int r = poll(fds, 2, 50);
      if (r < 0 && errno != EINTR) died(what);
      if (r <= 0) {
        if (c_.exited()) died(what);
        continue;
      }
      if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
        if (!fill_buffer()) died(what);
        if (parser) {
          std::string line;
          while (take_line(line))
            if (parser->feed(line)) throw ProtocolError("the backend sent 'end' before reading the whole batch");
        }
      }
      if (fds[0].revents & (POLLERR | POLLHUP)) died(what);
      if (fds[0].revents & POLLOUT) {
        const ssize_t w = ::write(c_.to, data.data() + off, data.size() - off);
        if (w < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (w <= 0) died(what);
        off += static_cast<std::size_t>(w);
        progress();
      }
    }
  }

  bool fill_buffer() {
    char tmp[65536];
    while (true) {
      const ssize_t r = ::read(c_.from, tmp, sizeof tmp);
      if (r > 0) {
        buf_.append(tmp, static_cast<std::size_t>(r));
        progress();
        if (r < static_cast<ssize_t>(sizeof tmp)) return true;
        continue;
      }
      if (r < 0 && (errno == EAGAIN || errno == EINTR)) return true;
      return false;  // EOF or error
    }
  }

  bool take_line(std::string& line) {
    const auto nl = buf_.find('\n', scan_);
    if (nl == std::string::npos) {
      scan_ = buf_.size();
      if (buf_.size() > (1u << 16)) throw ProtocolError("a line longer than 65536 characters");
      return false;
    }
    line.assign(buf_, 0, nl);
    buf_.erase(0, nl + 1);
    scan_ = 0;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  }

  void next_line(std::string& line, const std::string& what) {
    while (!take_line(line)) {
      switch (wait_child(c_, c_.from, POLLIN, silent_after_)) {
        case Wait::stopped: interrupted(what);
        case Wait::silent: timeout(what);
        case Wait::exited: died(what);
        case Wait::ready: break;
      }
      if (!fill_buffer()) died(what);
    }
  }

  [[noreturn]] void timeout(const std::string& what) {
    c_.kill_group();
    throw BackendError(Kind::timeout, who() + ": no answer within " + fmt_duration(timeout_s_) + " (m:ss) during " +
                                          what + "; the backend process was killed");
  }

  [[noreturn]] void interrupted(const std::string& what) {
    c_.kill_group();
    throw BackendError(Kind::interrupted, who() + ": interrupted during " + what + "; the backend process was killed");
  }

  [[noreturn]] void died(const std::string& what) {
    c_.reap_soon();  // the process may still be running with its stdout closed: stopped
    if (stop_requested()) interrupted(what);
    throw BackendError(Kind::crash, who() + ": the pipe backend " + status_text(c_.status, true) + " during " + what);
  }

  double timeout_s_;
  Child c_;
  Clock::time_point silent_after_;
  std::string buf_;
  std::size_t scan_ = 0;
  BackendInfo info_;
};

std::string lib_name(const std::string& name) {
  std::string n = name;
  std::replace(n.begin(), n.end(), '-', '_');
  return "libnumref_backend_" + n + ".so";
}

}  // namespace

void request_stop() noexcept {
  if (g_stop.exchange(true)) _exit(130);  // §33.7 a second request: at once (the groups were killed)
  kill_groups();
}
bool stop_requested() noexcept { return g_stop.load(); }
void clear_stop() noexcept { g_stop.store(false); }

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
    if (s.target.empty()) throw std::invalid_argument("--backend pipe: needs a command, e.g. pipe:'python3 backend.py'");
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
    for (const auto& n : builtin_backends()) { if (!known.empty()) known += ", "; known += n; }
    throw std::invalid_argument("unknown backend '" + path + "' (built-in backends in " +
                                (dir.empty() ? std::string("<none>") : dir) + ": " +
                                (known.empty() ? std::string("none") : known) + "; or give PATH.so or pipe:COMMAND)");
  }
  s.target = lib;
  return s;
}

std::unique_ptr<Backend> open_plugin_in_process(const std::string& path, const std::string& args) {
  return std::make_unique<PluginBackend>(path, args);
}

std::unique_ptr<Backend> open_backend(const BackendSpec& spec, const OpenOptions& opt) {
  if (spec.kind == BackendSpec::Kind::pipe) return std::make_unique<PipeBackend>(spec.target, opt.timeout_s);
  if (opt.isolate) return std::make_unique<IsolatedBackend>(spec.target, spec.args, spec.display, opt.timeout_s);
  return open_plugin_in_process(spec.target, spec.args);
}

}  // namespace numref::conform
