// numref conformance — mma suites: parameters, schema, reference results and C ABI marshalling.
//                                                     spec §36 – §40, §31.10, §32.9, §33.9
#include <algorithm>
#include <stdexcept>

#include "mma.hpp"
#include "numref/conform/abi.hpp"

namespace numref::conform::mma {

namespace {

constexpr std::uint32_t kFlagMask = kInexact | kUnderflow | kOverflow | kInvalid;
std::string flags_decoded(std::uint32_t f) { return flags_text(f); }

MmaType type_of(std::string_view key, const std::string& v) {
  const auto t = find_mma_type(v);
  if (!t) throw std::invalid_argument(std::string(key) + "='" + v + "': not an mma operand type (§36.2)");
  return *t;
}

// The format whose codes a column of type t holds (tf32: binary32 codes; ue4m3: f8e4m3fn codes).
const Format& codes_of(MmaType t) { return format(mma_type(t).format); }

}  // namespace

// ---- parameters ---------------------------------------------------------------------------------

std::string spec_text(const MmaParams::Spec& s) {
  std::string t;
  kit::put(t, "profile", s.profile ? s.profile->name : "?");
  kit::put(t, "a", mma_type(s.a).name);
  kit::put(t, "b", mma_type(s.b).name);
  kit::put(t, "c", mma_type(s.c).name);
  kit::put(t, "shape", std::to_string(s.m) + "x" + std::to_string(s.n));
  kit::put(t, "k", std::to_string(s.k));
  if (s.block) {
    kit::put(t, "block", std::to_string(s.block));
    kit::put(t, "scale", mma_type(s.scale).name);
  }
  return t;
}

MmaParamsPtr parse(std::string_view text) {
  MmaParams::Spec s;
  kit::KeyValues kv(kName, text, false);
  const std::string prof = *kv.take("profile", true, true);
  s.profile = find_mma_profile(prof);
  if (!s.profile) throw std::invalid_argument("profile='" + prof + "': not an mma profile (§39)");
  s.a = type_of("a", *kv.take("a", true, true));
  s.b = type_of("b", *kv.take("b", true, true));
  if (auto v = kv.take("c")) s.c = type_of("c", *v);
  std::tie(s.m, s.n) = kit::shape(*kv.take("shape", true, true));
  s.k = kit::shape("1x" + *kv.take("k", true, true)).second;
  if (auto v = kv.take("block")) s.block = static_cast<int>(kit::shape("1x" + *v).second);
  if (auto v = kv.take("scale")) s.scale = type_of("scale", *v);
  kv.finish();
  return std::make_shared<const MmaParams>(s);
}

MmaParams::MmaParams(const Spec& s) : Params(mma::family()), s_(s) {
  if (!s_.profile) throw std::invalid_argument("mma: no profile");
  kit::View{s_.m, s_.n, false}.check();
  kit::View{s_.m, s_.k, false}.check();
  kit::View{s_.k, s_.n, false}.check();
  ms_.profile = s_.profile;
  ms_.a = s_.a;
  ms_.b = s_.b;
  ms_.c = s_.c;
  ms_.block = s_.block;
  ms_.scale = s_.scale;
  validate(ms_, s_.k);  // §36.3
  Identity id;
  id.text = spec_text(s_);
  id.profile = "ocp";
  id.any_profile = true;  // the model is the mma profile's (§39); conversion profiles do not apply
  id.formats = std::string(mma_type(s_.a).name) + " " + std::string(mma_type(s_.b).name) + " " +
               std::string(mma_type(s_.c).name);
  // §34.12 --ops mma:PROFILE:A:B:C
  id.selector = std::string(s_.profile->name) + " " + id.formats;
  id.label = std::string(s_.profile->name) + " " + std::string(mma_type(s_.a).name) + "x" +
             std::string(mma_type(s_.b).name) + "+" + std::string(mma_type(s_.c).name) + " " + std::to_string(s_.m) +
             "x" + std::to_string(s_.n) + "x" + std::to_string(s_.k) +
             (s_.block ? " block " + std::to_string(s_.block) + " " + std::string(mma_type(s_.scale).name) : "");
  id.clause = "§36";
  set_identity(std::move(id));
  build_schema();
  cop_ = to_c_mma(ms_, s_.m, s_.n, s_.k, text().c_str());  // §32.9
}

// §31.10 / §33.9 the columns of a case, in vector-file order.
void MmaParams::build_schema() {
  Schema& S = schema_;
  kit::tensor_case(S, s_.m, s_.n);
  S.add(kit::named(kit::codes("a", Role::in, codes_of(s_.a), s_.m, s_.k, Place::list), "a", "A codes"));
  S.add(kit::named(kit::codes("b", Role::in, codes_of(s_.b), s_.k, s_.n, Place::list), "b", "B codes"));
  S.add(kit::named(kit::codes("c", Role::in, codes_of(s_.c), s_.m, s_.n, Place::view), "c", "C codes"));
  if (s_.block) {
    const std::size_t nb = s_.k / static_cast<std::size_t>(s_.block);
    S.add(kit::named(kit::codes("sa", Role::in, codes_of(s_.scale), s_.m, nb, Place::list), "scale", "A scales"));
    S.add(kit::named(kit::codes("sb", Role::in, codes_of(s_.scale), nb, s_.n, Place::list), "scale", "B scales"));
  }
  Column d = kit::codes("d", Role::out, codes_of(s_.c), s_.m, s_.n, Place::view);
  d.cls = "value";
  d.what = "D codes";
  S.add(d);
  Column fl = kit::words("flags", Role::opt, 2, 0xFF, s_.m, s_.n, Place::view);
  fl.cap = NUMREF_CAP_FLAGS;
  fl.mask = kFlagMask;
  fl.decode = flags_decoded;
  fl.cls = "flags";
  S.add(fl);

  MmaLayout& L = L_;
  static constexpr kit::ColumnAt<MmaLayout> kAt[] = {{&MmaLayout::a, "a", false},       {&MmaLayout::b, "b", false},
                                                     {&MmaLayout::c, "c", false},       {&MmaLayout::sa, "sa", false},
                                                     {&MmaLayout::sb, "sb", false},     {&MmaLayout::d, "d", true},
                                                     {&MmaLayout::flags, "flags", true}};
  kit::fill_layout(L, S, kAt);
  L.in = S.in;
  L.out = S.out;
}

// ---- reference --------------------------------------------------------------------------------

void MmaParams::expected(std::size_t n, const std::uint32_t* in, std::uint32_t* out) const {
  const std::size_t M = s_.m, N = s_.n, K = s_.k, nb = s_.block ? K / static_cast<std::size_t>(s_.block) : 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t* ci = in + i * static_cast<std::size_t>(L_.in);
    std::uint32_t* co = out + i * static_cast<std::size_t>(L_.out);
    std::vector<std::uint8_t> fl(M * N);
    numref::mma(ms_, M, N, K, {ci + L_.a, M * K}, {ci + L_.b, K * N}, {ci + L_.c, M * N}, {co + L_.d, M * N},
                nb ? std::span<const std::uint32_t>(ci + L_.sa, M * nb) : std::span<const std::uint32_t>{},
                nb ? std::span<const std::uint32_t>(ci + L_.sb, nb * N) : std::span<const std::uint32_t>{}, fl);
    for (std::size_t k = 0; k < M * N; ++k) co[static_cast<std::size_t>(L_.flags) + k] = fl[k];
  }
}

