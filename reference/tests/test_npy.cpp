// numref tests — .npy reading and writing.                        spec §19.7
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "numref/npy.hpp"

namespace numref::npy {
namespace {

std::vector<std::uint8_t> bytes_of(const std::string& s) { return std::vector<std::uint8_t>(s.begin(), s.end()); }

// The file NumPy 2.x writes for np.save(f, np.array([[1, 2], [3, 4]], np.float32)):
// magic, version 1.0, header length 0x76 = 118, the dict padded with spaces to 128 bytes
// in total, then 16 data bytes.
std::vector<std::uint8_t> numpy_f32_2x2() {
  std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";
  h.append(118 - h.size() - 1, ' ');
  h.push_back('\n');
  std::string f = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + h;
  const float v[4] = {1, 2, 3, 4};
  f.append(reinterpret_cast<const char*>(v), 16);
  return bytes_of(f);
}

TEST(Npy, ParsesWhatNumpyWrites) {
  const auto b = numpy_f32_2x2();
  const Array a = parse(b);
  EXPECT_EQ(a.dtype, Dtype::f4);
  EXPECT_EQ(a.shape, (std::vector<std::size_t>{2, 2}));
  EXPECT_EQ(a.data_offset, 128u);
  float v;
  std::memcpy(&v, b.data() + a.data_offset + 12, 4);
  EXPECT_EQ(v, 4.0f);
}

TEST(Npy, EncodeRoundTripsEveryDtype) {
  for (Dtype d : {Dtype::f4, Dtype::f2, Dtype::u2, Dtype::v2, Dtype::u1, Dtype::i1, Dtype::u4}) {
    const std::vector<std::size_t> shape = {3, 5};
    std::vector<std::uint8_t> data(15 * itemsize(d));
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7);
    const auto f = encode(d, shape, data);
    EXPECT_EQ((f.size() - data.size()) % 64, 0u) << descr_of(d);  // header padded to 64
    const Array a = parse(f);
    EXPECT_EQ(a.dtype, d);
    EXPECT_EQ(a.shape, shape);
    EXPECT_TRUE(std::equal(data.begin(), data.end(), f.begin() + static_cast<std::ptrdiff_t>(a.data_offset)));
  }
  // 1-D shape is written (n,), 0-d ()
  const std::vector<std::size_t> one = {4};
  const std::vector<std::uint8_t> four(4);
  const auto f = encode(Dtype::u1, one, four);
  EXPECT_NE(std::string(f.begin(), f.end()).find("'shape': (4,)"), std::string::npos);
  EXPECT_EQ(parse(f).shape, one);
}

// Each malformation is rejected with a message naming it.
void expect_error(const std::vector<std::uint8_t>& b, const std::string& needle) {
  try {
    parse(b);
    ADD_FAILURE() << "accepted; expected an error containing '" << needle << "'";
  } catch (const NpyError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

std::vector<std::uint8_t> with_header(const std::string& dict, std::size_t data_bytes, int major = 1) {
  std::string h = dict;
  const std::size_t pre = major == 1 ? 10 : 12;
  while ((pre + h.size() + 1) % 64) h.push_back(' ');
  h.push_back('\n');
  std::string f = "\x93NUMPY";
  f.push_back(static_cast<char>(major));
  f.push_back(0);
  f.push_back(static_cast<char>(h.size() & 0xFF));
  f.push_back(static_cast<char>(h.size() >> 8));
  if (major != 1) f.append(2, '\0');
  f += h;
  f.append(data_bytes, '\x01');
  return bytes_of(f);
}

TEST(Npy, RejectsMalformedFiles) {
  auto b = numpy_f32_2x2();
  b[1] = 'X';
  expect_error(b, "wrong magic");
  expect_error(bytes_of("\x93NUM"), "too short");
  b = numpy_f32_2x2();
  b[6] = 9;
  expect_error(b, "unsupported format version 9.0");
  b = numpy_f32_2x2();
  b[8] = 0xFF;  // header length past the end
  b[9] = 0xFF;
  expect_error(b, "runs past the end");
  b = numpy_f32_2x2();
  b.pop_back();
  expect_error(b, "truncated data");
  b = numpy_f32_2x2();
  b.push_back(0);
  expect_error(b, "trailing bytes");
  expect_error(with_header("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16), "Fortran");
  expect_error(with_header("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }", 16), "big-endian");
  expect_error(with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", 32),
               "unsupported dtype '<f8'");
  expect_error(with_header("{'descr': '<f4', 'fortran_order': False, }", 4), "lacks 'shape'");
  expect_error(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), 'x': 1}", 16), "unknown key");
  expect_error(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -2), }", 16), "shape");
  expect_error(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4), }", 16), "trailing comma");
  expect_error(with_header("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", 8), "True or False");
  expect_error(with_header("['descr', '<f4']", 0), "malformed header");
  expect_error(
      with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999, 99999999999), }", 0),
      "overflows");
  // version 2.0 with its 4-byte header length is accepted
  EXPECT_EQ(parse(with_header("{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", 3, 2)).count(), 3u);
  // '|V2' (ml_dtypes bfloat16 saved by NumPy) is the 2-byte void type
  EXPECT_EQ(parse(with_header("{'descr': '|V2', 'fortran_order': False, 'shape': (1,), }", 2)).dtype, Dtype::v2);
}

// Fuzz-style: random mutations of valid files never crash; they parse or throw NpyError.
RC_GTEST_PROP(Npy, MutatedFilesParseOrThrowNpyError, ()) {
  std::vector<std::uint8_t> f = numpy_f32_2x2();
  const int edits = *rc::gen::inRange(1, 6);
  for (int e = 0; e < edits; ++e) {
    const auto kind = *rc::gen::inRange(0, 3);
    if (f.empty()) break;
    const auto pos = static_cast<std::size_t>(*rc::gen::inRange<std::size_t>(0, f.size()));
    if (kind == 0)
      f[pos] = *rc::gen::arbitrary<std::uint8_t>();
    else if (kind == 1)
      f.erase(f.begin() + static_cast<std::ptrdiff_t>(pos));
    else
      f.insert(f.begin() + static_cast<std::ptrdiff_t>(pos), *rc::gen::arbitrary<std::uint8_t>());
  }
  try {
    const Array a = parse(f);
    RC_ASSERT(a.data_offset + a.count() * itemsize(a.dtype) == f.size());
  } catch (const NpyError&) {}
}

}  // namespace
}  // namespace numref::npy
