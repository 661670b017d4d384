// numref conformance — loading backends: C ABI plugins in process or isolated in a child
// process, and pipe-protocol programs.                       spec §31, §32, §33.6
#include "numref/conform/backend.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

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

std::string status_text(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = strsignal(sig);
    return "killed by signal " + std::to_string(sig) + " (" + (name ? name : "?") + ")";
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "stopped";
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

// ---- fd helpers ------------------------------------------------------------------------------

using Clock = std::chrono::steady_clock;

// Waits until fd is readable/writable or the deadline passes; false on timeout.
bool wait_fd(int fd, short events, Clock::time_point deadline) {
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int r = poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return true;  // let the read/write report the error
  }
}

// ---- isolated plugin: a child process that loads the plugin ------------------------------------
//
// Messages (both directions): u32 type-or-status, u32 value, u32 text length, text.
// Case words travel through a shared anonymous mapping created before fork().

enum : std::uint32_t { kMsgSupported = 1, kMsgRun = 2, kMsgQuit = 3 };
enum : std::uint32_t { kStOk = 0, kStError = 1 };
constexpr std::size_t kShmBytes = std::size_t{24} << 20;

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

class IsolatedBackend final : public Backend {
 public:
  IsolatedBackend(const std::string& path, const std::string& args, double timeout_s) : timeout_s_(timeout_s) {
    shm_ = mmap(nullptr, kShmBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shm_ == MAP_FAILED) throw BackendError(Kind::load, "mmap of the shared batch buffer failed");
    int down[2], up[2];
    if (pipe(down) != 0 || pipe(up) != 0) throw BackendError(Kind::load, "pipe() failed");
    std::fflush(nullptr);
    pid_ = fork();
    if (pid_ < 0) throw BackendError(Kind::load, "fork() failed");
    if (pid_ == 0) {
      ::close(down[1]);
      ::close(up[0]);
      dup2(2, 1);  // a chatty plugin must not write into the runner's report
      signal(SIGPIPE, SIG_DFL);
      signal(SIGINT, SIG_IGN);  // the runner decides when to stop
      child_main(down[0], up[1], shm_, path, args);
    }
    ::close(down[0]);
    ::close(up[1]);
    to_ = down[1];
    from_ = up[0];
    std::uint32_t st, val;
    std::string text;
    receive(st, val, text, "loading " + path);
    if (st != kStOk) {
      const Kind k = val <= static_cast<std::uint32_t>(Kind::unavailable) ? static_cast<Kind>(val) : Kind::load;
      throw BackendError(k, text);
    }
    info_ = decode_info(text);
    info_.kind = "plugin";
    info_.location = path;
  }

  ~IsolatedBackend() override {
    if (pid_ > 0) {
      if (alive_) send_msg(to_, kMsgQuit, 0, "");
      ::close(to_);
      ::close(from_);
      // give it a moment, then make sure it is gone
      for (int i = 0; i < 50 && alive_; ++i) {
        int status;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
          alive_ = false;
          break;
        }
        usleep(2000);
      }
      if (alive_) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
      }
    }
    if (shm_ && shm_ != MAP_FAILED) munmap(shm_, kShmBytes);
  }

  const BackendInfo& info() const override { return info_; }

  std::size_t max_batch(Shape s) const override {
    return std::max<std::size_t>(1, kShmBytes / (static_cast<std::size_t>(s.in + s.out) * sizeof(std::uint32_t)));
  }

  bool supported(const Params& p) override {
    request(kMsgSupported, 0, p);
    std::uint32_t st, val;
    std::string text;
    receive(st, val, text, "the support query for " + std::string(p.family().name()) + " " + p.label());
    if (st != kStOk) throw BackendError(static_cast<Kind>(std::min<std::uint32_t>(val, 6)), text);
    return val == 1;
  }

  void run(const Params& p, std::size_t n, const std::uint32_t* in, std::uint32_t* out) override {
    const Shape s = p.shape();
    if (n > max_batch(s)) throw BackendError(Kind::error, "batch too large for the shared buffer");
    auto* buf = static_cast<std::uint32_t*>(shm_);
    std::memcpy(buf, in, n * static_cast<std::size_t>(s.in) * sizeof(std::uint32_t));
    request(kMsgRun, static_cast<std::uint32_t>(n), p);
    std::uint32_t st, val;
    std::string text;
    receive(st, val, text,
            "a batch of " + std::to_string(n) + " cases of " + std::string(p.family().name()) + " " + p.label());
    if (st != kStOk) throw BackendError(static_cast<Kind>(std::min<std::uint32_t>(val, 6)), text);
    std::memcpy(out, buf + n * static_cast<std::size_t>(s.in), n * static_cast<std::size_t>(s.out) * sizeof(std::uint32_t));
  }

 private:
  void request(std::uint32_t type, std::uint32_t n, const Params& p) {
    if (!alive_) throw BackendError(Kind::crash, "the backend process is gone");
    if (!send_msg(to_, type, n, std::string(p.family().name()) + "\n" + p.text())) died("sending a request");
  }

  void receive(std::uint32_t& st, std::uint32_t& val, std::string& text, const std::string& what) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<long long>(timeout_s_ * 1000));
    std::uint32_t h[3];
    if (!read_deadline(h, sizeof h, deadline, what)) died(what);
    st = h[0];
    val = h[1];
    text.resize(h[2]);
    if (h[2] && !read_deadline(text.data(), h[2], deadline, what)) died(what);
  }

  bool read_deadline(void* p, std::size_t n, Clock::time_point deadline, const std::string& what) {
    auto* c = static_cast<char*>(p);
    while (n > 0) {
      if (!wait_fd(from_, POLLIN, deadline)) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
        alive_ = false;
        throw BackendError(Kind::timeout, info_.name + ": no answer within " + fmt_duration(timeout_s_) +
                                              " (m:ss) during " + what + "; the backend process was killed");
      }
      const ssize_t r = ::read(from_, c, n);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      c += r;
      n -= static_cast<std::size_t>(r);
    }
    return true;
  }

  [[noreturn]] void died(const std::string& what) {
    int status = 0;
    waitpid(pid_, &status, 0);
    alive_ = false;
    throw BackendError(Kind::crash, (info_.name.empty() ? std::string("backend") : info_.name) +
                                        ": the backend process " + status_text(status) + " during " + what);
  }

  double timeout_s_;
  void* shm_ = nullptr;
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  bool alive_ = true;
  BackendInfo info_;
};

