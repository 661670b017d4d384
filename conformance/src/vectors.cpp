// numref conformance — vector files, MANIFEST, SHA-256.                  spec §31
#include "numref/conform/vectors.hpp"
#include "numref/version.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "numref/conform/output.hpp"
#include "numref/conform/util.hpp"
#include "vector_file.hpp"

namespace numref::conform {

namespace fs = std::filesystem;

const std::string& VectorHeader::get(std::string_view key) const {
  if (const std::string* v = find(key)) return *v;
  throw VectorError(path + ": header has no '" + std::string(key) + "' line");
}

// ---- reader (§31.2, §31.3) ------------------------------------------------------------

namespace {
constexpr std::size_t kMaxLine = 1 << 16;

bool valid_key(std::string_view k) {
  if (k.empty() || k.size() > 64) return false;
  for (char c : k)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.')) return false;
  return true;
}

bool skippable(std::string_view t) { return t.empty() || t.front() == '#'; }
}  // namespace

bool VectorReader::getline(std::string& s) {
  s.clear();
  if (!in_.good()) return false;
  int c;
  bool any = false;
  while ((c = in_.get()) != EOF) {
    any = true;
    if (c == '\n') break;
    if (s.size() >= kMaxLine)
      throw VectorError(name_ + ":" + std::to_string(line_no_ + 1) + ": line longer than 65536 characters");
    if (c == '\0') throw VectorError(name_ + ":" + std::to_string(line_no_ + 1) + ": NUL byte in a text file");
    s.push_back(static_cast<char>(c));
  }
  if (!any) return false;
  ++line_no_;
  if (!s.empty() && s.back() == '\r') s.pop_back();
  return true;
}

std::string VectorReader::where() const { return name_ + ":" + std::to_string(line_no_); }

VectorReader::VectorReader(std::istream& in, std::string name) : in_(in), name_(std::move(name)) {
  header_.path = name_;
  if (!getline(buf_)) throw VectorError(name_ + ": empty file (expected '" + std::string(kVectorMagic) + " 1')");
  {
    const auto f = split_ws(buf_);
    if (f.size() != 2 || f[0] != kVectorMagic)
      throw VectorError(where() + ": not a numref vector file (first line must be '" + std::string(kVectorMagic) + " " +
                        std::to_string(kVectorFormatVersion) + "')");
    if (f[1] != std::to_string(kVectorFormatVersion))
      throw VectorError(where() + ": vector file format version '" + std::string(f[1]) + "', this numref reads " +
                        std::to_string(kVectorFormatVersion));
  }
  bool begun = false;
  while (getline(buf_)) {
    const std::string_view t = trim(buf_);
    if (skippable(t)) continue;
    if (t == "begin") {
      begun = true;
      break;
    }
    const auto sp = t.find_first_of(" \t");
    const std::string_view key = t.substr(0, sp);
    const std::string_view value = sp == std::string_view::npos ? std::string_view{} : trim(t.substr(sp));
    if (!valid_key(key)) throw VectorError(where() + ": malformed header line '" + std::string(t) + "'");
    if (value.empty()) throw VectorError(where() + ": header key '" + std::string(key) + "' has no value");
    if (header_.find(key)) throw VectorError(where() + ": header key '" + std::string(key) + "' appears twice");
    header_.fields.emplace_back(std::string(key), std::string(value));
  }
  if (!begun) throw VectorError(name_ + ": no 'begin' line (truncated header?)");
  for (const char* k : {"op", "columns", "count", "generator"})
    if (!header_.find(k)) throw VectorError(name_ + ": header has no '" + std::string(k) + "' line");
  // §31.2 expected values follow one spec version: a file of another is refused, not misread.
  if (const std::string* sv = header_.find("spec"); sv && *sv != kSpecVersion)
    throw VectorError(name_ + ": the vectors follow spec " + *sv + ", this numref implements spec " +
                      std::string(kSpecVersion) + " (regenerate them with this numref, or use a numref of spec " + *sv +
                      ")");
  const std::string& c = *header_.find("count");
  if (c.empty() || c.size() > 12 || c.find_first_not_of("0123456789") != std::string::npos)
    throw VectorError(name_ + ": 'count " + c + "' is not a decimal case count");
  count_ = std::stoull(c);
}

bool VectorReader::next(std::vector<std::string_view>& fields, std::string_view& note) {
  fields.clear();
  note = {};
  if (done_) return false;
  while (true) {
    if (!getline(buf_))
      throw VectorError(name_ + ": missing 'end' line after " + std::to_string(seen_) + " cases (truncated file?)");
    std::string_view t = trim(buf_);
    if (skippable(t)) continue;
    if (t == "end") {
      if (seen_ != count_)
        throw VectorError(where() + ": the file has " + std::to_string(seen_) + " cases but its header says count " +
                          std::to_string(count_));
      while (getline(buf_))
        if (!skippable(trim(buf_))) throw VectorError(where() + ": text after the 'end' line");
      done_ = true;
      return false;
    }
    const auto hash = t.find('#');
    if (hash != std::string_view::npos) {
      note = trim(t.substr(hash + 1));
      t = trim(t.substr(0, hash));
    }
    fields = split_ws(t);
    ++seen_;
    if (seen_ > count_) throw VectorError(where() + ": more cases than the header's count " + std::to_string(count_));
    return true;
  }
}

// ---- writer ---------------------------------------------------------------------------

void VectorWriter::field(std::string_view key, std::string_view value) {
  if (head_.empty()) head_ = std::string(kVectorMagic) + " " + std::to_string(kVectorFormatVersion) + "\n";
  head_ += key;
  head_ += ' ';
  head_ += value;
  head_ += '\n';
}
void VectorWriter::provenance() {
  field("generator", kGeneratorVersion);
  field("spec", kSpecVersion);
}

void VectorWriter::begin() { begun_ = true; }
void VectorWriter::line(std::string_view text) {
  body_ += text;
  body_ += '\n';
  ++count_;
}
std::string VectorWriter::finish() { return head_ + "count " + std::to_string(count_) + "\nbegin\n" + body_ + "end\n"; }

// ---- SHA-256 (FIPS 180-4 §6.2) ------------------------------------------------------------
// The round constants are the first 32 fractional bits of the cube roots of the first
// 64 primes and the initial hash the first 32 fractional bits of the square roots of
// the first 8 primes (FIPS 180-4 §4.2.2, §5.3.3); they are computed here with exact
// integer roots rather than typed in.

namespace {
using u128 = unsigned __int128;

std::uint64_t iroot(u128 v, int n) {  // floor(v^(1/n)) for n = 2, 3
  std::uint64_t lo = 0, hi = std::uint64_t{1} << (n == 2 ? 63 : 43);
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo + 1) / 2;
    u128 p = mid;
    for (int i = 1; i < n; ++i) p *= mid;
    if (p <= v)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

struct ShaConstants {
  std::array<std::uint32_t, 64> k{};
  std::array<std::uint32_t, 8> h0{};
  ShaConstants() {
    int found = 0;
    for (std::uint64_t p = 2; found < 64; ++p) {
      bool prime = true;
      for (std::uint64_t d = 2; d * d <= p; ++d)
        if (p % d == 0) prime = false;
      if (!prime) continue;
      k[static_cast<std::size_t>(found)] = static_cast<std::uint32_t>(iroot(static_cast<u128>(p) << 96, 3));
      if (found < 8)
        h0[static_cast<std::size_t>(found)] = static_cast<std::uint32_t>(iroot(static_cast<u128>(p) << 64, 2));
      ++found;
    }
  }
};
const ShaConstants& sha_constants() {
  static const ShaConstants c;
  return c;
}
inline std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
}  // namespace

Sha256::Sha256() : h_(sha_constants().h0) {}

void Sha256::block(const std::uint8_t* p) {
  const auto& K = sha_constants().k;
  std::uint32_t w[64];
  for (int t = 0; t < 16; ++t)
    w[t] = (std::uint32_t{p[4 * t]} << 24) | (std::uint32_t{p[4 * t + 1]} << 16) | (std::uint32_t{p[4 * t + 2]} << 8) |
           std::uint32_t{p[4 * t + 3]};
  for (int t = 16; t < 64; ++t) {
    const std::uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const std::uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  std::uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
  for (int t = 0; t < 64; ++t) {
    const std::uint32_t S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    const std::uint32_t ch = (e & f) ^ (~e & g);
    const std::uint32_t t1 = h + S1 + ch + K[static_cast<std::size_t>(t)] + w[t];
    const std::uint32_t S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    const std::uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    const std::uint32_t t2 = S0 + maj;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h_[0] += a;
  h_[1] += b;
  h_[2] += c;
  h_[3] += d;
  h_[4] += e;
  h_[5] += f;
  h_[6] += g;
  h_[7] += h;
}

void Sha256::update(const void* data, std::size_t n) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  total_ += n;
  while (n > 0) {
    const std::size_t take = std::min(n, 64 - used_);
    std::copy(p, p + take, buf_.begin() + static_cast<std::ptrdiff_t>(used_));
    used_ += take;
    p += take;
    n -= take;
    if (used_ == 64) {
      block(buf_.data());
      used_ = 0;
    }
  }
}

std::array<std::uint8_t, 32> Sha256::digest() {
  const std::uint64_t bits = total_ * 8;
  const std::uint8_t one = 0x80;
  update(&one, 1);
  const std::uint8_t zero = 0;
  while (used_ != 56) update(&zero, 1);
  std::uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<std::uint8_t>(bits >> (56 - 8 * i));
  update(len, 8);
  std::array<std::uint8_t, 32> out{};
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j)
      out[static_cast<std::size_t>(4 * i + j)] =
          static_cast<std::uint8_t>(h_[static_cast<std::size_t>(i)] >> (24 - 8 * j));
  return out;
}

std::string Sha256::hex(std::string_view data) {
  Sha256 s;
  s.update(data.data(), data.size());
  const auto d = s.digest();
  std::string o;
  for (auto b : d) append_hex(o, b, 2);
  return o;
}

// ---- MANIFEST (§31.5) ----------------------------------------------------------------------

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw VectorError(p.string() + ": cannot open");
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

bool safe_relative(std::string_view path) {
  if (path.empty() || path.front() == '/' || path.find("..") != std::string_view::npos) return false;
  for (char c : path)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
          c == '.' || c == '/'))
      return false;
  return true;
}

}  // namespace