// §31.10 the comment of a case line: the NaN / Inf and the inexact elements.
std::string MmaParams::case_note(const std::uint32_t*, const std::uint32_t* out) const {
  const Format& f = codes_of(s_.c);
  std::size_t special = 0, inexact = 0;
  for (std::size_t k = 0; k < s_.m * s_.n; ++k) {
    const std::uint32_t d = out[static_cast<std::size_t>(L_.d) + k];
    special += ((d & f.mag_mask()) >> f.man_bits) == f.exp_all_ones();
    inexact += (out[static_cast<std::size_t>(L_.flags) + k] & kInexact) != 0;
  }
  return std::to_string(special) + " NaN/Inf, " + std::to_string(inexact) + " inexact of " +
         std::to_string(s_.m * s_.n);
}

// ---- C ABI (§32.9) ----------------------------------------------------------------------------

std::uint32_t MmaParams::abi_minor() const { return std::max(family().abi_minor(), conform::abi_minor(ms_.model())); }

bool MmaParams::plugin_supported(const numref_backend& b) const {
  return NUMREF_HAS_ENTRY(b, mma_supported) && NUMREF_HAS_ENTRY(b, mma) && b.mma_supported(b.ctx, &cop_) == 1;
}

bool MmaParams::plugin_call(const numref_backend& b, std::size_t n, const std::uint32_t* in, std::uint32_t* out,
                            bool optional, std::string& error) const {
  if (!NUMREF_HAS_ENTRY(b, mma)) {
    error = "the backend has no mma entry point";
    return false;
  }
  const std::size_t MN = s_.m * s_.n;
  kit::Guarded<std::uint32_t> d("d", MN);  // §34.6 guarded output buffers
  kit::Guarded<std::uint8_t> fl("flags", optional ? MN : 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t* ci = in + i * static_cast<std::size_t>(L_.in);
    std::uint32_t* co = out + i * static_cast<std::size_t>(L_.out);
    d.reset();
    fl.reset();
    const std::int64_t got = b.mma(b.ctx, &cop_, ci + L_.a, ci + L_.b, ci + L_.c, s_.block ? ci + L_.sa : nullptr,
                                   s_.block ? ci + L_.sb : nullptr, d.data(), optional ? fl.data() : nullptr);
    if (!d.check("mma", error) || !fl.check("mma", error)) return false;
    if (!kit::check_call(b, "mma", got, MN, "elements (one D)", error)) return false;
    std::copy(d.data(), d.data() + MN, co + L_.d);
    for (std::size_t k = 0; k < MN; ++k) co[static_cast<std::size_t>(L_.flags) + k] = optional ? fl[k] : kNotReported;
  }
  return true;
}

}  // namespace numref::conform::mma
