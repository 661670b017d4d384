// Helpers shared by the op-family unit tests: one case run through the reference, compared
// and rendered as the runner does (spec §34.4), and the error of parsing a vector file (§31).
#pragma once

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "numref/conform/core.hpp"
#include "numref/conform/vectors.hpp"

namespace numref::conform::test {

// One case of suite P: its input words (the "x" column set from `x`), the reference's results,
// and a copy the test edits into "what a wrong backend returns".
template <class P>
struct OneCase {
  std::shared_ptr<const P> p;
  std::vector<std::uint32_t> in, exp, got;
  CaseView vin() const { return single_case(in.data(), in.size()); }
  CaseView ve() const { return single_case(exp.data(), exp.size()); }
  CaseView vg() const { return single_case(got.data(), got.size()); }
  Finding compare(CompareOptions o = {}) const { return conform::compare(*p, vin(), ve(), vg(), o); }
  MismatchText text(CompareOptions o = {}) const { return render_mismatch(*p, vin(), ve(), vg(), o); }
};

template <class P>
OneCase<P> run_case(std::shared_ptr<const P> p, const std::vector<std::uint32_t>& x) {
  OneCase<P> r{p, {}, {}, {}};
  r.in.assign(static_cast<std::size_t>(p->schema().in), 0);
  std::copy(x.begin(), x.end(), r.in.begin() + p->schema().find("x", false)->at);
  r.exp.assign(static_cast<std::size_t>(p->schema().out), 0);
  p->expected(1, r.in.data(), r.exp.data());
  r.got = r.exp;
  return r;
}

// Parses a vector file's text; "" or the error message.
inline std::string vector_error(const std::string& text) {
  std::istringstream in(text);
  try {
    parse_vector_text(in, "t.vec");
  } catch (const VectorError& e) {
    return e.what();
  }
  return "";
}

}  // namespace numref::conform::test
