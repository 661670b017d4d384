// numref — NumPy .npy files.                                      spec §19.7
#include "numref/npy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

namespace numref::npy {

namespace {

struct DtypeInfo {
  Dtype d;
  std::string_view descr;
  std::size_t size;
};
constexpr DtypeInfo kDtypes[] = {
    {Dtype::f4, "<f4", 4}, {Dtype::f2, "<f2", 2}, {Dtype::u2, "<u2", 2}, {Dtype::v2, "<V2", 2}, {Dtype::u1, "|u1", 1},
    {Dtype::i1, "|i1", 1}, {Dtype::u4, "<u4", 4}, {Dtype::v1, "|V1", 1}, {Dtype::f1, "<f1", 1},
};

[[noreturn]] void fail(const std::string& what) { throw NpyError(".npy: " + what); }

// A strict reader of the header dict (a Python literal). Bounds-checked everywhere.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view s) : s_(s) {}

  void parse(std::string& descr, bool& fortran, std::vector<std::size_t>& shape) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    skip_ws();
    expect('{');
    for (;;) {
      skip_ws();
      if (peek() == '}') {
        ++i_;
        break;
      }
      const std::string key = string_literal();
      skip_ws();
      expect(':');
      skip_ws();
      if (key == "descr") {
        if (have_descr) fail("header has 'descr' twice");
        descr = string_literal();
        have_descr = true;
      } else if (key == "fortran_order") {
        if (have_fortran) fail("header has 'fortran_order' twice");
        fortran = boolean();
        have_fortran = true;
      } else if (key == "shape") {
        if (have_shape) fail("header has 'shape' twice");
        shape = tuple();
        have_shape = true;
      } else {
        fail("header has an unknown key '" + printable(key) + "'");
      }
      skip_ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      skip_ws();
      expect('}');
      break;
    }
    // the rest of the header: spaces (padding) and a final newline
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\0')) ++i_;
    if (i_ >= s_.size() || s_[i_] != '\n') fail("header does not end with a newline after the dict");
    ++i_;
    if (i_ != s_.size()) fail("header has characters after its terminating newline");
    if (!have_descr) fail("header lacks 'descr'");
    if (!have_fortran) fail("header lacks 'fortran_order'");
    if (!have_shape) fail("header lacks 'shape'");
  }

 private:
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("malformed header: expected '") + c + "' at offset " + std::to_string(i_));
    ++i_;
  }
  // At most 32 bytes of header text for a message: control characters and bytes above 0x7e as
  // \xHH (the CLI's escape, docs/cli.md), so the message stays one line and names the byte.
  static std::string printable(std::string_view v) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string o;
    for (char ch : v.substr(0, 32)) {
      const auto c = static_cast<unsigned char>(ch);
      if (c >= 0x20 && c < 0x7f) {
        o.push_back(ch);
      } else {
        o += "\\x";
        o.push_back(kHex[c >> 4]);
        o.push_back(kHex[c & 15]);
      }
    }
    return o;
  }
  std::string string_literal() {
    const char q = peek();
    if (q != '\'' && q != '"') fail("malformed header: expected a quoted string at offset " + std::to_string(i_));
    ++i_;
    std::string out;
    while (i_ < s_.size() && s_[i_] != q) {
      if (s_[i_] == '\\') fail("malformed header: escapes in strings are not supported");
      out.push_back(s_[i_++]);
      if (out.size() > 64) fail("malformed header: string longer than 64 characters");
    }
    if (i_ >= s_.size()) fail("malformed header: unterminated string");
    ++i_;
    return out;
  }
  bool boolean() {
    if (s_.substr(i_, 4) == "True") {
      i_ += 4;
      return true;
    }
    if (s_.substr(i_, 5) == "False") {
      i_ += 5;
      return false;
    }
    fail("malformed header: fortran_order must be True or False");
  }
  std::vector<std::size_t> tuple() {
    std::vector<std::size_t> dims;
    expect('(');
    for (;;) {
      skip_ws();
      if (peek() == ')') {
        ++i_;
        return dims;
      }
      if (peek() < '0' || peek() > '9') fail("malformed header: shape must be a tuple of non-negative integers");
      std::size_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        const std::size_t dgt = static_cast<std::size_t>(peek() - '0');
        if (v > (std::numeric_limits<std::size_t>::max() - dgt) / 10) fail("shape dimension too large");
        v = v * 10 + dgt;
        ++i_;
      }
      if (peek() == 'L') ++i_;  // Python 2 long suffix
      dims.push_back(v);
      if (dims.size() > 32) fail("shape has more than 32 dimensions");
      skip_ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      skip_ws();
      expect(')');
      if (dims.size() == 1) fail("malformed header: a 1-tuple shape needs a trailing comma, e.g. (5,)");
      return dims;
    }
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

}  // namespace

