// numref conformance — golden-vector files, the MANIFEST, and SHA-256.     spec §31
#pragma once

#include <array>
#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "numref/conform/core.hpp"

namespace numref::conform {

// §31.1 The file-format version this numref reads and writes.
inline constexpr int kVectorFormatVersion = 1;
inline constexpr std::string_view kVectorMagic = "numref-vectors";
// §31.4 The generator version written into every file; bump it when the generator's
// output changes on purpose (then regenerate: `numref vectors generate`).
inline constexpr std::string_view kGeneratorVersion = "numref-vectors-gen 2";

// §31.2 A streaming reader of one vector file: the header is parsed on construction,
// case lines are returned one by one; malformed input throws VectorError naming the
// file and line.
class VectorReader {
 public:
  VectorReader(std::istream& in, std::string name);
  const VectorHeader& header() const { return header_; }
  // The next case line split into fields (comment removed, returned in `note`).
  // Returns false after the `end` line (the case count is checked there).
  bool next(std::vector<std::string_view>& fields, std::string_view& note);
  int line() const { return line_no_; }
  // "file:line: msg" for a VectorError.
  std::string where() const;
  std::uint64_t declared_count() const { return count_; }

 private:
  bool getline(std::string& s);
  std::istream& in_;
  std::string name_;
  VectorHeader header_;
  std::string buf_;
  int line_no_ = 0;
  std::uint64_t count_ = 0, seen_ = 0;
  bool done_ = false;
};

// Helper for writers: the fixed header lines, in order (§31.2).
class VectorWriter {
 public:
  void field(std::string_view key, std::string_view value);
  // The provenance lines every file carries (§31.2): `generator` (kGeneratorVersion) and
  // `spec` (the spec version the expected values follow, numref::kSpecVersion).
  void provenance();
  void begin();
  void line(std::string_view text);
  // Finishes the file: inserts the "count" line before "begin" and appends "end".
  std::string finish();

 private:
  std::string head_, body_;
  std::uint64_t count_ = 0;
  bool begun_ = false;
};

// ---- SHA-256 (FIPS 180-4) --------------------------------------------------------------
class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t n);
  std::array<std::uint8_t, 32> digest();
  static std::string hex(std::string_view data);

 private:
  void block(const std::uint8_t* p);
  std::array<std::uint32_t, 8> h_;
  std::array<std::uint8_t, 64> buf_{};
  std::size_t used_ = 0;
  std::uint64_t total_ = 0;
};

// ---- MANIFEST (§31.5) -------------------------------------------------------------------
// The manifest lists every vector file of a directory as "<sha256>  <path>" (the format
// of sha256sum, so `sha256sum -c MANIFEST` works), sorted by path.
struct ManifestEntry {
  std::string sha256;
  std::string path;
};
std::vector<ManifestEntry> read_manifest(const std::string& dir);  // throws VectorError
std::string manifest_text(std::vector<ManifestEntry> entries);

// Problems found by verify_directory (empty = the directory is consistent).
struct VerifyResult {
  std::vector<std::string> problems;
  std::size_t files = 0;
  std::uint64_t cases = 0;
};
// §31.5 Checks a vector directory: the MANIFEST parses, every listed file exists with
// its sha256, no vector file is unlisted, and every file parses completely (header,
// case lines through its family's reader, count). With `against_generator` also
// compares every file byte for byte with what the generator produces now (drift).
VerifyResult verify_directory(const std::string& dir, bool against_generator);

// §31.4 Every vector file of every registered family, in a fixed order.
std::vector<VectorFileText> generate_all_vectors();
// §31.4 / §35 Writes the generated files and the MANIFEST into dir (created if missing), each
// through a temporary file, all renamed into place together. §35.3 A *.vec file that dir's
// existing MANIFEST lists and the generator no longer produces is removed when it still has
// the listed sha256 (`removed`), kept when it was edited since (`kept`); files the MANIFEST
// does not list and directories are never removed. Throws OutputError: dir is not a
// directory, an existing MANIFEST is not one numref wrote, a file cannot be written.
struct WriteVectorsResult {
  std::vector<std::string> removed, kept;
};
WriteVectorsResult write_vectors(const std::string& dir, const std::vector<VectorFileText>& files);

// Reads one vector file completely through its family's reader (used by verify and by
// the fuzz target). Returns the number of cases; throws VectorError.
std::uint64_t parse_vector_text(std::istream& in, const std::string& name);

}  // namespace numref::conform
