// Tests of the vector export for testbenches (spec §31.8): the library (conform/export.hpp)
// on checked-in vector files, with records checked by hand, and `numref vectors export` as a
// user runs it (exit status 2 on every bad argument, nothing written then).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "numref/conform/export.hpp"

namespace fs = std::filesystem;
using namespace numref::conform;

namespace {

std::string vec(const std::string& rel) { return std::string(NUMREF_SOURCE_DIR) + "/vectors/" + rel; }
const std::string kCast = "cast/cuda_satfinite/f32-f8e4m3fn.vec";  // 788 cases
const std::string kScale = "scale/bf16-f8e5m2-amax-rows.vec";      // 6 tensors: 2x8, 3x7, 1x16

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ExportSet read_text(const std::string& text, const std::string& name) {
  ExportSet set;
  std::istringstream in(text);
  read_export_source(in, name, set);
  return set;
}
ExportSet read_file(const std::string& rel) { return read_text(slurp(vec(rel)), rel); }

std::string exported(const std::string& rel, ExportFormat f) { return export_text(read_file(rel), f); }

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

// The CLI: `numref <args>` through the shell; its exit status, stdout + stderr in `out`.
int cli(const std::string& args, std::string* out = nullptr) {
  const fs::path log = fs::temp_directory_path() / ("numref_export_test_" + std::to_string(::getpid()) + ".log");
  const std::string cmd = "'" + std::string(NUMREF_CLI) + "' " + args + " > '" + log.string() + "' 2>&1";
  const int st = std::system(cmd.c_str());
  if (out) *out = slurp(log.string());
  fs::remove(log);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

}  // namespace

TEST(Export, MemhRecordsOfACastFile) {
  const std::string m = exported(kCast, ExportFormat::memh);
  // Header: the spec version, the source's exact policy and clause, the layout.
  EXPECT_NE(m.find("// numref spec " + std::string(numref_version()) + " (numref "), std::string::npos)
      << m.substr(0, 400);
  EXPECT_NE(
      m.find(
          "//   policy round=rne overflow=saturate inf_sat=max nan=ones nan_to_finite=max e8m0_round=floor "
          "zero_to_nozero=min negative=abs daz=0 ftz=0 tininess=after int_range=full e8m0_low=linear inf_nan=slot\n"),
      std::string::npos);
  EXPECT_NE(m.find("//   clause §11 §4 §6\n"), std::string::npos);
  EXPECT_NE(m.find("// record: 48 bits as 12 hex digits"), std::string::npos);
  EXPECT_NE(m.find("//   [47:16] x input, f32 code\n"), std::string::npos);
  EXPECT_NE(m.find("//   [15:8] y expected, f8e4m3fn code\n"), std::string::npos);
  EXPECT_NE(m.find("//   [7:0] flags expected, §9.1 flags"), std::string::npos);
  EXPECT_NE(m.find("// records 788\n"), std::string::npos);
  // Records, by hand: +0 -> 00, no flag (§6.6).
  EXPECT_TRUE(has_line(m, "000000000000"));
  // 3b400000 = 1.5 * 2^-9, the tie between the subnormals 2^-9 (01) and 2^-8 (02): even -> 02;
  // tiny and inexact: underflow | inexact = 03 (§4.2, §9.2).
  EXPECT_TRUE(has_line(m, "3b4000000203"));
  // 3f880000 = 1.0625, the tie between 1 (38) and 1.125 (39): even -> 38, inexact (01).
  EXPECT_TRUE(has_line(m, "3f8800003801"));
  // Every record line is one 12-digit lowercase hex word; 788 of them.
  std::istringstream in(m);
  int records = 0;
  for (std::string l; std::getline(in, l);) {
    if (l.rfind("//", 0) == 0) continue;
    const std::string word = l.substr(0, l.find(' '));
    EXPECT_EQ(word.size(), 12u) << l;
    EXPECT_EQ(word.find_first_not_of("0123456789abcdef"), std::string::npos) << l;
    ++records;
  }
  EXPECT_EQ(records, 788);
}

TEST(Export, CsvAndJsonRecordsOfACastFile) {
  const std::string c = exported(kCast, ExportFormat::csv);
  EXPECT_NE(c.find("# numref spec "), std::string::npos);
  EXPECT_TRUE(has_line(c, "suite,x,y,flags,note"));
  const std::string suite =
      "f32 f8e4m3fn cuda_satfinite round=rne overflow=saturate inf_sat=max nan=ones nan_to_finite=max e8m0_round=floor "
      "zero_to_nozero=min negative=abs daz=0 ftz=0 tininess=after int_range=full e8m0_low=linear inf_nan=slot";
  EXPECT_TRUE(has_line(c, suite + ",3b400000,02,03,")) << c.substr(0, 2000);
  EXPECT_TRUE(has_line(c, suite + ",3f880000,38,01,"));
  const std::string j = exported(kCast, ExportFormat::json);
  EXPECT_NE(j.find("\"spec_version\": \"" + std::string(numref_version()) + "\""), std::string::npos);
  EXPECT_NE(j.find("\"policy\": \"round=rne overflow=saturate inf_sat=max nan=ones"), std::string::npos);
  EXPECT_NE(j.find("\"input\": {\"x\": \"3b400000\"}, \"expected\": {\"y\": \"02\", \"flags\": \"03\"}"),
            std::string::npos);
}

TEST(Export, TensorFilesCsvYesMemhOnlyForOneLayout) {
  // A scale file (spec §31.6) holds tensors of shapes 2x8, 3x7, 1x16: csv and json write them,
  // memh (one fixed-width word) refuses, naming the way out.
  const std::string c = exported(kScale, ExportFormat::csv);
  EXPECT_TRUE(has_line(c, "suite,shape,x,amax,scales,note"));
  // The all-zero bf16 tensor: amax 0, and amax = 0 gives the scale 1.0 = 3f800000 (§14.1).
  EXPECT_NE(c.find(",1x16,\"8000,0000,0000,8000,0000,8000,0000,0000,8000,8000,0000,8000,8000,8000,0000,0000\",00000000,"
                   "3f800000,"),
            std::string::npos)
      << c;
  try {
    exported(kScale, ExportFormat::memh);
    FAIL() << "memh accepted tensors of several shapes";
  } catch (const ExportError& e) {
    EXPECT_NE(std::string(e.what()).find("memh needs one record layout"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--to csv or json"), std::string::npos) << e.what();
  }
}

TEST(Export, RefusesAFileWhoseResultsDifferFromTheReference) {
  std::string text = slurp(vec(kCast));
  const auto at = text.find("\n3b400000 02 03\n");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 16, "\n3b400000 01 03\n");  // the tie rounded the wrong way
  try {
    read_text(text, "edited.vec");
    FAIL() << "an edited expected result was accepted";
  } catch (const ExportError& e) {
    EXPECT_NE(
        std::string(e.what()).find("edited.vec:31: f32->f8e4m3fn cuda_satfinite: the file's y 01 differs from the "
                                   "reference's 02"),
        std::string::npos)
        << e.what();
  }
  EXPECT_THROW(read_text("numref-vectors 1\nop nosuchop\n", "bad.vec"), ExportError);
  EXPECT_THROW(read_text("", "empty.vec"), ExportError);
}

TEST(Export, EveryShippedVectorFileExports) {
  // Issue 31 item 5: the shipped files (MANIFEST-verified) are the reference's, so each one
  // exports; a divergence file (§B) records no §19.5 counts (optional results, §34.1), which
  // the check must not compare, as the runner does not (§31.5).
  std::size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(vec(""))) {
    if (!e.is_regular_file() || e.path().extension() != ".vec") continue;
    const std::string rel = fs::relative(e.path(), vec("")).generic_string();
    ++files;
    try {
      const ExportSet set = read_file(rel);
      EXPECT_FALSE(export_text(set, ExportFormat::json).empty()) << rel;
      if (rel.rfind("divergence/", 0) == 0) {
        EXPECT_FALSE(export_text(set, ExportFormat::csv).empty()) << rel;
      }
    } catch (const ExportError& x) {
      ADD_FAILURE() << rel << ": " << x.what();
    }
  }
  EXPECT_GT(files, 100u);
}

TEST(Export, DivergenceFileWritesItsAnswersAndNoCounts) {
  // vectors/divergence/quantize.vec, its first tensor: f32 1x4 [480, 1, -3.5, 0.1] into
  // f8e4m3fn under mx-floor (§16.2): amax 480 = 1.875 * 2^8, X = 2^(8 - emax 8) = 1, the E8M0
  // scale code 127 + 0 = 7f; the elements x / 1 in E4M3 (bias 7, 3 mantissa bits, max 448):
  // 480 saturates to 448 = 0 1111 110 = 7e, 1 = 0 0111 000 = 38, -3.5 = 1 1000 110 = c6,
  // 0.1 = 1.6 * 2^-4 -> 1.625 * 2^-4 = 0 0011 101 = 1d. The file records no §19.5 counts:
  // csv writes the field empty, json null (§31.8: values as in the vector file).
  const std::string c = exported("divergence/quantize.vec", ExportFormat::csv);
  EXPECT_TRUE(has_line(c, "suite,shape,x,codes,scales,counts,note")) << c;
  // (the file's first record is the first variant, mx-floor)
  EXPECT_NE(c.find("rule=mx-floor "), std::string::npos);
  EXPECT_LT(c.find("rule=mx-floor "), c.find("rule=mx-rceil "));
  EXPECT_NE(c.find(",1x4,\"43f00000,3f800000,c0600000,3dcccccd\",\"7e,38,c6,1d\",7f,,\"amax 480 in E4M3"),
            std::string::npos)
      << c;
  const std::string j = exported("divergence/quantize.vec", ExportFormat::json);
  EXPECT_NE(j.find("\"expected\": {\"codes\": \"7e,38,c6,1d\", \"scales\": \"7f\", \"counts\": null}"),
            std::string::npos)
      << j.substr(0, 4000);
}

TEST(ExportCli, WritesTheFileAndRefusesBadArguments) {
  const fs::path dir = fs::temp_directory_path() / ("numref_export_cli_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string in = "'" + vec(kCast) + "'";
  const std::string out = (dir / "e4m3.memh").string();
  std::string text;
  ASSERT_EQ(cli("vectors export --to memh --out '" + out + "' " + in, &text), 0) << text;
  // The same text as the library's (the source named by the path given).
  const ExportSet set = read_text(slurp(vec(kCast)), vec(kCast));
  EXPECT_EQ(slurp(out), export_text(set, ExportFormat::memh));
  EXPECT_EQ(cli("vectors export --to csv " + in, &text), 0);
  EXPECT_EQ(text, export_text(set, ExportFormat::csv));
  EXPECT_EQ(cli("vectors export --help", &text), 0);
  EXPECT_NE(text.find("usage: numref vectors export"), std::string::npos);

  // Bad arguments: exit 2, one line naming the problem, the existing output untouched.
  const std::string before = slurp(out);
  struct Bad {
    std::string args, says;
  };
  const Bad bad[] = {
      {"vectors export " + in, "--to memh|csv|json is required"},
      {"vectors export --to verilog " + in, "--to 'verilog': unknown format"},
      {"vectors export --to memh", "no VECTOR_FILE given"},
      {"vectors export --to memh --out '" + out + "' '" + (dir / "missing.vec").string() + "'", "cannot read"},
      {"vectors export --to memh --out '" + out + "' '" + dir.string() + "'", "is a directory"},
      {"vectors export --to memh --out '" + vec(kCast) + "' " + in, "is also an input"},
      {"vectors export --to memh --out '" + (dir / "no/such/dir/x.memh").string() + "' " + in, "does not exist"},
      {"vectors export --to memh --out '" + out + "' '" + vec(kScale) + "'", "memh needs one record layout"},
      {"vectors export --to memh --bogus " + in, "unknown option --bogus"},
  };
  for (const auto& b : bad) {
    EXPECT_EQ(cli(b.args, &text), 2) << b.args << "\n" << text;
    EXPECT_NE(text.find(b.says), std::string::npos) << b.args << "\n" << text;
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  }
  EXPECT_EQ(slurp(out), before);
  EXPECT_EQ(slurp(vec(kCast)).rfind("numref-vectors 1\n", 0), 0u);  // the input untouched
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1u);  // no temporary file left
  fs::remove_all(dir);
}
