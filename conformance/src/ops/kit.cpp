// numref conformance — what op families share (kit.hpp).               spec §32, §34.1, §34.8
#include "kit.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "numref/round.hpp"
#include "numref/value.hpp"

namespace numref::conform::kit {

const Profile& profile_by_name(std::string_view name) {
  const auto id = find_profile(name);
  if (!id) throw std::invalid_argument("unknown profile '" + std::string(name) + "'");
  return profile(*id);
}

std::string policy_overrides(const Policy& base, const Policy& p) {
  // describe() lists every knob as key=value in a fixed order (sr_bits / sr_variant only with
  // round=sr): a setting of p is an override when base has another value or lacks the key.
  const std::string a = describe(base), b = describe(p);
  const auto aw = split_ws(a);
  std::string s;
  for (auto kv : split_ws(b))
    if (std::find(aw.begin(), aw.end(), kv) == aw.end()) s += (s.empty() ? "" : " ") + std::string(kv);
  return s;
}

Partition partition(std::string_view text, std::string_view what) {
  Partition p;
  const std::string err = parse_partition(std::string(text), p);
  if (!err.empty()) throw std::invalid_argument(std::string(what) + ": " + err);
  return p;
}

std::pair<std::size_t, std::size_t> shape(std::string_view text) {
  const auto rc = parse_rxc(text);
  if (!rc) throw std::invalid_argument("shape '" + std::string(text.substr(0, 40)) + "' is not RxC");
  return *rc;
}

namespace {
// A §10.3 knob key (kPolicyKnobs).
bool is_policy_key(std::string_view k) {
  bool found = false;
  for_each_policy_knob([&](const auto& knob) { found |= knob.key == k; });
  return found;
}
}  // namespace

KeyValues::KeyValues(std::string_view family, std::string_view text, bool policy_keys) : family_(family) {
  for (auto w : split_ws(text)) {
    const auto eq = w.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == w.size())
      throw std::invalid_argument(family_ + " parameter '" + std::string(w) + "' is not key=value");
    const std::string key(w.substr(0, eq));
    if (is_policy_key(key)) {
      if (!policy_keys) throw std::invalid_argument(family_ + " has no element policy: '" + std::string(w) + "'");
      policy_ += (policy_.empty() ? "" : " ") + std::string(w);
      continue;
    }
    if (!kv_.emplace(key, std::string(w.substr(eq + 1))).second)
      throw std::invalid_argument(family_ + " parameter '" + key + "' given twice");
  }
}

std::optional<std::string> KeyValues::take(std::string_view key, bool used, bool required) {
  auto it = kv_.find(key);
  if (it == kv_.end()) {
    if (used && required) throw std::invalid_argument(family_ + " parameters need " + std::string(key) + "=...");
    return std::nullopt;
  }
  if (!used) throw std::invalid_argument(family_ + " does not take " + std::string(key) + "=");
  std::string v = std::move(it->second);
  kv_.erase(it);
  return v;
}

void KeyValues::finish() const {
  if (!kv_.empty()) throw std::invalid_argument("unknown " + family_ + " parameter '" + kv_.begin()->first + "'");
}

bool flag_value(const std::string& key, const std::string& v) {
  if (v != "0" && v != "1") throw std::invalid_argument(key + "='" + v + "', expected 0 or 1");
  return v == "1";
}

void put(std::string& text, std::string_view key, std::string_view value) {
  if (!text.empty()) text += ' ';
  text += key;
  text += '=';
  text += value;
}

std::vector<Family::HeaderLine> header_lines(const Params& p, std::string policy) {
  std::vector<Family::HeaderLine> out;
  for (auto w : split_ws(p.text())) {
    const auto eq = w.find('=');
    const std::string key(w.substr(0, eq));
    if (key != "shape") out.push_back({key, std::string(w.substr(eq + 1))});
  }
  out.push_back({"policy", std::move(policy), false});
  return out;
}

std::string text_from_header(const VectorHeader& h, std::size_t rows, std::size_t cols) {
  std::string text = "shape=" + std::to_string(rows) + "x" + std::to_string(cols);
  for (const auto& [k, v] : h.fields)
    if (!is_file_key(k) && k != "policy") put(text, k, v);
  return text;
}

