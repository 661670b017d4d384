// numref — internal: the names of a table's rows joined for help texts and error messages.
// Included by convert.cpp (format_names) and scale.cpp (scale_rule_names). Not part of the public API.
#pragma once

#include <string>
#include <string_view>

namespace numref::detail {

// The `name` column of `rows`, in order, joined by `sep`.
template <class Rows>
std::string join_names(const Rows& rows, std::string_view sep) {
  std::string s;
  for (const auto& r : rows) {
    if (!s.empty()) s += sep;
    s += r.name;
  }
  return s;
}

}  // namespace numref::detail