// ---- pipe backend ------------------------------------------------------------------------------

class PipeBackend final : public Backend {
 public:
  PipeBackend(const std::string& cmd, double timeout_s) : timeout_s_(timeout_s) {
    info_.kind = "pipe";
    info_.location = cmd;
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) throw BackendError(Kind::load, "pipe() failed");
    std::fflush(nullptr);
    pid_ = fork();
    if (pid_ < 0) throw BackendError(Kind::load, "fork() failed");
    if (pid_ == 0) {
      setpgid(0, 0);
      dup2(in[0], 0);
      dup2(out[1], 1);
      ::close(in[0]);
      ::close(in[1]);
      ::close(out[0]);
      ::close(out[1]);
      signal(SIGPIPE, SIG_DFL);
      signal(SIGINT, SIG_IGN);
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    setpgid(pid_, pid_);
    ::close(in[0]);
    ::close(out[1]);
    to_ = in[1];
    from_ = out[0];
    fcntl(to_, F_SETFL, fcntl(to_, F_GETFL) | O_NONBLOCK);
    fcntl(from_, F_SETFL, fcntl(from_, F_GETFL) | O_NONBLOCK);
    const auto deadline = Clock::now() + ms(timeout_s_);
    std::string line;
    try {
      transfer("numref-pipe " + std::to_string(kPipeProtocolVersion) + "\n", deadline, "the greeting");
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
      next_line(line, deadline, "the greeting");
      const PipeHello h = parse_pipe_hello(line);
      info_.name = h.name;
      info_.version = h.version;
      info_.ops = h.ops;
      info_.profiles = h.profiles;
      info_.flags = h.flags;
      info_.counts = h.counts;
      while (true) {
        next_line(line, deadline, "the greeting");
        if (parse_pipe_preamble(line, info_.departures)) break;
      }
    } catch (const ProtocolError& e) {
      throw BackendError(Kind::protocol, "pipe backend '" + cmd + "': " + e.what());
    }
    info_.description = "pipe: " + cmd;
  }

  ~PipeBackend() override {
    if (pid_ > 0) {
      if (alive_) {
        const std::string q = "quit\n";
        (void)::write(to_, q.data(), q.size());
      }
      ::close(to_);
      ::close(from_);
      for (int i = 0; i < 100 && alive_; ++i) {
        if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
          alive_ = false;
          break;
        }
        usleep(5000);
      }
      if (alive_) {
        kill(-pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
      }
    }
  }

  const BackendInfo& info() const override { return info_; }
  std::size_t max_batch(Shape s) const override {
    // A batch's request is written as one block of lines: keep it below ~4 MiB of text.
    const std::size_t words = static_cast<std::size_t>(s.in + s.out);
    return std::max<std::size_t>(1, std::min<std::size_t>(4096, (std::size_t{1} << 19) / std::max<std::size_t>(words, 1)));
  }

