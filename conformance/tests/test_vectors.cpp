// Vector files (spec §31): the reader's checks, SHA-256, the MANIFEST, directory
// verification (tampering, unlisted files, drift).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "family_test_support.hpp"
#include "numref/conform/vectors.hpp"

using namespace numref::conform;
namespace fs = std::filesystem;

namespace {

const std::string kPolicy =
    "round=rne overflow=nonsat inf_sat=max nan=payload nan_to_finite=zero e8m0_round=follow zero_to_nozero=nan "
    "negative=nan daz=0 ftz=0 tininess=after int_range=full e8m0_low=linear inf_nan=slot";

std::string file(const std::string& body, const std::string& count = "2") {
  return "numref-vectors 1\nop cast\nfrom f32\nto f8e4m3fn\nprofile ocp\npolicy " + kPolicy +
         "\ngenerator test\ncolumns x y flags\ncount " + count + "\nbegin\n" + body;
}

std::string parse_error(const std::string& text) { return test::vector_error(text); }

}  // namespace

// A well-formed file: 464 -> 7e inexact (§6.1 tie), 465 -> 7f overflow|inexact (§6.1, ocp nonsat).
TEST(VectorFile, ParsesAWellFormedFile) {
  std::istringstream in(file("43e80000 7e 01\n43e88000 7f 05  # 465 overflows\nend\n"));
  EXPECT_EQ(parse_vector_text(in, "t.vec"), 2u);
}

TEST(VectorFile, RejectsMalformedInput) {
  struct Case {
    std::string text, message;
  };
  const Case cases[] = {
      {"", "t.vec: empty file"},
      // §31.1 the first line is `numref-vectors 1`: another version is refused naming both, and
      // any other first line is refused
      {"numref-vectors 2\nop cast\n", "vector file format version '2', this numref reads 1"},
      {"hello\n", "not a numref vector file"},
      {"numref-vectors 1\nop cast\ncount 1\n", "no 'begin' line"},
      {"numref-vectors 1\nop cast\ncolumns x\ngenerator g\nbegin\nend\n", "header has no 'count' line"},
      {"numref-vectors 1\nop cast\nop cast\n", "header key 'op' appears twice"},
      {"numref-vectors 1\nOP! cast\n", "malformed header line"},
      {file("43e80000 7e 01\n"), "missing 'end' line after 1 cases"},
      {file("43e80000 7e 01\nend\n"), "the file has 1 cases but its header says count 2"},
      {file("43e80000 7e 01\n43e80000 7e 01\n43e80000 7e 01\nend\n"), "more cases than the header's count 2"},
      {file("43e80000 7e 01\n43e80000 7e 01\nend\nextra\n"), "text after the 'end' line"},
      {file("43e80000 7e\n43e80000 7e 01\nend\n"), "t.vec:11: expected 3 fields (x y flags), got 2"},
      {file("43e8000g 7e 01\n43e80000 7e 01\nend\n"), "column x: value '43e8000g' is not hex"},
      {file("43e80000 17e 01\n43e80000 7e 01\nend\n"), "column y: value '17e' is not 2 hex digits"},
      {file("43e80000 7e 08\n43e80000 7e 01\nend\n"), "column flags: value '08' is not a combination of 01 02 04 10"},
      {file("43e80000 7e 01\n43e80000 7e 01\nend\n", "x"), "'count x' is not a decimal case count"},
      {"numref-vectors 1\nop nosuch\ncolumns x\ngenerator g\ncount 0\nbegin\nend\n", "unknown op 'nosuch'"},
      {std::string("numref-vectors 1\nop cast\nfrom f32\nto f8e4m3fn\nprofile ocp\npolicy round=rne\ngenerator g\n") +
           "columns x y flags\ncount 0\nbegin\nend\n",
       "header line 'policy' is not the canonical"},
      {std::string("numref-vectors 1\nop cast\nfrom f32\nto f8e4m3fn\nprofile ocp\npolicy round=sr sr_bits=99\n") +
           "generator g\ncolumns x y flags\ncount 0\nbegin\nend\n",
       "bad cast parameters"},
      {std::string("numref-vectors 1\nop cast\nfrom f33\nto f8e4m3fn\nprofile ocp\npolicy ") + kPolicy +
           "\ngenerator g\ncolumns x y flags\ncount 0\nbegin\nend\n",
       "unknown format 'f33'"},
      {std::string("numref-vectors 1\nop cast\nfrom f32\nto f8e4m3fn\nprofile ocp\npolicy ") + kPolicy +
           "\ngenerator g\ncolumns x r y flags\ncount 0\nbegin\nend\n",
       "columns 'x r y flags', expected 'x y flags'"},
      {std::string("numref-vectors 1\nop cast\n") + std::string(70000, 'a') + "\n", "longer than 65536"},
      {std::string("numref-vectors 1\nop cast\0\n", 25), "NUL byte"},
  };
  for (const auto& c : cases) {
    const std::string err = parse_error(c.text);
    EXPECT_NE(err.find(c.message), std::string::npos) << "input:\n" << c.text.substr(0, 300) << "\nerror: " << err;
  }
}

