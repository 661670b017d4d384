// numref conformance — a pipe backend: a program that speaks the pipe protocol on its stdin and
// stdout, run under /bin/sh -c in a child process.                            spec §33, §34.6
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "backend_common.hpp"
#include "numref/conform/backend.hpp"
#include "numref/conform/protocol.hpp"

namespace numref::conform {

namespace {

using Kind = BackendError::Kind;
using proc::Clock;
using proc::Wait;

class PipeBackend final : public Backend {
 public:
  PipeBackend(const std::string& cmd, double timeout_s) : timeout_s_(timeout_s) {
    info_.kind = "pipe";
    info_.location = cmd;
    c_.start([&cmd](int rd, int wr) {
      dup2(rd, 0);  // dup2 clears O_CLOEXEC on 0 and 1
      dup2(wr, 1);
      close_range(3, ~0u, 0);
      proc::pipe_supervisor(cmd.c_str());
    });
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
      // §33.2 declared, else what its op families prove (§32.2)
      info_.abi_minor = h.abi_minor ? *h.abi_minor : abi_minor_of_ops(h.ops);
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
    return std::max<std::size_t>(1,
                                 std::min<std::size_t>(4096, (std::size_t{1} << 19) / std::max<std::size_t>(words, 1)));
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
  // §34.6 progress of a pipe backend: any byte it reads or writes.
  void progress() {
    silent_after_ = Clock::now() + std::chrono::milliseconds(static_cast<long long>(timeout_s_ * 1000));
  }

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
      switch (proc::wait_child(c_, c_.from, POLLIN, silent_after_)) {
        case Wait::stopped: interrupted(what);
        case Wait::silent: timeout(what);
        case Wait::exited: died(what);
        case Wait::ready: break;
      }
      if (!fill_buffer()) died(what);
    }
  }

  [[noreturn]] void timeout(const std::string& what) { throw_timeout(c_, who(), timeout_s_, what); }
  [[noreturn]] void interrupted(const std::string& what) { throw_interrupted(c_, who(), what); }

  [[noreturn]] void died(const std::string& what) {
    c_.reap_soon();  // the process may still be running with its stdout closed: stopped
    if (stop_requested()) interrupted(what);
    throw BackendError(Kind::crash,
                       who() + ": the pipe backend " + proc::status_text(c_.status, true) + " during " + what);
  }

  double timeout_s_;
  proc::Child c_;
  Clock::time_point silent_after_;
  std::string buf_;
  std::size_t scan_ = 0;
  BackendInfo info_;
};

}  // namespace

std::unique_ptr<Backend> open_pipe_backend(const std::string& cmd, double timeout_s) {
  return std::make_unique<PipeBackend>(cmd, timeout_s);
}

}  // namespace numref::conform
