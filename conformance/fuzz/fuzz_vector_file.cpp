// libFuzzer target: the golden-vector file parser (spec §31). Any input must either
// parse or be rejected with a VectorError; anything else (another exception, a crash, a
// sanitizer report, a hang) is a bug.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "numref/conform/vectors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    (void)numref::conform::parse_vector_text(in, "fuzz.vec");
  } catch (const numref::conform::VectorError&) {}
  return 0;
}
