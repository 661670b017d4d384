// Backend faults as a user meets them (spec §34.6, §34.7): `numref conform` run as a process
// against the fault backends fault_plugin.c and fault_pipe.c; the tests send the signals
// themselves and check that no backend process outlives the run.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("numref-faults-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<pid_t> pids_in(const fs::path& p) {
  std::vector<pid_t> out;
  std::ifstream f(p);
  long v;
  while (f >> v) out.push_back(static_cast<pid_t>(v));
  return out;
}

// Gone: no such process, or a zombie waiting for whoever adopted it.
bool gone(pid_t pid) {
  if (kill(pid, 0) != 0) return errno == ESRCH;
  const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
}
bool all_gone(const std::vector<pid_t>& pids, std::chrono::seconds within) {
  const auto end = Clock::now() + within;
  while (true) {
    bool ok = true;
    for (pid_t p : pids) ok = ok && gone(p);
    if (ok) return true;
    if (Clock::now() > end) return false;
    std::this_thread::sleep_for(50ms);
  }
}

// `numref conform ... --backend B ARGS`, stdout and stderr to a file.
struct Runner {
  pid_t pid = -1;
  fs::path log;
  Runner(const std::string& backend, std::vector<std::string> args, const fs::path& dir) : log(dir / "out.txt") {
    std::vector<std::string> argv = {NUMREF_CLI, "conform",       "--no-progress", "--vectors", "none",
                                     "--ops",    "cast:f32:bf16", "--profile",     "ocp",       "--level",
                                     "0",        "--backend",     backend};
    argv.insert(argv.end(), args.begin(), args.end());
    pid = fork();
    if (pid == 0) {
      FILE* f = std::fopen(log.c_str(), "w");
      if (!f) _exit(99);
      dup2(fileno(f), 1);
      dup2(fileno(f), 2);
      setenv("NUMREF_BACKEND_DIR", NUMREF_BACKEND_DIR, 1);
      // The fault backends crash on purpose and the tests check that the process dies by its
      // signal. In the sanitizer build AddressSanitizer would catch SIGSEGV/SIGBUS/SIGFPE in the
      // runner's isolated child and in the pipe program, print a report and exit 1 instead; its
      // signal handlers are turned off here (its other checks stay on). No effect elsewhere.
      {
        const char* had = std::getenv("ASAN_OPTIONS");
        std::string o = had && *had ? std::string(had) + ":" : std::string();
        o += "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0";
        setenv("ASAN_OPTIONS", o.c_str(), 1);
      }
      std::vector<char*> a;
      for (auto& s : argv) a.push_back(s.data());
      a.push_back(nullptr);
      execv(a[0], a.data());
      _exit(98);
    }
  }
  // The exit status (128 + N when killed by signal N), -1 if still running after `limit`.
  int wait(std::chrono::seconds limit) {
    const auto end = Clock::now() + limit;
    int st = 0;
    while (waitpid(pid, &st, WNOHANG) == 0) {
      if (Clock::now() > end) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        return -1;
      }
      std::this_thread::sleep_for(20ms);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }
  std::string out() const { return slurp(log); }
};

std::string plugin(const std::string& mode, const fs::path& pidfile = {}) {
  return std::string(NUMREF_FAULT_SO) + "?" + mode + (pidfile.empty() ? "" : ",pidfile=" + pidfile.string());
}
std::string pipe(const std::string& mode, const fs::path& pidfile) {
  return std::string("pipe:") + NUMREF_FAULT_PIPE + " " + mode + " " + pidfile.string();
}

// Waits until the pid file names `n` processes (the backend reached its fault).
std::vector<pid_t> wait_pids(const fs::path& f, std::size_t n) {
  const auto end = Clock::now() + 30s;
  while (pids_in(f).size() < n && Clock::now() < end) std::this_thread::sleep_for(20ms);
  return pids_in(f);
}

// The number before " passed" in the last summary line.
long passed(const std::string& out) {
  const auto at = out.rfind(" passed, ");
  if (at == std::string::npos) return -1;
  const auto start = out.rfind('\n', at);
  return std::atol(out.c_str() + (start == std::string::npos ? 0 : start + 1));
}

}  // namespace

