// numref conformance — reading the cases of a golden-vector file, as the runner, `numref
// vectors verify` and `numref export` do.                                       spec §31.2
//
// Private to conformance/src; defined in vectors.cpp.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "numref/conform/core.hpp"
#include "numref/conform/vectors.hpp"

namespace numref::conform {

// The op family a vector file names (`name`: the file, for the message). Throws VectorError
// "<name>: unknown op '<op>'".
const Family& vector_family(const VectorReader& r, const std::string& name);
// The family's reader of the file's case lines for `profiles` (empty = all). Throws
// VectorError (a bad header: "<name>: <why>").
std::unique_ptr<VectorFileReader> open_case_reader(const Family& f, const VectorReader& r, const std::string& name,
                                                   const std::vector<std::string>& profiles);
// The cases of the line r.next() returned, into `cases` (cleared first). A malformed line
// throws VectorError naming the file and line.
void read_case_line(VectorFileReader& reader, const VectorReader& r, const std::vector<std::string_view>& fields,
                    std::string_view note, std::vector<VectorCase>& cases);

}  // namespace numref::conform