  bool supported(const Params& p) override {
    const auto deadline = Clock::now() + ms(timeout_s_);
    const std::string what = "the support query for " + std::string(p.family().name()) + " " + p.label();
    transfer("supports " + std::string(p.family().name()) + " " + p.pipe_params() + "\n", deadline, what);
    std::string line;
    next_line(line, deadline, what);
    try {
      return parse_pipe_supports(line);
    } catch (const ProtocolError& e) {
      throw BackendError(Kind::protocol, info_.name + ": " + e.what() + " (" + what + ")");
    }
  }

  void run(const Params& p, std::size_t n, const std::uint32_t* in, std::uint32_t* out) override {
    const auto deadline = Clock::now() + ms(timeout_s_);
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
      transfer(req, deadline, what, &parser);
      while (true) {
        next_line(line, deadline, what);
        if (parser.feed(line)) break;
      }
    } catch (const ProtocolError& e) {
      throw BackendError(Kind::protocol, info_.name + ": " + e.what() + " (" + what + ")");
    } catch (const BackendError& e) {
      throw BackendError(e.kind, info_.name + ": " + e.what() + " (" + what + ")");
    }
  }

 private:
  static std::chrono::milliseconds ms(double s) { return std::chrono::milliseconds(static_cast<long long>(s * 1000)); }

  // Writes `data` while reading whatever the backend writes meanwhile (so that neither
  // side blocks on a full pipe); complete lines read are fed to `parser` if given, else
  // kept for next_line().
  void transfer(const std::string& data, Clock::time_point deadline, const std::string& what,
                PipeBatchParser* parser = nullptr) {
    std::size_t off = 0;
    while (off < data.size()) {
      pollfd fds[2] = {{to_, POLLOUT, 0}, {from_, POLLIN, 0}};
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) timeout(what);
      const int r = poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000)));
      if (r < 0 && errno != EINTR) died(what);
      if (r <= 0) continue;
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
        const ssize_t w = ::write(to_, data.data() + off, data.size() - off);
        if (w < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (w <= 0) died(what);
        off += static_cast<std::size_t>(w);
      }
    }
  }

  bool fill_buffer() {
    char tmp[65536];
    while (true) {
      const ssize_t r = ::read(from_, tmp, sizeof tmp);
      if (r > 0) {
        buf_.append(tmp, static_cast<std::size_t>(r));
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

  void next_line(std::string& line, Clock::time_point deadline, const std::string& what) {
    while (!take_line(line)) {
      if (!wait_fd(from_, POLLIN, deadline)) timeout(what);
      if (!fill_buffer()) died(what);
    }
  }

  [[noreturn]] void timeout(const std::string& what) {
    kill(-pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    alive_ = false;
    throw BackendError(Kind::timeout, (info_.name.empty() ? info_.location : info_.name) + ": no answer within " +
                                          fmt_duration(timeout_s_) + " (m:ss) during " + what +
                                          "; the backend process was killed");
  }

  [[noreturn]] void died(const std::string& what) {
    int status = 0;
    // the process may still be running with its stdout closed: stop it
    if (waitpid(pid_, &status, WNOHANG) == 0) {
      usleep(20000);
      if (waitpid(pid_, &status, WNOHANG) == 0) {
        kill(-pid_, SIGKILL);
        waitpid(pid_, &status, 0);
      }
    }
    alive_ = false;
    throw BackendError(Kind::crash, (info_.name.empty() ? info_.location : info_.name) + ": the pipe backend " +
                                        status_text(status) + " during " + what);
  }

  double timeout_s_;
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  bool alive_ = true;
  std::string buf_;
  std::size_t scan_ = 0;
  BackendInfo info_;
};

std::string exe_dir() {
  std::error_code ec;
  const auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.parent_path().string();
}

std::string lib_name(const std::string& name) {
  std::string n = name;
  std::replace(n.begin(), n.end(), '-', '_');
  return "libnumref_backend_" + n + ".so";
}

}  // namespace

std::string backend_dir() {
  if (const char* e = std::getenv("NUMREF_BACKEND_DIR"); e && *e) return e;
  const std::string ed = exe_dir();
  for (const std::string& d : {ed + "/backends", ed + "/../backends"})
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
  if (opt.isolate) return std::make_unique<IsolatedBackend>(spec.target, spec.args, opt.timeout_s);
  return open_plugin_in_process(spec.target, spec.args);
}

}  // namespace numref::conform