// §34.6 item: SIGINT during a batch kills the backend at once (not after --timeout) and the
// run exits 130 (§34.7); the isolated process does not survive.
TEST(Faults, SigintStopsAHungPluginAtOnce) {
  const fs::path d = temp_dir("sigint");
  Runner r(plugin("hang", d / "pids"), {"--timeout", "60", "--jobs", "1"}, d);
  const auto pids = wait_pids(d / "pids", 1);
  ASSERT_EQ(pids.size(), 1u) << r.out();
  const auto t0 = Clock::now();
  kill(r.pid, SIGINT);
  EXPECT_EQ(r.wait(20s), 130) << r.out();
  EXPECT_LT(Clock::now() - t0, 20s);  // well before the 60 s timeout
  EXPECT_TRUE(all_gone(pids, 5s));
  EXPECT_EQ(r.out().find("no answer within"), std::string::npos) << r.out();
  fs::remove_all(d);
}

// §33.1 on a stop the pipe backend's process group is killed.
TEST(Faults, SigtermStopsAHungPipeAtOnce) {
  const fs::path d = temp_dir("sigterm");
  Runner r(pipe("hang", d / "pids"), {"--timeout", "60", "--jobs", "1"}, d);
  const auto pids = wait_pids(d / "pids", 1);
  ASSERT_EQ(pids.size(), 1u) << r.out();
  std::this_thread::sleep_for(300ms);  // into the batch
  kill(r.pid, SIGTERM);
  EXPECT_EQ(r.wait(20s), 130) << r.out();
  EXPECT_TRUE(all_gone(pids, 5s));
  fs::remove_all(d);
}

// A plugin hung inside the runner's own process (--no-isolate) cannot be killed: the second
// Ctrl-C ends the runner at once.
TEST(Faults, SecondSigintEndsAnInProcessHang) {
  const fs::path d = temp_dir("sigint2");
  Runner r(plugin("hang", d / "pids"), {"--timeout", "60", "--jobs", "1", "--no-isolate"}, d);
  ASSERT_EQ(wait_pids(d / "pids", 1).size(), 1u) << r.out();
  kill(r.pid, SIGINT);
  std::this_thread::sleep_for(500ms);
  kill(r.pid, SIGINT);
  EXPECT_EQ(r.wait(20s), 130) << r.out();
  fs::remove_all(d);
}

// kill -9 of the runner: its isolated plugin processes and pipe backends die with it. §33.1 a pipe
// backend runs in its own process group, which is killed when the runner dies.
TEST(Faults, NoOrphansAfterKill9) {
  for (const bool use_pipe : {false, true}) {
    const fs::path d = temp_dir("kill9");
    Runner r(use_pipe ? pipe("hang", d / "pids") : plugin("hang", d / "pids"), {"--timeout", "60", "--jobs", "2"}, d);
    const auto pids = wait_pids(d / "pids", use_pipe ? 2 : 1);
    ASSERT_GE(pids.size(), 1u) << r.out();
    kill(r.pid, SIGKILL);
    r.wait(10s);
    EXPECT_TRUE(all_gone(pids, 10s)) << (use_pipe ? "pipe" : "plugin");
    fs::remove_all(d);
  }
}

// §34.6 the timeout is on silence: a backend slower in total than --timeout but answering
// steadily passes.
TEST(Faults, SlowButSteadyPipePasses) {
  const fs::path d = temp_dir("slowpipe");
  Runner r(pipe("slow", d / "pids"), {"--timeout", "1", "--jobs", "1"}, d);
  EXPECT_EQ(r.wait(120s), 0) << r.out();
  EXPECT_GT(passed(r.out()), 2000) << r.out();
  fs::remove_all(d);
}

TEST(Faults, SlowButSteadyPluginPasses) {
  const fs::path d = temp_dir("slowplugin");
  Runner r(plugin("slow"), {"--timeout", "1", "--jobs", "1"}, d);
  EXPECT_EQ(r.wait(120s), 0) << r.out();
  EXPECT_GT(passed(r.out()), 3000) << r.out();
  fs::remove_all(d);
}

// §34.6 bisection: the crash is pinned to the one case that causes it (1.0 = 3f800000), reported
// as that case's failure, and every other case is checked.
TEST(Faults, CrashIsPinnedToItsCase) {
  const fs::path d = temp_dir("crashon");
  Runner r(plugin("crashon"), {"--timeout", "60", "--jobs", "2"}, d);
  const int st = r.wait(120s);
  const std::string out = r.out();
  EXPECT_EQ(st, 1) << out;
  EXPECT_NE(out.find("x=3f800000"), std::string::npos) << out;
  EXPECT_NE(out.find("got crash: SIGSEGV"), std::string::npos) << out;
  EXPECT_NE(out.find(" passed, 1 failed, "), std::string::npos) << out;
  EXPECT_GT(passed(out), 1000) << out;
  fs::remove_all(d);
}