std::string_view descr_of(Dtype d) {
  for (const auto& t : kDtypes)
    if (t.d == d) return t.descr;
  return "?";
}

std::size_t itemsize(Dtype d) {
  for (const auto& t : kDtypes)
    if (t.d == d) return t.size;
  return 0;
}

std::size_t Array::count() const {
  std::size_t n = 1;
  for (std::size_t d : shape) n *= d;
  return n;
}

Array parse_header(std::span<const std::uint8_t> bytes) {
  static constexpr std::uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (bytes.size() < 10) fail("file too short for the .npy preamble (" + std::to_string(bytes.size()) + " bytes)");
  if (std::memcmp(bytes.data(), kMagic, 6) != 0) fail("wrong magic (not a NumPy .npy file)");
  const unsigned major = bytes[6], minor = bytes[7];
  std::size_t hlen = 0, pre = 0;
  if (major == 1) {
    hlen = static_cast<std::size_t>(bytes[8]) | (static_cast<std::size_t>(bytes[9]) << 8);
    pre = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail("file too short for a version " + std::to_string(major) + " preamble");
    hlen = static_cast<std::size_t>(bytes[8]) | (static_cast<std::size_t>(bytes[9]) << 8) |
           (static_cast<std::size_t>(bytes[10]) << 16) | (static_cast<std::size_t>(bytes[11]) << 24);
    pre = 12;
  } else {
    fail("unsupported format version " + std::to_string(major) + "." + std::to_string(minor));
  }
  if (minor != 0) fail("unsupported format version " + std::to_string(major) + "." + std::to_string(minor));
  if (hlen > bytes.size() - pre) fail("header length " + std::to_string(hlen) + " runs past the end of the file");
  const std::string_view header(reinterpret_cast<const char*>(bytes.data() + pre), hlen);
  std::string descr;
  bool fortran = false;
  Array a{};
  HeaderParser(header).parse(descr, fortran, a.shape);
  if (fortran) fail("Fortran-order (column-major) arrays are not supported; save with np.ascontiguousarray");
  if (!descr.empty() && descr[0] == '>')
    fail("big-endian data ('" + descr + "') is not supported; convert with arr.astype(arr.dtype.newbyteorder('<'))");
  bool found = false;
  for (const auto& t : kDtypes) {
    // '|V2' is the same as '<V2'; byte types may be written with '|' or '<' (ml_dtypes' fp8
    // arrays are saved as '<V1' or '|V1' by NumPy versions, float8_e5m2 as '<f1').
    const bool byte_order = descr.size() == 3 && (descr[0] == '<' || descr[0] == '|');
    const bool same = descr == t.descr || (t.d == Dtype::v2 && descr == "|V2") ||
                      (t.size == 1 && byte_order && descr.substr(1) == t.descr.substr(1));
    if (same) {
      a.dtype = t.d;
      found = true;
      break;
    }
  }
  if (!found)
    fail(
        "unsupported dtype '" + descr +
        "' (supported: <f4 float32, <f2 float16, <u2 / <V2 16-bit patterns, |u1 / |V1 / <f1 8-bit patterns, |i1, <u4)");
  std::size_t n = 1;
  for (std::size_t d : a.shape) {
    if (d != 0 && n > std::numeric_limits<std::size_t>::max() / d) fail("shape element count overflows");
    n *= d;
  }
  const std::size_t isz = itemsize(a.dtype);
  if (n > std::numeric_limits<std::size_t>::max() / isz) fail("shape byte count overflows");
  a.data_offset = pre + hlen;
  return a;
}

Array parse(std::span<const std::uint8_t> bytes) {
  const Array a = parse_header(bytes);
  const std::size_t n = a.count(), isz = itemsize(a.dtype);
  const std::size_t have = bytes.size() - a.data_offset;
  if (have < n * isz)
    fail("truncated data: the shape needs " + std::to_string(n * isz) + " bytes, the file has " + std::to_string(have));
  if (have > n * isz)
    fail("trailing bytes: the shape needs " + std::to_string(n * isz) + " bytes, the file has " + std::to_string(have));
  return a;
}

