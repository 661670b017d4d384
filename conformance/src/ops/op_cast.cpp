// numref conformance — the `cast` op family: registration and the plan of a level.
//                                                                    spec §11, §33.3
#include <algorithm>
#include <stdexcept>

#include "cast.hpp"

namespace numref::conform::cast {

namespace {

// Selector syntax (--ops): "cast", "cast:FROM", "cast:FROM:TO", "*" for any format.
bool selected(const std::vector<std::string>& sel, const Format& from, const Format& to) {
  if (sel.empty()) return true;
  for (const auto& s : sel) {
    if (s.empty()) return true;
    const auto c = s.find(':');
    const std::string a = s.substr(0, c);
    const std::string b = c == std::string::npos ? "*" : s.substr(c + 1);
    auto match = [](const std::string& pat, const Format& f) {
      if (pat == "*") return true;
      const auto id = find_format(pat);
      return id && *id == f.id;
    };
    if (match(a, from) && match(b, to)) return true;
  }
  return false;
}

class CastFamily final : public Family {
 public:
  std::string_view name() const override { return "cast"; }
  std::string_view clause() const override { return "§11"; }

  ParamsPtr parse_params(std::string_view text) const override { return parse(text); }

  void plan(const PlanRequest& req, std::vector<GeneratedSuite>& out) const override {
    for (const auto& s : req.selectors) {
      if (s.empty()) continue;
      for (const auto& part : {s.substr(0, s.find(':')), s.find(':') == std::string::npos ? std::string("*")
                                                                                          : s.substr(s.find(':') + 1)})
        if (part != "*" && !find_format(part))
          throw std::invalid_argument("--ops cast:" + s + ": unknown format '" + part + "'");
    }
    for (const auto& prof : req.profiles) {
      const auto id = find_profile(prof);
      if (!id) throw std::invalid_argument("unknown profile '" + prof + "'");
      for (const auto& from : kFormats)
        for (const auto& to : kFormats) {
          if (!selected(req.selectors, from, to)) continue;
          const Policy& base = profile(*id).for_target(to);
          for (const auto& v : variants(req.level, base, from, to)) {
            auto p = make(from, to, prof, v.policy);
            out.push_back({p, cases(p, req.level, req.seed)});
          }
        }
    }
  }

  void generate_vectors(std::vector<VectorFileText>& out) const override { cast::generate_vectors(out); }

  std::unique_ptr<VectorFileReader> open_vectors(const VectorHeader& h,
                                                 const std::vector<std::string>& profiles) const override {
    return cast::open_vectors(h, profiles);
  }
};

}  // namespace

const Family& family() {
  static const CastFamily f;
  return f;
}

}  // namespace numref::conform::cast

// Registration hook, called from the op list CMake generates from the op_*.cpp names.
void numref_conform_register_op_cast(numref::conform::Registry& r) { r.add(numref::conform::cast::family()); }
