// numref conformance — what the backend transports share: the transports' constructors, the
// text of a backend's identity, and the errors of a backend process.     spec §32, §33, §34.6
//
// Private to conformance/src. One file a transport:
//   backend_plugin.cpp    a C ABI plugin loaded in this process (dlopen)          §32
//   backend_isolated.cpp  a C ABI plugin loaded in a child process (the default)  §34.6
//   backend_pipe.cpp      a program speaking the pipe protocol                     §33
//   process.cpp           the backend processes of the last two (fork, wait, kill, stop)
//   backend.cpp           finding a backend (--backend) and opening it
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "numref/conform/backend.hpp"
#include "process.hpp"

namespace numref::conform {

// The words of a C string (nullptr: none).
std::vector<std::string> word_list(const char* s);
// A C string (nullptr: "") on one line: newlines and tabs become spaces.
std::string one_line(const char* s);

// §34.6 The errors of a backend process `c`, each after killing its group. `who` names the
// backend, `what` is what it was doing.
[[noreturn]] void throw_timeout(proc::Child& c, const std::string& who, double timeout_s, const std::string& what);
[[noreturn]] void throw_interrupted(proc::Child& c, const std::string& who, const std::string& what);

// The transports (open_plugin_in_process() is in numref/conform/backend.hpp).
std::unique_ptr<Backend> open_isolated_plugin(const std::string& path, const std::string& args,
                                              const std::string& display, double timeout_s);
std::unique_ptr<Backend> open_pipe_backend(const std::string& cmd, double timeout_s);

}  // namespace numref::conform
