// numref conformance — backend processes: starting a child in its own process group with two
// pipes, waiting on it with a deadline, killing its group, the runner's stop request, and how
// a process ended.                                                             spec §34.6
//
// Private to conformance/src: the isolated plugin (backend_isolated.cpp) and the pipe backend
// (backend_pipe.cpp) run their backend processes through this.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

namespace numref::conform::proc {

using Clock = std::chrono::steady_clock;

// The name of a signal ("SIGSEGV"), or "signal N".
std::string signal_name(int sig);
// How a backend process ended (a waitpid() status). A pipe backend runs under /bin/sh -c
// (`via_shell`): a shell that ran the program as its child exits with 128 + N when the program
// was killed by signal N.
std::string status_text(int status, bool via_shell = false);

// Blocking writes / reads of exactly n bytes (EINTR retried); false on EOF or an error.
bool write_all(int fd, const void* p, std::size_t n);
bool read_all(int fd, void* p, std::size_t n);

// Closes every descriptor from 3 up except `a` and `b` (a child keeps no other backend's pipes
// and no report file of the runner).
void close_other_fds(int a, int b);

// The leader of a pipe backend's process group: runs `cmd` under /bin/sh -c as its child and
// ends as the shell ended (backend_pipe.cpp; in a child that start() made).
[[noreturn]] void pipe_supervisor(const char* cmd);

// A backend process as the runner holds it: the leader of its process group and two pipes.
struct Child {
  pid_t pid = -1;
  int to = -1, from = -1;
  bool reaped = false;
  int status = 0;

  // Forks a child with two close-on-exec pipes, runner -> child and child -> runner. The
  // child gets its own process group, dies with the runner and has default signals; then
  // `child_side(read_fd, write_fd)` runs in it and must not return. The runner keeps the other
  // ends (to, from). Throws BackendError(load) when a pipe or the fork fails.
  void start(const std::function<void(int, int)>& child_side);
  void adopt(pid_t p, int to_fd, int from_fd);
  bool exited();  // reaps the leader if it has ended
  // Kills the whole process group (helpers the backend forked included) and reaps the leader;
  // the leader's own status is kept when it had already ended.
  void kill_group();
  // After EOF on its output: the leader's own status if it ends within 200 ms, else killed.
  void reap_soon();
  void close_fds();
  // Ends it: `quit` already sent; waits up to `ms` for the leader, then kills the group.
  void finish(int ms);
};

enum class Wait { ready, exited, silent, stopped };

// Waits until fd is ready for `events`, the process ends (its pipe may be held open by a
// helper it forked), `deadline` passes, or a stop is requested. Slices of 50 ms.
Wait wait_child(Child& c, int fd, short events, Clock::time_point deadline);

}  // namespace numref::conform::proc
