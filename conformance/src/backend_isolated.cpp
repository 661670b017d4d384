// numref conformance — an isolated plugin: the C ABI plugin loaded in a child process, which a
// crash or a hang of the plugin does not take down; the cases that crash it are found by
// bisection.                                                                   spec §34.6
#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <optional>

#include "backend_common.hpp"
#include "numref/conform/backend.hpp"

namespace numref::conform {

namespace {

using Kind = BackendError::Kind;
using proc::Clock;
using proc::read_all;
using proc::signal_name;
using proc::status_text;
using proc::Wait;
using proc::write_all;

// ---- isolated plugin: a child process that loads the plugin ------------------------------------
//
// Messages (both directions): u32 type-or-status, u32 value, u32 text length, text.
// Case words travel through a shared anonymous mapping created before fork(): a call of m
// cases has its inputs at word 0, its outputs after them (the batch layout of Params::shape()
// for m cases) and then a guard zone of canary words (§34.6 overruns).

enum : std::uint32_t { kMsgSupported = 1, kMsgRun = 2, kMsgQuit = 3 };
enum : std::uint32_t { kStOk = 0, kStError = 1 };
constexpr std::size_t kShmBytes = std::size_t{24} << 20;
constexpr std::size_t kShmWords = kShmBytes / sizeof(std::uint32_t);
// §34.6 progress: a batch is handed to the plugin in calls of at most this many cases (and
// about 2^18 words); each answered call is progress, --timeout bounds the silence.
constexpr std::size_t kCallCases = 1024;
constexpr std::size_t kCallWords = std::size_t{1} << 18;
// §34.6 crash bisection: the crashing cases one backend instance isolates before a crash ends
// its run, as before.
constexpr int kMaxCrashes = 8;
constexpr std::uint32_t kCanary = 0xDEADBEEFu;

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
  s += "abi_minor\t" + std::to_string(i.abi_minor) + "\n";
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
    if (k == "name")
      i.name = v;
    else if (k == "version")
      i.version = v;
    else if (k == "description")
      i.description = v;
    else if (k == "ops")
      i.ops = word_list(v.c_str());
    else if (k == "profiles")
      i.profiles = word_list(v.c_str());
    else if (k == "flags")
      i.flags = v == "1";
    else if (k == "counts")
      i.counts = v == "1";
    else if (k == "abi_minor")
      i.abi_minor = static_cast<std::uint32_t>(std::stoul(v));
    else if (k == "departure")
      i.departures.push_back(parse_departure(v));
  }
  return i;
}

[[noreturn]] void child_main(int rd, int wr, void* shm, const std::string& path, const std::string& args) {
  std::unique_ptr<Backend> b;
  try {
    b = open_plugin_in_process(path, args);
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
    return std::max<std::size_t>(
        1, kShmWords / (static_cast<std::size_t>(s.in) + 3 * static_cast<std::size_t>(s.out) + 1));
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
    c_.start([this](int rd, int wr) {
      proc::close_other_fds(rd, wr);
      dup2(2, 1);  // a chatty plugin must not write into the runner's report
      child_main(rd, wr, shm_, path_, args_);
    });
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
      switch (proc::wait_child(c_, c_.from, POLLIN, deadline)) {
        case Wait::stopped: interrupted(what);
        case Wait::silent: throw_timeout(c_, who(), timeout_s_, what);
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

  [[noreturn]] void interrupted(const std::string& what) { throw_interrupted(c_, who(), what); }

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
    if (c_.reaped ||
        !send_msg(c_.to, kMsgRun, static_cast<std::uint32_t>(m), std::string(p.family().name()) + "\n" + p.text())) {
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
    // §34.6 overruns: the guard zone after the outputs and the inputs are as the runner wrote them
    const auto bad = std::find_if(guard, guard + guard_w, [](std::uint32_t w) { return w != kCanary; });
    if (bad != guard + guard_w)
      throw BackendError(Kind::error, who() + ": wrote past the end of its output buffer (word " +
                                          std::to_string(out_w + static_cast<std::size_t>(bad - guard)) +
                                          " of an output buffer of " + std::to_string(out_w) + " words) during " +
                                          what);
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
      throw BackendError(Kind::crash,
                         crash + "; the same call runs in a fresh process: the crash depends on earlier calls");
    respawn();
    bisect(p, n, in, out, a, m, *again);
  }

  // §34.6 [a, a + m) crashes a fresh process: halves in fresh processes until one case (or the
  // smallest batch that crashes) is found; at most 2 * ceil(log2 m) processes.
  void bisect(const Params& p, std::size_t n, const std::uint32_t* in, std::uint32_t* out, std::size_t a, std::size_t m,
              int status) {
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
    if (m > 1)
      what += " (in a call of cases " + std::to_string(a) + " to " + std::to_string(a + m - 1) +
              " together; no half crashes alone)";
    for (std::size_t k = a; k < a + m; ++k) faults_.push_back({k, what});
    std::sort(faults_.begin(), faults_.end(), [](const CaseFault& x, const CaseFault& y) { return x.index < y.index; });
  }

  std::string path_, args_, display_;
  double timeout_s_;
  void* shm_ = nullptr;
  proc::Child c_;
  BackendInfo info_;
  std::vector<std::uint32_t> sent_;
  std::vector<CaseFault> faults_;
  int crashes_ = 0;
};

}  // namespace

std::unique_ptr<Backend> open_isolated_plugin(const std::string& path, const std::string& args,
                                              const std::string& display, double timeout_s) {
  return std::make_unique<IsolatedBackend>(path, args, display, timeout_s);
}

}  // namespace numref::conform