void View::check() const {
  if (rows == 0 || cols == 0)
    throw std::invalid_argument("empty tensor shape " + std::to_string(rows) + "x" + std::to_string(cols));
  if (rows * cols > kMaxElements)
    throw std::invalid_argument("tensor shape " + std::to_string(rows) + "x" + std::to_string(cols) +
                                " exceeds the suite limit of " + std::to_string(kMaxElements) + " elements");
}

std::pair<std::size_t, std::size_t> View::of_memory(std::size_t k) const {
  if (!transpose) return {k / cols, k % cols};
  // memory is cols x rows: position k = j * rows + i holds view element (i, j)
  return {k % rows, k / rows};
}

void pack(const Format& f, const std::uint32_t* w, std::size_t n, std::vector<unsigned char>& buf) {
  const std::size_t b = storage_bytes(f);
  buf.assign(n * b, 0);
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint32_t v = w[k];
    if (b == 1) {
      buf[k] = static_cast<unsigned char>(v);
    } else if (b == 2) {
      const std::uint16_t h = static_cast<std::uint16_t>(v);
      std::memcpy(&buf[2 * k], &h, 2);
    } else {
      std::memcpy(&buf[4 * k], &v, 4);
    }
  }
}

// ---- exact comparisons ----------------------------------------------------------------------

namespace {
using u128 = unsigned __int128;
int bitlen(std::uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }

// 2|x| == |a| + |b| exactly. Exponent gaps beyond 126 bits cannot hold a midpoint of two
// neighbours of a <= 32-bit format.
bool is_midpoint(const Exact& x, const Exact& a, const Exact& b) {
  if (x.sticky) return false;  // a rounded quotient with a remainder is never a dyadic midpoint
  int lo = x.exp + 1;
  if (a.sig) lo = std::min(lo, a.exp);
  if (b.sig) lo = std::min(lo, b.exp);
  auto scaled = [&](const Exact& v, int extra) -> std::optional<u128> {
    if (!v.sig) return u128{0};
    const int sh = v.exp + extra - lo;
    if (sh < 0 || sh + bitlen(v.sig) > 126) return std::nullopt;
    return u128{v.sig} << sh;
  };
  const auto x2 = scaled(x, 1), as = scaled(a, 0), bs = scaled(b, 0);
  return x2 && as && bs && *x2 == *as + *bs;
}
}  // namespace

int cmp_magnitude(const Exact& a, const Exact& b) {
  if (a.sig == 0 || b.sig == 0) return (a.sig != 0) - (b.sig != 0);
  const int ta = a.exp + bitlen(a.sig), tb = b.exp + bitlen(b.sig);
  if (ta != tb) return ta < tb ? -1 : 1;
  // same top bit position: the exponents differ by less than 64
  u128 x = a.sig, y = b.sig;
  if (a.exp > b.exp)
    x <<= (a.exp - b.exp);
  else
    y <<= (b.exp - a.exp);
  return x < y ? -1 : x > y ? 1 : 0;
}

Exact exact_of(const Decoded& d) { return Exact{d.sign, d.sig, d.exp, false}; }

bool is_tie(const Exact& v, const Format& to, const Policy& p) {
  // the neighbour below |v| (round toward zero, saturating) and the one above it
  Policy pt = p;
  pt.round = Round::rtz;
  pt.e8m0_round = E8m0Round::floor;
  pt.overflow = Overflow::saturate;
  pt.ftz = false;
  pt.daz = false;
  Exact mag = v;
  mag.sign = false;
  const Result lo = round_finite(mag, to, pt);
  const Decoded dl = decode(lo.bits, to);
  if (dl.cls == Class::nan) return false;
  Exact a = exact_of(dl), b;
  a.sign = false;
  if (to.is_integer())
    b = Exact{false, a.sig + 1, 0, false};
  else if ((lo.bits & to.mag_mask()) == to.max_finite)
    b = Exact{false, dl.sig + 1, dl.exp, false};
  else
    b = exact_of(decode((lo.bits & to.mag_mask()) + 1, to));
  return is_midpoint(mag, a, b);
}