std::vector<ManifestEntry> read_manifest(const std::string& dir) {
  const fs::path mp = fs::path(dir) / "MANIFEST";
  if (!fs::exists(mp))
    throw VectorError(mp.string() + ": no MANIFEST (run `numref vectors generate --out " + dir + "`)");
  std::istringstream in(read_file(mp));
  std::vector<ManifestEntry> out;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const std::string where = mp.string() + ":" + std::to_string(n);
    if (line.size() < 67 || line[64] != ' ' || line[65] != ' ')
      throw VectorError(where + ": expected '<sha256>  <path>'");
    const std::string sha = line.substr(0, 64), path = line.substr(66);
    if (sha.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw VectorError(where + ": '" + sha + "' is not a lowercase hex sha256");
    if (!safe_relative(path)) throw VectorError(where + ": unsafe or malformed path '" + path + "'");
    if (!out.empty() && !(out.back().path < path))
      throw VectorError(where + ": paths must be sorted and unique ('" + path + "' after '" + out.back().path + "')");
    out.push_back({sha, path});
  }
  return out;
}

std::string manifest_text(std::vector<ManifestEntry> entries) {
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  std::string s;
  for (const auto& e : entries) s += e.sha256 + "  " + e.path + "\n";
  return s;
}

const Family& vector_family(const VectorReader& r, const std::string& name) {
  const std::string& op = r.header().get("op");
  const Family* fam = registry().find(op);
  if (!fam) throw VectorError(name + ": unknown op '" + op + "'");
  return *fam;
}

