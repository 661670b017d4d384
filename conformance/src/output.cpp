// numref — output files that never lose data.                                   spec §35
#include "numref/conform/output.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace numref::conform {
namespace fs = std::filesystem;

namespace {
[[noreturn]] void fail(const std::string& path, const std::string& why) { throw OutputError(path + ": " + why); }
std::string errno_text(int e) { return std::strerror(e); }
}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  std::error_code ea, eb;
  const fs::path pa = fs::absolute(a, ea).lexically_normal(), pb = fs::absolute(b, eb).lexically_normal();
  return !ea && !eb && pa == pb;
}

void refuse_output_that_is_input(std::string_view what, const std::string& out,
                                 const std::vector<std::string>& inputs) {
  for (const auto& in : inputs)
    if (same_file(out, in))
      throw OutputError(std::string(what) + " " + out + " is also an input (" + in + "); refusing to overwrite it");
}

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  if (path_.empty()) fail("''", "empty output path");
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) fail(path_, "is a directory");
    if (!S_ISREG(st.st_mode)) {  // a device, FIFO or socket: written in place
      f_ = std::fopen(path_.c_str(), "wb");
      if (!f_) fail(path_, "cannot open: " + errno_text(errno));
      return;
    }
  }
  const fs::path target(path_);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail(path_, "directory " + dir.string() + " does not exist");
  std::string tmpl = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) fail(path_, "cannot create a file in " + dir.string() + ": " + errno_text(errno));
  // mkstemp creates mode 0600; give the file the mode a plain fopen would (0666 & ~umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  tmp_ = tmpl;
  f_ = ::fdopen(fd, "wb");
  if (!f_) {
    ::close(fd);
    ::unlink(tmp_.c_str());
    fail(path_, "cannot open: " + errno_text(errno));
  }
}

OutputFile::~OutputFile() {
  if (f_) std::fclose(f_);
  if (!committed_ && !tmp_.empty()) ::unlink(tmp_.c_str());
}

void OutputFile::write(std::string_view bytes) {
  if (!f_) fail(path_, "already closed");
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f_) != bytes.size())
    fail(path_, "write failed: " + errno_text(errno));
}

void OutputFile::close_checked() {
  if (!f_) return;
  std::FILE* f = f_;
  f_ = nullptr;
  const bool bad = std::fflush(f) != 0 || std::ferror(f) != 0;
  const int e = errno;
  if (std::fclose(f) != 0 || bad) fail(path_, "write failed: " + errno_text(bad ? e : errno));
}

void OutputFile::rename_into_place() {
  if (committed_) return;
  if (!tmp_.empty() && std::rename(tmp_.c_str(), path_.c_str()) != 0)
    fail(path_, "cannot replace: " + errno_text(errno));
  committed_ = true;
}

void OutputFile::commit() {
  close_checked();
  rename_into_place();
}

// What same_file() compares, computed once per path: the device and inode of an existing
// file, and the lexically normalised absolute path. (Outside the anonymous namespace: OutputSet::Key,
// declared in the header, derives from it.)
struct FileKey {
  bool exists = false;
  dev_t dev{};
  ino_t ino{};
  fs::path norm;
};

namespace {
FileKey file_key(const std::string& p) {
  FileKey k;
  struct stat st {};
  if (::stat(p.c_str(), &st) == 0) {
    k.exists = true;
    k.dev = st.st_dev;
    k.ino = st.st_ino;
  }
  std::error_code ec;
  k.norm = fs::absolute(p, ec).lexically_normal();
  return k;
}
bool same_key(const FileKey& a, const FileKey& b) {
  if (a.exists && b.exists) return a.dev == b.dev && a.ino == b.ino;
  return a.norm == b.norm;
}
}  // namespace

struct OutputSet::Key : FileKey {};

OutputSet::OutputSet() = default;
OutputSet::~OutputSet() = default;

OutputFile& OutputSet::add(const std::string& path) {
  // same_file() against every earlier output, with each path's key computed once (a set of
  // hundreds of files, as `numref vectors generate` writes, stays linear in stat calls).
  Key k{file_key(path)};
  for (std::size_t i = 0; i < files_.size(); ++i)
    if (same_key(keys_[i], k)) throw OutputError(path + ": named twice as an output");
  files_.push_back(std::make_unique<OutputFile>(path));
  keys_.push_back(std::move(k));
  return *files_.back();
}

void OutputSet::commit_all() {
  for (auto& f : files_) f->close_checked();
  for (auto& f : files_) f->rename_into_place();
}

namespace {
int g_stdout_errno = 0;          // note_stdout_error()
bool g_stdout_reported = false;  // check_stdout() threw once
}  // namespace

void note_stdout_error(int e) {
  if (g_stdout_errno == 0) g_stdout_errno = e;
}

void check_stdout() {
  errno = 0;
  const bool flush_failed = std::fflush(stdout) != 0;
  const int e = flush_failed ? errno : 0;
  if (!flush_failed && !std::ferror(stdout)) return;
  if (g_stdout_reported) return;
  g_stdout_reported = true;
  const int why = e ? e : g_stdout_errno;
  throw OutputError(std::string("standard output: write failed") + (why ? ": " + errno_text(why) : std::string()));
}

}  // namespace numref::conform
