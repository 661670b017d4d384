// numref conformance — backend processes: process groups, stop requests, spawning, waiting,
// killing.                                                                     spec §34.6
#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "numref/conform/backend.hpp"

namespace numref::conform {

namespace {

// ---- backend processes: process groups, stop requests (§34.6) --------------------------------

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

// Reads or writes exactly n bytes with `op` (::read or ::write), EINTR retried.
template <class Byte, class Op>
bool transfer_all(int fd, Byte* c, std::size_t n, Op op) {
  while (n > 0) {
    const ssize_t r = op(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

}  // namespace

void request_stop() noexcept {
  if (g_stop.exchange(true)) _exit(130);  // §34.7 a second request: at once (the groups were killed)
  kill_groups();
}
bool stop_requested() noexcept { return g_stop.load(); }
void clear_stop() noexcept { g_stop.store(false); }

namespace proc {

std::string signal_name(int sig) {
  const char* a = sigabbrev_np(sig);
  return a ? "SIG" + std::string(a) : "signal " + std::to_string(sig);
}

std::string status_text(int status, bool via_shell) {
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

bool write_all(int fd, const void* p, std::size_t n) {
  return transfer_all(fd, static_cast<const char*>(p), n, ::write);
}
bool read_all(int fd, void* p, std::size_t n) { return transfer_all(fd, static_cast<char*>(p), n, ::read); }

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
  while (waitpid(sh, &st, 0) < 0 && errno == EINTR) {}
  if (WIFSIGNALED(st)) {
    signal(WTERMSIG(st), SIG_DFL);
    kill(getpid(), WTERMSIG(st));
  }
  _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 127);
}

void Child::start(const std::function<void(int, int)>& child_side) {
  int down[2], up[2];
  pipe_pair(down, up);
  std::fflush(nullptr);
  const pid_t parent = getpid();
  const pid_t p = fork();
  if (p < 0) throw BackendError(BackendError::Kind::load, "fork() failed");
  if (p == 0) {
    in_child(parent);
    child_side(down[0], up[1]);
    _exit(127);  // child_side does not return
  }
  ::close(down[0]);
  ::close(up[1]);
  adopt(p, down[1], up[0]);
}

void Child::adopt(pid_t p, int to_fd, int from_fd) {
  pid = p;
  setpgid(p, p);  // also in the child: whichever runs first
  track_group(p);
  to = to_fd;
  from = from_fd;
  reaped = false;
  status = 0;
}

bool Child::exited() {
  if (!reaped && pid > 0 && waitpid(pid, &status, WNOHANG) == pid) reaped = true;
  return reaped;
}

void Child::kill_group() {
  if (pid <= 0) return;
  kill(-pid, SIGKILL);
  untrack_group(pid);
  if (!reaped) waitpid(pid, &status, 0);
  reaped = true;
}

void Child::reap_soon() {
  for (int i = 0; i < 100 && !exited(); ++i) usleep(2000);
  kill_group();
}

void Child::close_fds() {
  if (to >= 0) ::close(to);
  if (from >= 0) ::close(from);
  to = from = -1;
}

void Child::finish(int ms) {
  close_fds();
  for (int i = 0; i < ms / 2 && !exited(); ++i) usleep(2000);
  kill_group();
  pid = -1;
}

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

}  // namespace proc

}  // namespace numref::conform