std::unique_ptr<VectorFileReader> open_case_reader(const Family& f, const VectorReader& r, const std::string& name,
                                                   const std::vector<std::string>& profiles) {
  try {
    return f.open_vectors(r.header(), profiles);
  } catch (const std::invalid_argument& e) {
    throw VectorError(name + ": " + e.what());
  }
}

void read_case_line(VectorFileReader& reader, const VectorReader& r, const std::vector<std::string_view>& fields,
                    std::string_view note, std::vector<VectorCase>& cases) {
  cases.clear();
  try {
    reader.read(fields, note, cases);
  } catch (const VectorError& e) {
    throw VectorError(r.where() + ": " + e.what());
  } catch (const std::invalid_argument& e) {
    throw VectorError(r.where() + ": " + e.what());
  }
}

std::uint64_t parse_vector_text(std::istream& in, const std::string& name) {
  VectorReader r(in, name);
  const auto reader = open_case_reader(vector_family(r, name), r, name, {});
  std::vector<std::string_view> fields;
  std::string_view note;
  std::vector<VectorCase> cases;
  std::uint64_t n = 0;
  while (r.next(fields, note)) {
    read_case_line(*reader, r, fields, note, cases);
    ++n;
  }
  return n;
}

VerifyResult verify_directory(const std::string& dir, bool against_generator) {
  VerifyResult res;
  std::vector<ManifestEntry> man;
  try {
    man = read_manifest(dir);
  } catch (const VectorError& e) {
    res.problems.push_back(e.what());
    return res;
  }
  std::set<std::string> listed;
  for (const auto& e : man) {
    listed.insert(e.path);
    const fs::path p = fs::path(dir) / e.path;
    if (!fs::exists(p)) {
      res.problems.push_back(e.path + ": listed in MANIFEST but missing");
      continue;
    }
    const std::string text = read_file(p);
    const std::string sha = Sha256::hex(text);
    if (sha != e.sha256) {
      res.problems.push_back(e.path + ": sha256 " + sha + " differs from the MANIFEST's " + e.sha256 +
                             " (edited by hand? regenerate with `numref vectors generate`)");
      continue;
    }
    try {
      std::istringstream in(text);
      res.cases += parse_vector_text(in, e.path);
      ++res.files;
    } catch (const VectorError& err) {
      res.problems.push_back(err.what());
    }
  }
  for (const auto& ent : fs::recursive_directory_iterator(dir)) {
    if (!ent.is_regular_file()) continue;
    const std::string rel = fs::relative(ent.path(), dir).generic_string();
    if (rel == "MANIFEST") continue;
    if (!listed.count(rel)) res.problems.push_back(rel + ": not listed in MANIFEST");
  }
  if (against_generator) {
    const auto gen = generate_all_vectors();
    std::set<std::string> generated;
    for (const auto& g : gen) {
      generated.insert(g.path);
      const fs::path p = fs::path(dir) / g.path;
      if (!fs::exists(p)) {
        res.problems.push_back(g.path + ": produced by the generator but missing from " + dir + " (drift)");
        continue;
      }
      if (read_file(p) != g.text)
        res.problems.push_back(
            g.path + ": differs from the generator's output (drift: regenerate with `numref vectors generate`)");
    }
    for (const auto& e : man)
      if (!generated.count(e.path)) res.problems.push_back(e.path + ": no longer produced by the generator (drift)");
    const auto want = [&] {
      std::vector<ManifestEntry> m;
      for (const auto& g : gen) m.push_back({Sha256::hex(g.text), g.path});
      return manifest_text(m);
    }();
    if (fs::exists(fs::path(dir) / "MANIFEST") && read_file(fs::path(dir) / "MANIFEST") != want)
      res.problems.push_back("MANIFEST: differs from the generator's manifest (drift)");
  }
  return res;
}