// §34.6 a plugin writing past its output buffer is a failure of the backend naming the buffer.
TEST(Faults, OutputOverrunIsReported) {
  const fs::path d = temp_dir("overrun");
  Runner r(plugin("overrun"), {"--jobs", "1"}, d);
  EXPECT_EQ(r.wait(120s), 3) << r.out();
  EXPECT_NE(r.out().find("wrote past the end of its output buffer"), std::string::npos) << r.out();
  fs::remove_all(d);
}

// Issue 31 item 8: a plugin writing a few words past `out` (into the words after it, which the
// runner then overwrites) is caught by the guard zone after every output buffer: a backend
// failure of the batch (exit 3, §34.6) naming the op, the buffer and how far past its end the
// call wrote. Isolated (the default) and in the runner's process (--no-isolate).
TEST(Faults, FewWordsPastTheOutputAreReported) {
  for (const bool isolate : {true, false}) {
    const fs::path d = temp_dir(isolate ? "overrun3" : "overrun3-noiso");
    std::vector<std::string> args = {"--jobs", "1"};
    if (!isolate) args.push_back("--no-isolate");
    Runner r(plugin("overrun3"), args, d);
    const std::string what = isolate ? "isolated" : "--no-isolate";
    EXPECT_EQ(r.wait(120s), 3) << what << "\n" << r.out();
    EXPECT_NE(r.out().find("cast wrote past the end of its output buffer out ("), std::string::npos) << what << "\n"
                                                                                                     << r.out();
    EXPECT_NE(r.out().find(" words): 3 words past the end"), std::string::npos) << what << "\n" << r.out();
    EXPECT_NE(r.out().find("(cast f32->bf16"), std::string::npos) << what << "\n" << r.out();
    fs::remove_all(d);
  }
}

// A plugin that forks a helper (holding the runner's pipe) and crashes: the crash is reported
// with the process's own status (not as a timeout) and the helpers do not survive.
TEST(Faults, ForkedHelperDiesWithTheCrashedPlugin) {
  const fs::path d = temp_dir("forkcrash");
  const auto t0 = Clock::now();
  Runner r(plugin("forkcrash", d / "pids"), {"--timeout", "60", "--jobs", "1"}, d);
  const int st = r.wait(120s);
  const std::string out = r.out();
  EXPECT_EQ(st, 1) << out;
  EXPECT_LT(Clock::now() - t0, 20s);  // not the 60 s timeout
  EXPECT_NE(out.find("got crash: SIGSEGV"), std::string::npos) << out;
  EXPECT_EQ(out.find("no answer within"), std::string::npos) << out;
  const auto helpers = pids_in(d / "pids");
  EXPECT_FALSE(helpers.empty());
  EXPECT_TRUE(all_gone(helpers, 5s));
  fs::remove_all(d);
}

// Messages: a plugin whose open hangs is named as given on the command line.
TEST(Faults, HangingOpenIsNamed) {
  const fs::path d = temp_dir("openhang");
  Runner r(plugin("openhang", d / "pids"), {"--timeout", "1", "--jobs", "1"}, d);
  EXPECT_EQ(r.wait(60s), 3) << r.out();
  EXPECT_NE(r.out().find("ERROR " + plugin("openhang", d / "pids") + ": no answer within 0:01"), std::string::npos)
      << r.out();
  EXPECT_TRUE(all_gone(pids_in(d / "pids"), 5s));
  fs::remove_all(d);
}

// Messages: a pipe backend killed by a signal says so, whether /bin/sh ran it in its place or
// as its child (exit status 139 from the shell): §33.5 `killed by SIG<NAME>`, also for 128 + N.
TEST(Faults, PipeKilledBySignalSaysSo) {
  const fs::path d = temp_dir("pipesegv");
  for (const std::string& b : {pipe("segv", d / "pids"), pipe("segv", d / "pids") + "; exit $?"}) {
    Runner r(b, {"--jobs", "1"}, d);
    EXPECT_EQ(r.wait(60s), 3) << r.out();
    EXPECT_NE(r.out().find("fault-pipe: the pipe backend killed by SIGSEGV"), std::string::npos) << r.out();
    EXPECT_EQ(r.out().find("exited with status"), std::string::npos) << r.out();
  }
  fs::remove_all(d);
}
