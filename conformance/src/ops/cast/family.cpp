// numref conformance — the `cast` op family: registration, the plan of a level and the
// header of its vector files.                                         spec §11, §31.4, §34.3
#include <stdexcept>

#include "../kit.hpp"
#include "cast.hpp"

namespace numref::conform::cast {

namespace {

class CastFamily final : public Family {
 public:
  CastFamily() : Family("cast", "§11", 0) {}

  ParamsPtr parse_params(std::string_view text) const override { return parse(text); }

  // Selectors (--ops): "cast", "cast:FROM", "cast:FROM:TO", "*" for any format.
  void plan(const PlanRequest& req, std::vector<GeneratedSuite>& out) const override {
    check_selectors(name(), req.selectors, 2, 2);
    for (const auto& prof : req.profiles) {
      const Profile& pr = kit::profile_by_name(prof);
      for (const auto& from : kFormats)
        for (const auto& to : kFormats) {
          if (!generated_pair(from, to, pr, req.level)) continue;  // §34.3
          if (!selector_match(std::string(from.name) + " " + std::string(to.name), req.selectors)) continue;
          const Level level = pair_level(from, to, req.level);  // §34.3: extra P3109 members
          for (const auto& v : variants(level, pr.for_cast(from, to), from, to)) {
            auto p = make(from, to, prof, v.policy);
            out.push_back({p, cases(p, level, req.seed)});
          }
        }
    }
  }

  void generate_vectors(std::vector<VectorFileText>& out) const override { cast::generate_vectors(out); }

  // §31.4 from, to, profile, the policy in describe() form, and how it derives from the profile.
  std::vector<HeaderLine> header(const Params& p) const override {
    const auto& c = static_cast<const CastParams&>(p);
    const std::string ov = c.overrides();
    return {{"from", std::string(c.from().name)},
            {"to", std::string(c.to().name)},
            {"profile", c.profile()},
            {"policy", describe(c.policy())},
            {"derived", "profile " + c.profile() + (ov.empty() ? "" : " with " + ov), false}};  // informative
  }

  ParamsPtr params_from_header(const VectorHeader& h, std::size_t, std::size_t) const override {
    return parse(h.get("from") + " " + h.get("to") + " " + h.get("profile") + " " + h.get("policy"));
  }

  std::unique_ptr<VectorFileReader> open_special(const VectorHeader& h, const std::string& kind,
                                                 const std::vector<std::string>& profiles) const override {
    if (kind == "divergence") return open_divergence(h, profiles);
    return Family::open_special(h, kind, profiles);
  }
};

}  // namespace

const Family& family() {
  static const CastFamily f;
  return f;
}

}  // namespace numref::conform::cast

// Registration, called from the list CMake generates from the folders of src/ops.
void numref_conform_register_cast(numref::conform::Registry& r) { r.add(numref::conform::cast::family()); }