std::vector<VectorFileText> generate_all_vectors() {
  std::vector<VectorFileText> out;
  for (const auto& f : registry().all()) f->generate_vectors(out);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  for (std::size_t i = 1; i < out.size(); ++i)
    if (out[i].path == out[i - 1].path)
      throw std::logic_error("two generated vector files share the path " + out[i].path);
  return out;
}

WriteVectorsResult write_vectors(const std::string& dir, const std::vector<VectorFileText>& files) {
  std::error_code ec;
  const fs::path root(dir);
  const auto st = fs::status(root, ec);
  if (fs::exists(st) && !fs::is_directory(st)) throw OutputError(dir + ": exists and is not a directory");
  // §35.3 What an earlier run of the generator wrote is what its MANIFEST lists; a MANIFEST
  // that numref did not write is not replaced.
  const fs::path mp = root / "MANIFEST";
  std::vector<ManifestEntry> old;
  if (fs::exists(fs::symlink_status(mp, ec))) {
    try {
      old = read_manifest(dir);
    } catch (const VectorError& e) {
      throw OutputError(std::string(e.what()) + "; not a MANIFEST written by numref, refusing to replace it");
    }
  }
  // §35.1 Every file goes to a temporary file first; all are renamed into place (the MANIFEST
  // last) only after every one was written and closed without error.
  OutputSet out;
  std::set<std::string> keep;
  std::vector<ManifestEntry> man;
  for (const auto& f : files) {
    const fs::path p = root / f.path;
    fs::create_directories(p.parent_path(), ec);
    if (ec) throw OutputError(p.parent_path().string() + ": cannot create the directory: " + ec.message());
    OutputFile& o = out.add(p.string());
    o.write(f.text);
    o.close_checked();  // one open file at a time, however many files the generator makes
    keep.insert(f.path);
    man.push_back({Sha256::hex(f.text), f.path});
  }
  OutputFile& m = out.add(mp.string());
  m.write(manifest_text(man));
  m.close_checked();
  out.commit_all();

  // §35.3 A file the old MANIFEST listed that the generator no longer produces is removed,
  // if it still holds what the generator wrote (its sha256); nothing else is ever removed,
  // no directory included.
  WriteVectorsResult res;
  for (const auto& e : old) {
    if (keep.count(e.path) || fs::path(e.path).extension() != ".vec") continue;
    const fs::path p = root / e.path;
    if (!fs::is_regular_file(fs::symlink_status(p, ec))) continue;
    if (Sha256::hex(read_file(p)) != e.sha256) {
      res.kept.push_back(e.path);
      continue;
    }
    if (!fs::remove(p, ec) || ec) throw OutputError(p.string() + ": cannot remove the stale file: " + ec.message());
    res.removed.push_back(e.path);
  }
  return res;
}

}  // namespace numref::conform
