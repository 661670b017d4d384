// §35 Output files: temporary file + rename, nothing replaced on failure, outputs that are
// inputs refused, write errors (a full device) reported.
#include "numref/conform/output.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using numref::conform::OutputError;
using numref::conform::OutputFile;
using numref::conform::OutputSet;

namespace {
struct TmpDir {
  fs::path p;
  TmpDir() {
    std::string t = (fs::temp_directory_path() / "numref-output-XXXXXX").string();
    p = ::mkdtemp(t.data());
  }
  ~TmpDir() { fs::remove_all(p); }
};
std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}
void spit(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }
std::size_t entries(const fs::path& d) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(d), fs::directory_iterator{}));
}
}  // namespace

TEST(OutputFile, ReplacesOnlyOnCommit) {
  TmpDir d;
  const fs::path t = d.p / "r.json";
  spit(t, "old");
  {
    OutputFile o(t.string());
    o.write("new contents");
    EXPECT_EQ(slurp(t), "old");  // nothing replaced before commit
    o.commit();
  }
  EXPECT_EQ(slurp(t), "new contents");
  EXPECT_EQ(entries(d.p), 1u);  // no temporary file left
  {
    OutputFile o(t.string());
    o.write("abandoned");
  }  // not committed: the target keeps its bytes, the temporary file is gone
  EXPECT_EQ(slurp(t), "new contents");
  EXPECT_EQ(entries(d.p), 1u);
}

TEST(OutputFile, BadTargetsAreNamed) {
  TmpDir d;
  try {
    OutputFile o((d.p / "missing" / "r.json").string());
    FAIL() << "a missing directory was accepted";
  } catch (const OutputError& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos) << e.what();
  }
  try {
    OutputFile o(d.p.string());
    FAIL() << "a directory was accepted";
  } catch (const OutputError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
}

TEST(OutputFile, WriteErrorsOfADeviceAreReported) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  OutputFile o("/dev/full");
  bool thrown = false;
  try {
    o.write(std::string(1 << 16, 'x'));
    o.commit();
  } catch (const OutputError& e) {
    thrown = true;
    EXPECT_NE(std::string(e.what()).find("/dev/full"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(thrown);
}

TEST(OutputSet, NoneAppearsUnlessAllWereWritten) {
  TmpDir d;
  {
    OutputSet s;
    s.add((d.p / "a.npy").string()).write("a");
    EXPECT_THROW(s.add((d.p / "nodir" / "b.npy").string()), OutputError);
  }  // the command failed before commit_all: a.npy must not exist
  EXPECT_FALSE(fs::exists(d.p / "a.npy"));
  EXPECT_EQ(entries(d.p), 0u);
  OutputSet s;
  s.add((d.p / "a.npy").string()).write("a");
  EXPECT_THROW(s.add((d.p / "a.npy").string()), OutputError);  // one path named twice
  s.add((d.p / "b.npy").string()).write("b");
  s.commit_all();
  EXPECT_EQ(slurp(d.p / "a.npy"), "a");
  EXPECT_EQ(slurp(d.p / "b.npy"), "b");
}

TEST(OutputFile, AnOutputThatIsAnInputIsRefused) {
  TmpDir d;
  spit(d.p / "in.npy", "x");
  const std::string in = (d.p / "in.npy").string();
  // the same file by another spelling, and by a hard link
  const std::string other = (d.p / "." / "in.npy").string();
  fs::create_hard_link(d.p / "in.npy", d.p / "link.npy");
  EXPECT_TRUE(numref::conform::same_file(in, other));
  EXPECT_TRUE(numref::conform::same_file(in, (d.p / "link.npy").string()));
  EXPECT_FALSE(numref::conform::same_file(in, (d.p / "new.npy").string()));
  EXPECT_THROW(numref::conform::refuse_output_that_is_input("--out", other, {in}), OutputError);
  EXPECT_NO_THROW(numref::conform::refuse_output_that_is_input("--out", (d.p / "new.npy").string(), {in}));
  EXPECT_EQ(slurp(d.p / "in.npy"), "x");
}

// §35.1 One file named twice under other spellings (a "." / ".." path, a hard link to an existing
// file) is refused; outputs closed as soon as they are written (so that a set of thousands of
// files keeps one open) are renamed into place by commit_all() all the same.
TEST(OutputSet, SameFileUnderOtherNamesAndEarlyClose) {
  TmpDir d;
  fs::create_directory(d.p / "sub");
  spit(d.p / "old.npy", "old");
  fs::create_hard_link(d.p / "old.npy", d.p / "link.npy");
  OutputSet s;
  s.add((d.p / "new.npy").string()).write("n");
  EXPECT_THROW(s.add((d.p / "sub" / ".." / "." / "new.npy").string()), OutputError);  // not there yet: same path
  s.add((d.p / "old.npy").string()).write("o");
  EXPECT_THROW(s.add((d.p / "link.npy").string()), OutputError);  // existing: same inode
  for (int i = 0; i < 2000; ++i) {
    OutputFile& f = s.add((d.p / "sub" / (std::to_string(i) + ".vec")).string());
    f.write(std::to_string(i));
    f.close_checked();
  }
  EXPECT_FALSE(fs::exists(d.p / "new.npy"));
  EXPECT_EQ(slurp(d.p / "old.npy"), "old");
  s.commit_all();
  EXPECT_EQ(slurp(d.p / "new.npy"), "n");
  EXPECT_EQ(slurp(d.p / "old.npy"), "o");
  EXPECT_EQ(slurp(d.p / "sub" / "1999.vec"), "1999");
  EXPECT_EQ(entries(d.p / "sub"), 2000u);  // no temporary file left
}