TEST(VectorFile, DivergenceFileOfTheGeneratorParses) {
  for (const auto& f : generate_all_vectors()) {
    if (f.path != "divergence/cast.vec") continue;
    std::istringstream in(f.text);
    EXPECT_GT(parse_vector_text(in, f.path), 40u);
    // A divergence file whose profile policy no longer matches this numref is refused.
    std::string stale = f.text;
    const auto at = stale.find("policy.ocp.narrow round=rne overflow=nonsat");
    ASSERT_NE(at, std::string::npos);
    stale.replace(at + std::string("policy.ocp.narrow round=rne overflow=").size(), 6, "satura");
    EXPECT_NE(parse_error(stale).find("differs from profile ocp"), std::string::npos) << parse_error(stale);
    return;
  }
  FAIL() << "no divergence/cast.vec generated";
}

// FIPS 180-4 / NIST example digests.
TEST(Sha256, KnownDigests) {
  EXPECT_EQ(Sha256::hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256::hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256::hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256::hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

namespace {
fs::path fresh_copy(const std::string& tag) {
  const fs::path d = fs::temp_directory_path() / ("numref-vectors-test-" + tag + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::copy(std::string(NUMREF_SOURCE_DIR) + "/vectors", d, fs::copy_options::recursive);
  return d;
}
bool has(const VerifyResult& r, const std::string& s) {
  for (const auto& p : r.problems)
    if (p.find(s) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST(VectorDirectory, CheckedInCopyIsConsistentAndDriftFree) {
  const auto r = verify_directory(std::string(NUMREF_SOURCE_DIR) + "/vectors", true);
  for (const auto& p : r.problems) ADD_FAILURE() << p;
  EXPECT_GT(r.files, 500u);
  EXPECT_GT(r.cases, 100000u);
}

TEST(VectorDirectory, DetectsTamperingUnlistedFilesMissingFilesAndDrift) {
  const fs::path d = fresh_copy("tamper");
  {  // a hand edit that keeps the file well formed: 464 -> 7f instead of 7e
    const fs::path p = d / "divergence/cast.vec";
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string t = ss.str();
    const auto at = t.find("43e80000 7e/01");
    ASSERT_NE(at, std::string::npos);
    t.replace(at + 9, 2, "7f");
    std::ofstream(p) << t;
  }
  std::ofstream(d / "cast/extra.vec") << "numref-vectors 1\n";
  fs::remove(d / "cast/ocp/int8-f32.vec");
  auto r = verify_directory(d.string(), false);
  EXPECT_TRUE(has(r, "divergence/cast.vec: sha256")) << r.problems.size();
  EXPECT_TRUE(has(r, "cast/extra.vec: not listed in MANIFEST"));
  EXPECT_TRUE(has(r, "cast/ocp/int8-f32.vec: listed in MANIFEST but missing"));
  // The same edit with a regenerated MANIFEST passes the manifest check but not drift.
  std::vector<ManifestEntry> man;
  for (const auto& e : fs::recursive_directory_iterator(d)) {
    if (!e.is_regular_file() || e.path().filename() == "MANIFEST" || e.path().filename() == "extra.vec") continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    man.push_back({Sha256::hex(ss.str()), fs::relative(e.path(), d).generic_string()});
  }
  fs::remove(d / "cast/extra.vec");
  std::ofstream(d / "MANIFEST") << manifest_text(man);
  r = verify_directory(d.string(), false);
  EXPECT_TRUE(r.problems.empty()) << (r.problems.empty() ? "" : r.problems[0]);
  r = verify_directory(d.string(), true);
  EXPECT_TRUE(has(r, "divergence/cast.vec: differs from the generator's output"));
  EXPECT_TRUE(has(r, "cast/ocp/int8-f32.vec: produced by the generator but missing"));
  fs::remove_all(d);
}

TEST(VectorDirectory, MalformedManifestIsReported) {
  const fs::path d = fs::temp_directory_path() / ("numref-manifest-test-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  std::ofstream(d / "MANIFEST") << "abc  x.vec\n";
  auto r = verify_directory(d.string(), false);
  ASSERT_FALSE(r.problems.empty());
  EXPECT_NE(r.problems[0].find("expected '<sha256>  <path>'"), std::string::npos) << r.problems[0];
  std::ofstream(d / "MANIFEST") << std::string(64, 'a') << "  ../x.vec\n";
  r = verify_directory(d.string(), false);
  ASSERT_FALSE(r.problems.empty());
  EXPECT_NE(r.problems[0].find("unsafe or malformed path"), std::string::npos) << r.problems[0];
  fs::remove_all(d);
  r = verify_directory(d.string(), false);
  ASSERT_FALSE(r.problems.empty());
  EXPECT_NE(r.problems[0].find("no MANIFEST"), std::string::npos);
}