void tensor_case(Schema& s, std::size_t rows, std::size_t cols) {
  s.case_major = true;
  s.shape_prefix = true;
  s.rows = rows;
  s.cols = cols;
}

Column words(std::string name, Role role, int digits, std::uint64_t limit, std::size_t rows, std::size_t cols,
             Place place) {
  Column c;
  c.name = std::move(name);
  c.role = role;
  c.digits = digits;
  c.limit = limit;
  c.rows = rows;
  c.cols = cols;
  c.place = place;
  return c;
}

Column codes(std::string name, Role role, const Format& f, std::size_t rows, std::size_t cols, Place place) {
  Column c = words(std::move(name), role, code_digits(f), f.mask(), rows, cols, place);
  c.format = &f;
  return c;
}

Column named(Column c, std::string cls, std::string what) {
  c.cls = std::move(cls);
  c.what = std::move(what);
  return c;
}

Column sr_random(int k, std::size_t rows, std::size_t cols, Place place) {
  Column r =
      words("r", Role::in, (k + 3) / 4, k >= 32 ? 0xFFFFFFFFull : (std::uint64_t{1} << k) - 1, rows, cols, place);
  r.pipe_digits = 8;  // §33.4, §33.6
  return r;
}

std::string e8m0_text(std::uint32_t code) {
  const Format& e = format(FormatId::f8e8m0fnu);
  if (code == e.canonical_nan) return "NaN";
  return "2^" + std::to_string(static_cast<int>(code) - e.bias);
}

Column scales(std::string name, Role role, const Format& f, const BlockGrid& g) {
  Column c = codes(std::move(name), role, f, g.grid_rows(), g.grid_cols(), Place::blocks);
  if (f.man_bits == 0 && !f.is_integer()) c.decode = e8m0_text;  // an E8M0 code is a power of two
  c.what = "scales";
  return c;
}

bool check_call(const numref_backend& b, std::string_view entry, std::int64_t got, std::uint64_t want,
                std::string_view unit, std::string& error) {
  if (got < 0) {
    const char* m = b.last_error ? b.last_error(b.ctx) : nullptr;
    error = std::string(entry) + " returned " + std::to_string(got) + (m ? std::string(": ") + m : std::string());
    return false;
  }
  if (static_cast<std::uint64_t>(got) != want) {
    error = std::string(entry) + " returned " + std::to_string(got) + " results for a batch of " +
            std::to_string(want) + (unit.empty() ? "" : " ") + std::string(unit);
    return false;
  }
  return true;
}

std::string overrun_text(std::string_view entry, std::string_view buffer, std::size_t past, std::size_t n,
                         std::size_t value_size) {
  const std::string unit = value_size == 4 ? "word" : value_size == 1 ? "byte" : "value";
  const std::string units = unit + (n == 1 ? "" : "s");
  return std::string(entry) + " wrote past the end of its output buffer " + std::string(buffer) + " (" +
         std::to_string(n) + " " + units + "): " + std::to_string(past) + " " + unit + (past == 1 ? "" : "s") +
         " past the end";
}

CaseOutputs::CaseOutputs(const Schema& s) {
  for (const Column& c : s.columns)
    if (c.output()) slots_.push_back(Slot{c.at, Guarded<std::uint32_t>(c.name, c.words())});
}

void CaseOutputs::reset() {
  for (Slot& sl : slots_) {
    sl.buf.reset();
    sl.used = false;
  }
}

std::uint32_t* CaseOutputs::at(int offset) {
  for (Slot& sl : slots_)
    if (sl.at == offset) {
      sl.used = true;
      return sl.buf.data();
    }
  throw std::logic_error("CaseOutputs: no output column at word " + std::to_string(offset));
}

bool CaseOutputs::finish(std::string_view entry, std::uint32_t* case_out, std::string& error) {
  for (const Slot& sl : slots_)
    if (sl.used && !sl.buf.check(entry, error)) return false;
  for (const Slot& sl : slots_)
    if (sl.used) std::copy(sl.buf.data(), sl.buf.data() + sl.buf.size(), case_out + sl.at);
  return true;
}

}  // namespace numref::conform::kit