std::vector<std::uint8_t> encode(Dtype d, std::span<const std::size_t> shape, std::span<const std::uint8_t> data) {
  std::size_t n = 1;
  for (std::size_t s : shape) n *= s;
  if (data.size() != n * itemsize(d))
    throw NpyError(".npy: encode: " + std::to_string(data.size()) + " data bytes for a shape of " + std::to_string(n) +
                   " elements of " + std::to_string(itemsize(d)) + " bytes");
  std::string dict = "{'descr': '" + std::string(descr_of(d)) + "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    dict += std::to_string(shape[i]);
    if (shape.size() == 1 || i + 1 < shape.size()) dict += ",";
    if (i + 1 < shape.size()) dict += " ";
  }
  dict += "), }";
  std::size_t total = 10 + dict.size() + 1;  // preamble + dict + '\n'
  const std::size_t pad = (64 - total % 64) % 64;
  dict.append(pad, ' ');
  dict.push_back('\n');
  if (dict.size() > 65535) throw NpyError(".npy: encode: header too long");
  std::vector<std::uint8_t> out(10 + dict.size() + data.size());
  static constexpr std::uint8_t kPre[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  std::memcpy(out.data(), kPre, 8);
  out[8] = static_cast<std::uint8_t>(dict.size() & 0xFF);
  out[9] = static_cast<std::uint8_t>(dict.size() >> 8);
  std::memcpy(out.data() + 10, dict.data(), dict.size());
  if (!data.empty()) std::memcpy(out.data() + 10 + dict.size(), data.data(), data.size());
  return out;
}

namespace {
// Reads from fd until `buf` holds `want` bytes or the file ends, in chunks, so that memory grows
// only with the bytes that actually arrive (a header may claim any size; /dev/zero never ends).
void read_upto(int fd, const std::string& path, std::vector<std::uint8_t>& buf, std::size_t want) {
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  while (buf.size() < want) {
    const std::size_t old = buf.size();
    buf.resize(old + std::min(kChunk, want - old));
    const ssize_t r = ::read(fd, buf.data() + old, buf.size() - old);
    if (r < 0) {
      buf.resize(old);
      if (errno == EINTR) continue;
      throw NpyError(path + ": read error: " + std::strerror(errno));
    }
    buf.resize(old + static_cast<std::size_t>(r));
    if (r == 0) return;
  }
}
}  // namespace

std::vector<std::uint8_t> read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw NpyError(path + ": cannot open: " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) throw NpyError(path + ": is a directory, not a .npy file");
  // The preamble, then the header, then exactly the data the header declares and one byte more
  // (so that trailing bytes are reported): parse() gives every error its message.
  auto fail_with_path = [&](const std::vector<std::uint8_t>& b) {
    try {
      return parse_header(b);
    } catch (const NpyError& e) {
      throw NpyError(path + ": " + e.what());
    }
  };
  std::vector<std::uint8_t> bytes;
  read_upto(fd, path, bytes, 10);
  if (bytes.size() == 10 && (bytes[6] == 2 || bytes[6] == 3)) read_upto(fd, path, bytes, 12);
  std::size_t hlen = 0, pre = 0;
  if (bytes.size() >= 10 && bytes[6] == 1) {
    hlen = static_cast<std::size_t>(bytes[8]) | (static_cast<std::size_t>(bytes[9]) << 8);
    pre = 10;
  } else if (bytes.size() >= 12) {
    hlen = static_cast<std::size_t>(bytes[8]) | (static_cast<std::size_t>(bytes[9]) << 8) |
           (static_cast<std::size_t>(bytes[10]) << 16) | (static_cast<std::size_t>(bytes[11]) << 24);
    pre = 12;
  }
  if (pre) read_upto(fd, path, bytes, pre + hlen);
  const Array a = fail_with_path(bytes);                   // throws for a bad preamble or header
  const std::size_t data = a.count() * itemsize(a.dtype);  // parse_header checked the overflow
  if (data > std::numeric_limits<std::size_t>::max() - a.data_offset - 1)
    throw NpyError(path + ": .npy: shape byte count overflows");
  read_upto(fd, path, bytes, a.data_offset + data + 1);
  try {
    parse(bytes);
  } catch (const NpyError& e) {
    throw NpyError(path + ": " + e.what());
  }
  return bytes;
}

void write_file(const std::string& path, std::span<const std::uint8_t> bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw NpyError(path + ": cannot create: " + std::strerror(errno));
  const std::size_t w = std::fwrite(bytes.data(), 1, bytes.size(), f);
  const int c = std::fclose(f);
  if (w != bytes.size() || c != 0) throw NpyError(path + ": write error");
}

}  // namespace numref::npy
