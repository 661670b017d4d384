// numref — output files that never lose data (spec §35).
//
// Every file a numref command writes goes through OutputFile: the bytes go to a temporary file
// beside the target and are renamed onto it only when everything was written and the command
// commits, so an interrupted or failing command leaves the old file (or no file) and never a
// truncated one. A target that is not a regular file (/dev/stdout, /dev/null, a FIFO, a
// character device such as /dev/full) is written in place and every write error is reported.
// OutputSet commits several outputs together: none appears unless all were written.
#pragma once

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace numref::conform {

// An output problem; what() names the path and the reason ("r.json: directory /missing does
// not exist"). Commands report it as a usage error (exit 2).
struct OutputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// True when a and b name the same existing file (same device and inode), or, when either does
// not exist, the same lexically normalised absolute path.
bool same_file(const std::string& a, const std::string& b);

// §35 Throws OutputError when `out` is one of `inputs` (same_file): "<what> OUT is also an
// input". `what` names the option, e.g. "--out".
void refuse_output_that_is_input(std::string_view what, const std::string& out, const std::vector<std::string>& inputs);

class OutputFile {
 public:
  // Checks the target at once (throws OutputError): its directory must exist, it must not be a
  // directory. Opens the temporary file (or, for a non-regular target, the target itself).
  explicit OutputFile(std::string path);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();  // not committed: the temporary file is removed, the target untouched

  std::FILE* file() const { return f_; }
  const std::string& path() const { return path_; }
  void write(std::string_view bytes);  // throws OutputError on a write error
  // Flushes and closes (checking every error), then renames the temporary file onto the
  // target. Throws OutputError naming the path; after a throw nothing was replaced.
  void commit();
  // The first two steps of commit(), without the rename (OutputSet uses them).
  void close_checked();
  void rename_into_place();

 private:
  std::string path_;
  std::string tmp_;  // empty when writing in place
  std::FILE* f_ = nullptr;
  bool committed_ = false;
};

// Several outputs of one command: add() each (checked at once), write them, commit_all() closes
// every one and only then renames them into place.
// An output written completely can be closed at once (OutputFile::close_checked()), so that a
// set of many files keeps one open at a time.
class OutputSet {
 public:
  OutputSet();
  ~OutputSet();
  OutputFile& add(const std::string& path);  // throws OutputError: a path named twice (same_file)
  void commit_all();

 private:
  struct Key;
  std::vector<std::unique_ptr<OutputFile>> files_;
  std::vector<Key> keys_;
};

// Flushes stdout and throws OutputError("standard output: write failed: <reason>") when any write
// to it failed (a full disk, /dev/full, a closed pipe): a command must not exit 0 then. The
// failure is reported once: after the first throw, later calls return quietly (the command has
// failed already and said why). The reason is the errno of the failed write: of this flush, or
// the one note_stdout_error() recorded when an earlier write failed.
void check_stdout();
// Records the errno of a failed write to standard output (the first one is kept); numref's main()
// writes stdout through a stream that calls it, so that the reason survives until check_stdout().
void note_stdout_error(int e);

}  // namespace numref::conform
