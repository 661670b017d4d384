// numref — NumPy .npy files (format versions 1.0, 2.0, 3.0).       spec §19.7
//
// Reading is a pure function of the file's bytes (parse()), so that it can be fuzzed. It
// accepts C-order little-endian arrays of the dtypes numref uses and rejects everything
// else with an NpyError whose message names the problem: wrong magic, unknown version,
// header length past the end, a header that is not the dict {'descr', 'fortran_order',
// 'shape'}, Fortran order, big-endian or unsupported dtypes, a shape whose element count
// overflows, truncated data, trailing bytes.
//
// dtypes (descr): '<f4' float32, '<f2' float16, '<u2' uint16, '<V2' / '|V2' 2-byte void (how
// NumPy saves an ml_dtypes bfloat16 array), '|u1' uint8, '|i1' int8, '<u4' uint32, and the
// 1-byte types NumPy writes for ml_dtypes' 8-, 6- and 4-bit floats: '|V1' / '<V1' 1-byte void
// (float8_e4m3fn, float8_e8m0fnu, float6_*, float4_e2m1fn, ...) and '<f1' / '|f1' (float8_e5m2,
// ml_dtypes 0.6). A '<u2', 'V2', '|u1', 'V1' or 'f1' array carries bit patterns whose format the
// caller names (bf16 or f16; f8e4m3fn, f8e5m2, ...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace numref::npy {

struct NpyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class Dtype : std::uint8_t { f4, f2, u2, v2, u1, i1, u4, v1, f1 };
std::string_view descr_of(Dtype d);  // canonical descr written by encode(): "<f4", "<V2", "|u1", ...
std::size_t itemsize(Dtype d);

struct Array {
  Dtype dtype;
  std::vector<std::size_t> shape;  // () for a 0-d array
  std::size_t data_offset = 0;     // byte offset of the data in the parsed buffer
  std::size_t count() const;       // product of the shape (1 for 0-d)
};

// §19.7 Parses and validates a whole .npy file held in memory (header AND data size).
Array parse(std::span<const std::uint8_t> bytes);
// §19.7 The preamble and header alone (bytes may end there or hold any part of the data): every
// check of parse() but the data size. read_file() uses it to read no more than the data declared.
Array parse_header(std::span<const std::uint8_t> bytes);

// §19.7 The bytes of a .npy file (version 1.0, C order, header padded to 64 bytes).
// `data` must hold count(shape) * itemsize(d) bytes (little-endian values).
std::vector<std::uint8_t> encode(Dtype d, std::span<const std::size_t> shape, std::span<const std::uint8_t> data);

// File helpers; errors name the path. read_file() reads a .npy file of any kind (a regular file,
// a FIFO, a device) and validates it as parse() does, reading the preamble and header first and
// then no more than the data they declare: a directory, /dev/zero or an endless stream is an
// NpyError at once, never an unbounded read. Returns the whole file.
std::vector<std::uint8_t> read_file(const std::string& path);
void write_file(const std::string& path, std::span<const std::uint8_t> bytes);

}  // namespace numref::npy
