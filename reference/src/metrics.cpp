// numref — MoR relative-error metrics.                     spec §21 – §24, §29
#include "numref/metrics.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "numref/convert.hpp"

namespace numref {

namespace {

using u128 = unsigned __int128;
constexpr std::uint32_t kAbs = 0x7FFFFFFFu;

// A finite binary32 code as sign, significand (24 bits with the implicit one for normal
// codes, the fraction for subnormals) and the exponent of its last bit.
struct F32Parts {
  bool neg;
  std::uint64_t sig;
  int exp;
};
F32Parts parts(std::uint32_t c) {
  const std::uint32_t field = (c >> 23) & 0xFFu, frac = c & 0x7FFFFFu;
  if (field == 0) return {(c >> 31) != 0, frac, -149};
  return {(c >> 31) != 0, frac | 0x800000u, static_cast<int>(field) - 150};
}

}  // namespace

// ---- §21 -------------------------------------------------------------------------------------

std::uint32_t f32_sub_abs(std::uint32_t a, std::uint32_t b) {
  if (!f32_is_finite(a) || !f32_is_finite(b)) throw std::invalid_argument("f32_sub_abs: operands must be finite");
  if ((b & kAbs) == 0) return a & kAbs;  // a − 0 = a exactly
  if ((a & kAbs) == 0) return b & kAbs;
  F32Parts pa = parts(a), pb = parts(b);
  pb.neg = !pb.neg;  // a − b = a + (−b)
  // hi: the operand with the larger last-bit exponent
  const bool a_hi = pa.exp >= pb.exp;
  const F32Parts& hi = a_hi ? pa : pb;
  const F32Parts& lo = a_hi ? pb : pa;
  const int d = hi.exp - lo.exp;
  if (d <= 40) {
    // Exact: hi.sig << d < 2^64; the signed sum of two magnitudes below 2^64 fits in 65 bits.
    const u128 H = static_cast<u128>(hi.sig) << d, L = lo.sig;
    u128 mag;
    if (hi.neg == lo.neg)
      mag = H + L;
    else
      mag = H >= L ? H - L : L - H;
    if (mag == 0) return 0;  // exact cancellation: +0 (the sign is cleared anyway)
    int e = lo.exp;
    bool sticky = false;
    if (mag >> 64) {  // 65 bits: fold the last one into the sticky bit (64 bits remain)
      sticky = (mag & 1) != 0;
      mag >>= 1;
      e += 1;
    }
    return rn32(Exact{false, static_cast<std::uint64_t>(mag), e, sticky}) & kAbs;
  }
  // d >= 41: hi is normal (only the exponent -149 is subnormal, and lo's is smaller), so
  // hi.sig >= 2^23; in units of 2^(hi.exp − 17) hi is hi.sig << 17 >= 2^40, and
  // |lo| < 2^(lo.exp + 24) <= 2^(hi.exp − 17) is below one unit. The exact magnitude is
  // (hi.sig << 17) + f or (hi.sig << 17) − f with 0 < f < 1: a 41-bit significand and a
  // sticky bit, 17 bits below the binary32 quantum (§4.1 operand with sticky).
  const std::uint64_t big = hi.sig << 17;
  const bool grows = hi.neg == lo.neg;
  return rn32(Exact{false, grows ? big : big - 1, hi.exp - 17, true}) & kAbs;
}

std::uint32_t relative_error(std::uint32_t x, std::uint32_t q) {
  if (!f32_is_finite(x) || (x & kAbs) == 0)
    throw std::invalid_argument("relative_error: x must be finite and non-zero");
  if (!f32_is_finite(q)) throw std::invalid_argument("relative_error: q must be finite");
  const std::uint32_t d = f32_sub_abs(x, q);
  if (d == 0) return 0;
  if (!f32_is_finite(d)) return kF32Inf;
  return rn32(exact_div(exact_f32(d), exact_f32(x & kAbs)));  // +Inf on overflow
}

// ---- §22 -------------------------------------------------------------------------------------

void ExactSum::add_multiple(std::uint32_t e, std::uint64_t count) {
  if (!f32_is_finite(e) || (e >> 31))
    throw std::invalid_argument("ExactSum: terms are non-negative finite binary32 values");
  if (count > kMaxTerms) throw std::invalid_argument("ExactSum: more than 2^40 terms (§22.2)");
  if (count == 0) return;
  const std::uint32_t field = e >> 23, frac = e & 0x7FFFFFu;
  const std::uint64_t m = field ? (frac | 0x800000u) : frac;
  const int pos = field ? static_cast<int>(field) - 1 : 0;
  const int w = pos >> 6, b = pos & 63;
  const u128 p = static_cast<u128>(m) * count;  // < 2^64 for count <= 2^40
  const std::uint64_t p0 = static_cast<std::uint64_t>(p), p1 = static_cast<std::uint64_t>(p >> 64);
  const std::uint64_t words[3] = {p0 << b, (p1 << b) | (b ? p0 >> (64 - b) : 0), b ? p1 >> (64 - b) : 0};
  std::uint64_t carry = 0;
  for (int i = 0; i < 3 || carry; ++i) {
    const int li = w + i;
    const std::uint64_t add = i < 3 ? words[i] : 0;
    if (li >= kLimbs) {
      if (add || carry) throw std::logic_error("ExactSum: overflow of the 320-bit accumulator");
      break;
    }
    const u128 s = static_cast<u128>(limb_[li]) + add + carry;
    limb_[li] = static_cast<std::uint64_t>(s);
    carry = static_cast<std::uint64_t>(s >> 64);
  }
}

ExactSum& ExactSum::operator+=(const ExactSum& o) {
  std::uint64_t carry = 0;
  for (int i = 0; i < kLimbs; ++i) {
    const u128 s = static_cast<u128>(limb_[i]) + o.limb_[i] + carry;
    limb_[i] = static_cast<std::uint64_t>(s);
    carry = static_cast<std::uint64_t>(s >> 64);
  }
  if (carry) throw std::logic_error("ExactSum: overflow of the 320-bit accumulator");
  return *this;
}

int ExactSum::compare(const ExactSum& o) const {
  for (int i = kLimbs; i-- > 0;)
    if (limb_[i] != o.limb_[i]) return limb_[i] < o.limb_[i] ? -1 : 1;
  return 0;
}

bool ExactSum::is_zero() const {
  for (std::uint64_t l : limb_)
    if (l) return false;
  return true;
}

// ---- §23 -------------------------------------------------------------------------------------

std::string Threshold::parse(std::string_view text, Threshold& out) {
  std::string shown(1, '\'');
  shown.append(text);
  shown.push_back('\'');
  const std::string forms = " (write a decimal like 0.045, a percentage like 4.5%, or a fraction like 9/200)";
  if (text.empty()) return "empty threshold" + forms;
  if (text.front() == '-') return "threshold " + shown + " is negative";
  if (text.front() == '+') text.remove_prefix(1);
  auto digits = [](std::string_view s, std::uint64_t& v, std::string& err) {
    v = 0;
    for (char c : s) {
      if (c < '0' || c > '9') {
        err = "malformed";
        return false;
      }
      const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
      if (v > (std::numeric_limits<std::uint64_t>::max() - d) / 10) {
        err = "too many digits";
        return false;
      }
      v = v * 10 + d;
    }
    return true;
  };
  std::uint64_t num = 0, den = 1;
  std::string err;
  if (const auto slash = text.find('/'); slash != std::string_view::npos) {
    const std::string_view p = text.substr(0, slash), q = text.substr(slash + 1);
    if (p.empty() || q.empty() || !digits(p, num, err) || !digits(q, den, err))
      return "threshold " + shown + ": " + (err.empty() ? std::string("malformed") : err) + forms;
    if (den == 0) return "threshold " + shown + " has a zero denominator";
  } else {
    bool percent = false;
    if (!text.empty() && text.back() == '%') {
      percent = true;
      text.remove_suffix(1);
    }
    const auto dot = text.find('.');
    const std::string_view ip = text.substr(0, dot);
    const std::string_view fp = dot == std::string_view::npos ? std::string_view{} : text.substr(dot + 1);
    if (ip.empty() && fp.empty()) return "threshold " + shown + ": malformed" + forms;
    std::string all(ip);
    all += fp;
    if (!digits(all, num, err)) return "threshold " + shown + ": " + err + forms;
    for (std::size_t i = 0; i < fp.size() + (percent ? 2 : 0); ++i) {
      if (den > std::numeric_limits<std::uint64_t>::max() / 10)
        return "threshold " + shown + ": too many digits" + forms;
      den *= 10;
    }
  }
  const std::uint64_t g = std::gcd(num, den);
  out.num = g ? num / g : 0;
  out.den = g ? den / g : 1;
  if (out.num == 0) out.den = 1;
  return {};
}

std::string Threshold::to_string() const { return std::to_string(num) + "/" + std::to_string(den); }

std::uint32_t mean_f32(const ErrorSum& s) {
  if (!s.finite()) return kF32NaN;
  if (s.n == 0) return 0;
  return rn32_ratio(false, s.sum.value(), -ExactSum::kScale, BigUInt(s.n));
}

bool mean_below(const ErrorSum& s, const Threshold& t) {
  if (!s.finite()) return false;
  if (s.n == 0) return t.num > 0;  // mean := 0
  BigUInt lhs = s.sum.value();
  lhs.mul_small(t.den);
  BigUInt rhs(t.num);
  rhs.mul_small(s.n);
  rhs <<= ExactSum::kScale;
  return lhs < rhs;
}

// ---- §24 -------------------------------------------------------------------------------------

MagnitudeRange magnitude_range(const TensorView& x, const BlockRange& r) {
  const Format& f = x.format();
  const std::uint32_t mask = f.mag_mask(), special = f.first_special_magnitude();  // §2.2
  std::uint32_t mx = 0, mn = 0;
  MagnitudeRange out;
  for (std::size_t i = r.r0; i < r.r1; ++i)
    for (std::size_t j = r.c0; j < r.c1; ++j) {
      const std::uint32_t mag = x.code(i, j) & mask;
      if (mag >= special) {
        ++out.nonfinite;
      } else if (mag != 0) {
        // §13.1 finite magnitudes are ordered like their codes
        if (out.nonzero == 0 || mag < mn) mn = mag;
        if (mag > mx) mx = mag;
        ++out.nonzero;
      }
    }
  if (out.nonzero) {
    out.max = rn32(exact_value(mx, f));  // exact widening (§12.1)
    out.min = rn32(exact_value(mn, f));
  }
  return out;
}

bool fits_normal_range(const MagnitudeRange& m, const Format& t) {
  if (m.nonfinite || m.nonzero == 0) return false;
  const Exact mx = exact_f32(m.max), mn = exact_f32(m.min);
  const Exact lhs{false, mx.sig, mx.exp + t.emin(), false};  // max · 2^emin(t)
  const Exact rhs = exact_mul(format_qmax(t), mn);           // max_finite(t) · min
  return compare_abs(lhs, rhs) < 0;
}

// ---- §24.1 ErrorEvaluator --------------------------------------------------------------------

ErrorEvaluator::ErrorEvaluator(const TensorView& x, const QuantizeSpec& spec, const Format& fake, bool memoize)
    : x_(x), q_(spec, x.rows(), x.cols()), fake_(&fake), memo_(memoize && x.format().bits <= 16) {
  if (x.size() > ExactSum::kMaxTerms)
    throw std::invalid_argument("error metric: the tensor has more than 2^40 elements (§22.2)");
  if (q_.uses_random())
    throw std::invalid_argument(
        "error metric: stochastic rounding is not supported (Q(x) must be a function of x, §21.1)");
  if (fake.is_integer() || fake.bits < 16)
    throw std::invalid_argument("error metric: the fake-quant format must be bf16, f16 or f32, not " +
                                std::string(fake.name));
  const std::size_t nb = q_.grid().count();
  amax_.resize(nb);
  for (std::size_t b = 0; b < nb; ++b) amax_[b] = q_.amax(x_, b);
  q_.prepare(amax_);
  scales_.resize(nb);
  for (std::size_t b = 0; b < nb; ++b) scales_[b] = q_.block_scale(b, amax_[b]);
  init_work();
}

ErrorEvaluator::ErrorEvaluator(const ErrorEvaluator& proto, Fresh)
    : x_(proto.x_), q_(proto.q_), fake_(proto.fake_), memo_(proto.memo_), amax_(proto.amax_), scales_(proto.scales_) {
  init_work();
}

void ErrorEvaluator::init_work() {
  cache_.assign(q_.grid().count(), std::nullopt);
  QuantizeSpec one = q_.spec();
  one.partition = Partition::tensor();
  one.group = Partition::tensor();
  chunk_q_.emplace(one, 1, kChunk);
  chunk_bytes_.assign(kChunk * storage_bytes(x_.format()), 0);
  widen_src_.emplace(x_.format(), format(FormatId::f32), Policy{});
  widen_fake_.emplace(*fake_, format(FormatId::f32), Policy{});
}

ErrorEvaluator::Key ErrorEvaluator::key_of(const BlockScale& s) {
  return Key{s.poisoned,       s.quant.divide,      s.quant.value.sig,   s.quant.value.exp,
             s.dequant.divide, s.dequant.value.sig, s.dequant.value.exp, s.dequant.infinite};
}

void ErrorEvaluator::evaluate_codes(std::span<const std::uint32_t> codes, const BlockScale& s, std::span<Entry> out) {
  const Format& src = x_.format();
  const std::size_t bytes = storage_bytes(src);
  std::fill(chunk_bytes_.begin(), chunk_bytes_.end(), std::uint8_t{0});
  for (std::size_t i = 0; i < codes.size(); ++i) {
    const std::uint32_t c = codes[i];
    std::memcpy(chunk_bytes_.data() + i * bytes, &c, bytes);  // little-endian host (as TensorView)
  }
  std::uint32_t fq[kChunk];
  chunk_q_->fake_quantize_block(TensorView(src, chunk_bytes_.data(), 1, kChunk), 0, s, *fake_, fq, {});
  const std::uint32_t mask = src.mag_mask(), special = src.first_special_magnitude();  // §2.2
  for (std::size_t i = 0; i < codes.size(); ++i) {
    const std::uint32_t c = codes[i], mag = c & mask;
    Entry e{fq[i], 0};
    if (mag >= special) {
      e.err = kNonfiniteInput;  // §21.3
    } else if (mag == 0) {
      e.err = kZero;  // Eq. 1: zeros are not counted
    } else {
      const std::uint32_t xf = (*widen_src_)(c).bits;       // exact (§12.1)
      const std::uint32_t qf = (*widen_fake_)(fq[i]).bits;  // exact (bf16, f16 ⊂ binary32)
      if (!f32_is_finite(qf)) {
        e.err = kNonfiniteQuant;
      } else {
        const std::uint32_t err = relative_error(xf, qf);
        e.err = f32_is_finite(err) ? err : kNonfiniteQuant;
      }
    }
    out[i] = e;
  }
}

std::vector<ErrorEvaluator::Entry>* ErrorEvaluator::table_for(const BlockScale& s) {
  if (!memo_) return nullptr;
  const Key k = key_of(s);
  auto it = tables_.find(k);
  if (it != tables_.end()) {
    lru_.erase(std::find(lru_.begin(), lru_.end(), k));
    lru_.push_back(k);
    return &it->second;
  }
  if (tables_.size() >= kMaxTables) {
    tables_.erase(lru_.front());
    lru_.erase(lru_.begin());
  }
  lru_.push_back(k);
  auto& t = tables_[k];
  t.assign(std::size_t{1} << x_.format().bits, Entry{0, kUnfilled});
  return &t;
}

template <class F>
void ErrorEvaluator::for_block_entries(std::size_t b, F&& f) {
  const BlockRange r = grid().range(b);
  const BlockScale& s = scales_[b];
  std::uint32_t codes[kChunk];
  Entry entries[kChunk];
  if (std::vector<Entry>* table = table_for(s)) {
    std::vector<Entry>& t = *table;
    constexpr std::uint32_t kPending = 0xFFFFFFFBu;
    std::size_t m = 0;
    auto flush = [&] {
      evaluate_codes(std::span<const std::uint32_t>(codes, m), s, std::span<Entry>(entries, m));
      for (std::size_t i = 0; i < m; ++i) t[codes[i]] = entries[i];
      m = 0;
    };
    for (std::size_t i = r.r0; i < r.r1; ++i)
      for (std::size_t j = r.c0; j < r.c1; ++j) {
        const std::uint32_t c = x_.code(i, j);
        if (t[c].err != kUnfilled) continue;
        t[c].err = kPending;
        codes[m++] = c;
        if (m == kChunk) flush();
      }
    if (m) flush();
    for (std::size_t i = r.r0; i < r.r1; ++i)
      for (std::size_t j = r.c0; j < r.c1; ++j) f(i, j, t[x_.code(i, j)]);
    return;
  }
  for (std::size_t i = r.r0; i < r.r1; ++i)
    for (std::size_t j0 = r.c0; j0 < r.c1; j0 += kChunk) {
      const std::size_t m = std::min(kChunk, r.c1 - j0);
      for (std::size_t k = 0; k < m; ++k) codes[k] = x_.code(i, j0 + k);
      evaluate_codes(std::span<const std::uint32_t>(codes, m), s, std::span<Entry>(entries, m));
      for (std::size_t k = 0; k < m; ++k) f(i, j0 + k, entries[k]);
    }
}

ErrorSum ErrorEvaluator::evaluate_block(std::size_t b) {
  ErrorSum es;
  for_block_entries(b, [&](std::size_t, std::size_t, const Entry& e) {
    const std::uint32_t err = e.err;
    if (err < 0x80000000u) {
      es.sum.add(err);
      ++es.n;
    } else if (err == kZero) {
      ++es.zeros;
    } else if (err == kNonfiniteInput) {
      ++es.nonfinite_input;
    } else {
      ++es.nonfinite_quant;
    }
  });
  return es;
}

const ErrorSum& ErrorEvaluator::block(std::size_t b) {
  if (b >= cache_.size()) throw std::out_of_range("error metric: block " + std::to_string(b) + " does not exist");
  if (!cache_[b]) cache_[b] = evaluate_block(b);
  return *cache_[b];
}

std::vector<std::size_t> ErrorEvaluator::blocks_in(const BlockRange& r) const {
  const BlockGrid& g = grid();
  const std::size_t br = g.block_rows(), bc = g.block_cols();
  auto aligned = [](std::size_t v0, std::size_t v1, std::size_t step, std::size_t extent) {
    return v0 < v1 && v1 <= extent && v0 % step == 0 && (v1 % step == 0 || v1 == extent);
  };
  if (!aligned(r.r0, r.r1, br, g.rows()) || !aligned(r.c0, r.c1, bc, g.cols()))
    throw std::invalid_argument("error metric: rows [" + std::to_string(r.r0) + "," + std::to_string(r.r1) +
                                ") cols [" + std::to_string(r.c0) + "," + std::to_string(r.c1) +
                                ") is not a union of whole blocks of the partition " + to_string(q_.spec().partition));
  std::vector<std::size_t> blocks;
  for (std::size_t I = r.r0 / br; I * br < r.r1; ++I)
    for (std::size_t J = r.c0 / bc; J * bc < r.c1; ++J) blocks.push_back(I * g.grid_cols() + J);
  return blocks;
}

ErrorSum ErrorEvaluator::region(const BlockRange& r) {
  const std::vector<std::size_t> blocks = blocks_in(r);
  // Evaluate the missing blocks grouped by factor (each lookup table built once); the sum
  // itself is exact, so the order below does not matter (§22).
  std::vector<std::size_t> todo;
  for (std::size_t b : blocks)
    if (!cache_[b]) todo.push_back(b);
  std::stable_sort(todo.begin(), todo.end(),
                   [&](std::size_t a, std::size_t c) { return key_of(scales_[a]) < key_of(scales_[c]); });
  for (std::size_t b : todo) cache_[b] = evaluate_block(b);
  ErrorSum total;
  for (std::size_t b : blocks) total += *cache_[b];
  return total;
}

void ErrorEvaluator::adopt(const ErrorEvaluator& other, std::span<const std::size_t> blocks) {
  if (other.x_.rows() != x_.rows() || other.x_.cols() != x_.cols() || other.cache_.size() != cache_.size() ||
      other.fake_ != fake_)
    throw std::invalid_argument(
        "error metric: adopt() needs an evaluator of the same tensor, partition and fake format");
  for (std::size_t b : blocks) {
    if (b >= cache_.size()) throw std::out_of_range("error metric: block " + std::to_string(b) + " does not exist");
    if (other.cache_[b]) cache_[b] = other.cache_[b];
  }
}

void ErrorEvaluator::fake_block(std::size_t b, std::span<std::uint32_t> dst) {
  if (dst.size() != x_.size()) throw std::invalid_argument("fake_block: the output needs one entry per element");
  const std::size_t cols = x_.cols();
  for_block_entries(b, [&](std::size_t i, std::size_t j, const Entry& e) { dst[i * cols + j] = e.fake; });
}

// ---- §29 backward error ----------------------------------------------------------------------

namespace {

// An exact fixed-point accumulator of products of two binary32 values, in units of 2^-298
// (the product of two smallest quanta). A product is below 2^256, i.e. 2^554 units; 2^32
// terms stay below 2^586 < 2^640.
struct ProductAcc {
  static constexpr int kLimbs = 10;
  std::array<std::uint64_t, kLimbs> limb{};
  void add(std::uint64_t m, int pos) {  // m < 2^48, pos >= 0
    const int w = pos >> 6, b = pos & 63;
    const std::uint64_t lo = m << b, hi = b ? m >> (64 - b) : 0;
    u128 s = static_cast<u128>(limb[w]) + lo;
    limb[w] = static_cast<std::uint64_t>(s);
    std::uint64_t carry = static_cast<std::uint64_t>(s >> 64);
    s = static_cast<u128>(limb[w + 1]) + hi + carry;
    limb[w + 1] = static_cast<std::uint64_t>(s);
    carry = static_cast<std::uint64_t>(s >> 64);
    for (int i = w + 2; carry && i < kLimbs; ++i) carry = (++limb[i] == 0) ? 1u : 0u;
  }
  BigUInt value() const { return BigUInt::from_limbs(limb); }
};

struct Val {
  bool neg;
  std::uint64_t sig;
  int pos;  // exponent + 149
};
Val val_of(std::uint32_t c) {
  const F32Parts p = parts(c);
  return {p.neg, p.sig, p.exp + 149};
}

std::vector<std::uint32_t> widened(const TensorView& t, const char* what) {
  std::vector<std::uint32_t> v(t.size());
  const Converter widen(t.format(), format(FormatId::f32), Policy{});
  const Format& f = t.format();
  for (std::size_t i = 0; i < t.rows(); ++i)
    for (std::size_t j = 0; j < t.cols(); ++j) {
      const std::uint32_t c = t.code(i, j);
      if (!f.is_finite_magnitude(c & f.mag_mask()))  // §2.2
        throw std::invalid_argument(std::string("backward error: ") + what + " holds a NaN or infinite element at (" +
                                    std::to_string(i) + ", " + std::to_string(j) + ")");
      v[i * t.cols() + j] = widen(c).bits;
    }
  return v;
}

std::vector<std::uint32_t> quantized(const TensorView& t, const QuantizeSpec& spec, const Format* q_format,
                                     const char* what) {
  std::vector<std::uint32_t> out(t.size());
  if (q_format) {
    std::vector<std::uint32_t> fq(t.size());
    fake_quantize(t, spec, *q_format, fq);
    const Converter widen(*q_format, format(FormatId::f32), Policy{});
    for (std::size_t i = 0; i < fq.size(); ++i) out[i] = widen(fq[i]).bits;
  } else {
    std::vector<std::uint8_t> codes(t.size());
    const QuantizeResult r = quantize(t, spec, codes);
    dequantize(codes, r.meta, out);
  }
  for (std::size_t i = 0; i < out.size(); ++i)
    if (!f32_is_finite(out[i]))
      throw std::invalid_argument(std::string("backward error: Q(") + what + ") is not finite at element " +
                                  std::to_string(i));
  return out;
}

// §29 the per-element backward errors of L · R against a computed product: `sub(i, j, pos, neg)`
// adds that product's element (i, j), negated, to the numerator's accumulators (units 2^-298).
template <class Sub>
BackwardError backward_errors(const std::vector<Val>& lv, const std::vector<Val>& rv, std::size_t M, std::size_t K,
                              std::size_t N, Sub sub) {
  BackwardError out;
  out.rows = M;
  out.cols = N;
  out.be.resize(M * N);
  for (std::size_t i = 0; i < M; ++i)
    for (std::size_t j = 0; j < N; ++j) {
      ProductAcc pos, neg, den;  // numerator = pos − neg; denominator = Σ |L||R|
      for (std::size_t k = 0; k < K; ++k) {
        const Val& a = lv[i * K + k];
        const Val& b = rv[k * N + j];
        if (a.sig && b.sig) {
          const std::uint64_t m = a.sig * b.sig;
          (a.neg != b.neg ? neg : pos).add(m, a.pos + b.pos);
          den.add(m, a.pos + b.pos);
        }
      }
      sub(i, j, pos, neg);
      const BigUInt P = pos.value(), Nn = neg.value(), D = den.value();
      std::uint32_t be = 0;
      const BigUInt num = P.compare(Nn) >= 0 ? P - Nn : Nn - P;
      if (!D.is_zero()) {
        be = rn32_ratio(false, num, 0, D);  // the common scale 2^-298 cancels
      } else if (!num.is_zero()) {
        throw std::invalid_argument("backward error: D(" + std::to_string(i) + ", " + std::to_string(j) +
                                    ") is not zero where every product of L and R is");
      }
      if (!f32_is_finite(be))
        throw std::invalid_argument("backward error: BE(" + std::to_string(i) + ", " + std::to_string(j) +
                                    ") overflows binary32");
      out.be[i * N + j] = be;
      if (be > out.max) out.max = be;  // non-negative codes order like their values
      out.sum.add(be);
    }
  out.mean = rn32_ratio(false, out.sum.value(), -ExactSum::kScale, BigUInt(static_cast<std::uint64_t>(M * N)));
  return out;
}

}  // namespace

BackwardError backward_error(const TensorView& L, const TensorView& R, const QuantizeSpec& lq, const QuantizeSpec& rq,
                             const Format* q_format) {
  if (L.cols() != R.rows())
    throw std::invalid_argument("backward error: L is " + std::to_string(L.rows()) + " x " + std::to_string(L.cols()) +
                                " but R is " + std::to_string(R.rows()) + " x " + std::to_string(R.cols()));
  if (q_format && (q_format->is_integer() || q_format->bits < 16))
    throw std::invalid_argument("backward error: the fake-quant format must be bf16, f16 or f32");
  const std::size_t M = L.rows(), K = L.cols(), N = R.cols();
  if (K > (std::size_t{1} << 32)) throw std::invalid_argument("backward error: more than 2^32 terms per dot product");
  const std::vector<std::uint32_t> l = widened(L, "L"), r = widened(R, "R");
  const std::vector<std::uint32_t> ql = quantized(L, lq, q_format, "L"), qr = quantized(R, rq, q_format, "R");
  auto vals = [](const std::vector<std::uint32_t>& v) {
    std::vector<Val> o(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) o[i] = val_of(v[i]);
    return o;
  };
  const std::vector<Val> lv = vals(l), rv = vals(r), qlv = vals(ql), qrv = vals(qr);
  return backward_errors(lv, rv, M, K, N, [&](std::size_t i, std::size_t j, ProductAcc& pos, ProductAcc& neg) {
    for (std::size_t k = 0; k < K; ++k) {
      const Val& qa = qlv[i * K + k];
      const Val& qb = qrv[k * N + j];
      if (qa.sig && qb.sig) (qa.neg != qb.neg ? pos : neg).add(qa.sig * qb.sig, qa.pos + qb.pos);  // − Q product
    }
  });
}

BackwardError backward_error_of(const TensorView& L, const TensorView& R, std::span<const std::uint32_t> D) {
  if (L.cols() != R.rows())
    throw std::invalid_argument("backward error: L is " + std::to_string(L.rows()) + " x " + std::to_string(L.cols()) +
                                " but R is " + std::to_string(R.rows()) + " x " + std::to_string(R.cols()));
  const std::size_t M = L.rows(), K = L.cols(), N = R.cols();
  if (D.size() != M * N)
    throw std::invalid_argument("backward error: D has " + std::to_string(D.size()) + " elements, L · R has " +
                                std::to_string(M) + " x " + std::to_string(N));
  if (K > (std::size_t{1} << 32)) throw std::invalid_argument("backward error: more than 2^32 terms per dot product");
  for (std::size_t e = 0; e < D.size(); ++e)
    if (!f32_is_finite(D[e]))
      throw std::invalid_argument("backward error: D(" + std::to_string(e / N) + ", " + std::to_string(e % N) +
                                  ") is not finite");
  auto vals = [](const std::vector<std::uint32_t>& v) {
    std::vector<Val> o(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) o[i] = val_of(v[i]);
    return o;
  };
  const std::vector<Val> lv = vals(widened(L, "L")), rv = vals(widened(R, "R"));
  return backward_errors(lv, rv, M, K, N, [&](std::size_t i, std::size_t j, ProductAcc& pos, ProductAcc& neg) {
    const Val d = val_of(D[i * N + j]);                      // d = sig 2^(pos - 149) = sig 2^((pos + 149) - 298)
    if (d.sig) (d.neg ? pos : neg).add(d.sig, d.pos + 149);  // − D
  });
}

}  // namespace numref
