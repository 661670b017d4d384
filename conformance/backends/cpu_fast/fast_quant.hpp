// numref backend "cpu-fast" — optimized block scaling and quantization.   spec §12–§20
//
// Independent of the reference's scale and quantize code: it reads the format table and
// the knobs, computes amax with integer maxima over the binary32 bit patterns, the scales
// with bit arithmetic (E8M0 exponents, GAM mantissas, power-of-two floors) and single
// IEEE binary32 operations where the spec defines a binary32 result (RN32(q_max / amax),
// RN32(x * S), RN32(v / S): a correctly rounded division or product in round-to-nearest-even,
// which the host's SSE/AVX unit delivers in its default mode — no FMA contraction,
// -ffp-contract=off), and converts elements with its own FastCast lanes. Every loop is a
// straight pass over one row segment of a block (vectorised; NaN lanes by select masks).
// The exact one-rounding application (`fused`) is supported for integer elements: the
// product x * S is exact in binary64 (24 + 24 bits) and a quotient x / D rounded to
// binary64 cannot cross or land on an integer or a half-integer boundary of a result below
// 2^8 (the exact quotient's distance to such a point is at least 2^-26, binary64's error
// below 2^-44), so rounding the binary64 value to an integer is the exact rounding.
// The rule is read through numref::kScaleRules: the engine computes by the row's kind (and MX
// exponent rule), so any rule of a kind it implements works; it implements every kind
// (nvfp4: the tensor scale by the reference's own function, the rest single binary32 operations).
// The §19.8 recipe knobs it implements: amax_floor=1e-4 (a binary32 floor), zero_code
// (every value), inf_block poison / exponent / max_code / max_code_zero / one_scale /
// zero_scale (binary32 quotient and pow2 rules), nan_block poison / inf_divisor / max_code,
// elem_nan (both), mx_descale (both), amax_floor=1e-12 (binary64; the binary32 quotient and pow2
// rules: RN32(q_max / RN64(1e-12)) by exact long division, once), nan_scale (both) — the knobs
// of the torchao_mx_floor / _ceil / _even, te_mxfp8, deepgemm, te_float8_current,
// te_float8_block and torchao_float8 profiles; scale_exp=log2f (pow2, pow2-recip, mx-floor,
// mx-rceil: floor / ceil of log2f_cr read from the bits, and the reference's own log2f_cr where
// the fraction field is within 2^8 of either end — see floor_log2f in fast_quant.cpp), nan_block
// own_nan and first_nan (a poisoned block's first NaN read from x), zero_sign=plus, scale_round=source,
// zero_divisor=keep and inf_block=zero_scale with amax-dequant — the knobs of torchao_mx_rceil,
// torchao_float8_pow2, microxcaling, microxcaling_even and torchao_float8_inference. Not
// supported (answered "no"): `fused` for floating-point elements and `fused` with
// stochastic rounding or with nan_block own_nan / first_nan, zero_sign=plus or zero_divisor=keep;
// GAM block code 00 as dequantize input; amax_floor=1e-12 with the MX rules and
// inf_block=exponent with mx-rceil-f32.
//
// Threads (issue 32): every entry point takes `threads` (1: the calling thread only; the
// conformance plugin always passes 1, its runner already runs `jobs` workers). Large tensors are
// cut into row ranges (parallel.hpp): per-range partial block amaxes are max-reduced, the scales
// computed once, the codes / dequantized values written by row ranges (stochastic rounding's r
// is read by element index, so a range reads its own slice). The result is the same for every
// thread count.
// Row blocks (a block row of at most kOnePassElems elements that is not GAM, or 1-row blocks of at
// most 256 columns in a longer row, taken in pieces of whole blocks) are quantized in one pass: a
// block row's (piece's) amaxes, scales and codes while it is in cache. Tensors of too few rows
// to share by rows (a 1-D array is one row) are shared by column ranges.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fast_cast.hpp"
#include "numref/quantize.hpp"
#include "numref/scale.hpp"
#include "numref/tensor.hpp"

namespace numref::cpu_fast {

// The scale of a finite non-zero amax by the rule (block_scale() without the recipe's amax floor,
// whose absence stream_mode() requires; the other recipe knobs act on zero / Inf / NaN amaxes and
// MX code 00 only, which take the general path).
struct StreamScale {
  enum Mode : std::uint8_t {
    none,
    mx_floor,
    mx_ceil,
    mx_even,
    mx_rceil,
    mx_rceil_f32_mul,
    mx_rceil_f32_div,
    quotient,
    recip,
    pow2,
    pow2_recip
  } mode = none;
  int emax = 0;
  std::uint32_t qsig = 0, even_thr = 0;
  float qmax = 0, inv_qmax = 0;
};

// One tensor operation (the fields of numref_tensor_op, resolved).
struct QuantOp {
  const Format* src = nullptr;
  const Format* elem = nullptr;
  const Format* out = nullptr;  // fake-quant output
  ScaleRule rule = ScaleRule::amax;
  std::size_t rows = 0, cols = 0;
  std::ptrdiff_t rs = 0, cs = 0;               // strides of x in elements
  std::size_t br = 0, bc = 0, gr = 0, gc = 0;  // effective block and group extents
  bool nan_ignore = false, inf_ignore = false;
  bool fused = false;
  bool reciprocal = false;
  Policy policy, wide;
  std::uint32_t q_max = 0;        // binary32 code
  RecipeKnobs recipe;             // §19.8 (unsupported() names the knobs it declines)
  bool tensor_partition = false;  // §12.2 the partition is `tensor` (§13.8 nan_scale=all_ones_tensor)
};

// The operation of quantizing x (its format, shape and strides) by `spec`, with qz the spec
// validated for x's shape (numref::Quantizer: the application, q_max and element policy resolved) —
// what numref.quantize and `numref quantize` hand to FastQuant (which may still decline it).
QuantOp quant_op_of(const TensorView& x, const QuantizeSpec& spec, const Quantizer& qz);

class FastQuant {
 public:
  // A block row of at most this many elements is quantized in one pass (amax, scale, codes).
  static constexpr std::size_t kOnePassElems = std::size_t{1} << 15;
  // Work is split only into ranges of at least this many elements (so from 2 x kGrain up).
  static constexpr std::size_t kGrain = std::size_t{1} << 19;

  // "" when the operation is supported, else the reason.
  static std::string unsupported(const QuantOp& op);
  explicit FastQuant(const QuantOp& op);  // precondition: unsupported(op) is ""

  // tensor_amax (optional): the §13.4 / §18.1 tensor amax, the maximum of the block amaxes.
  void scale(const void* x, std::uint32_t* amax, std::uint32_t* scales, std::uint32_t* gm, unsigned threads = 1,
             std::uint32_t* tensor_amax = nullptr) const;
  // kept (optional, one byte per block): bit kKept for a block whose stored scale dequantize() reads
  // as NaN or zero but whose elements the recipe kept (§13.7 nan_block=inf_divisor, §13.6
  // inf_block=zero_scale: the fake-quant output dequantizes them with the factor 1); bit
  // kPoisoned for a poisoned block (§13.7 nan_block=first_nan: fake_quant() writes its NaNs).
  static constexpr std::uint8_t kKept = 1, kPoisoned = 2;
  void quantize(const void* x, const std::uint32_t* r, std::uint8_t* codes, std::uint32_t* scales, std::uint32_t* gm,
                unsigned threads = 1, std::uint8_t* kept = nullptr, std::uint32_t* tensor_amax = nullptr) const;
  // §19.5 the counts of every block of quantize()'s codes of x (the same r), amax being scale()'s
  // block amaxes: 4 per block (saturated, flushed, nan, inf), block-row-major. false (nothing
  // written) for the fused application, whose counts are not computed here.
  bool counts(const void* x, const std::uint32_t* r, const std::uint32_t* amax, const std::uint8_t* codes,
              std::uint64_t* counts) const;
  // Returns false (with `err`) for metadata it does not take (GAM code 00). tensor_amax: §18.4 (nvfp4).
  // §17.3 false (err set) when a GAM block scale is code 00; true for every other rule.
  bool gam_scales_valid(const std::uint32_t* scales, std::string& err) const;
  bool dequantize(const std::uint8_t* codes, const std::uint32_t* scales, const std::uint32_t* gm, std::uint32_t* out,
                  std::string& err, unsigned threads = 1, std::uint32_t tensor_amax = 0) const;
  void fake_quant(const void* x, const std::uint32_t* r, std::uint32_t* out, unsigned threads = 1) const;
  // The fake-quant output (codes of op.out) of quantized codes: dequantized, then converted by
  // the wide policy (§19.6) — fake_quant() without the quantize step.
  // `kept`: quantize()'s, or null when has_kept() is false.
  bool fake_from_codes(const std::uint8_t* codes, const std::uint32_t* scales, const std::uint32_t* gm,
                       const std::uint8_t* kept, std::uint32_t* out, std::string& err, unsigned threads = 1,
                       std::uint32_t tensor_amax = 0) const;
  // Whether quantize() can mark blocks in `kept` (the recipe's nan_block / inf_block).
  bool has_kept() const {
    return op_.recipe.nan_block == NanBlock::inf_divisor || op_.recipe.inf_block == InfBlock::zero_scale ||
           fake_reads_input();
  }
  // §13.7 nan_block=first_nan: the fake-quant output of a poisoned block is the block's NaNs, which
  // the codes do not hold: fake_quant() gives it, fake_from_codes() does not.
  bool fake_reads_input() const { return op_.recipe.nan_block == NanBlock::first_nan; }

  std::size_t blocks() const { return nbr_ * nbc_; }
  std::size_t groups() const { return ngr_ * ngc_; }
  bool one_pass() const { return one_pass_; }
  // Whether quantize() takes the streaming kernel (1-row blocks, one pass per block; fast_quant.cpp).
  bool streams() const { return stream_.mode != StreamScale::none; }

 private:
  // Per block: the binary32 factor and how it is applied.
  struct BlockFactor {
    float f = 1.0f;
    bool divide = false;
    bool poisoned = false;
    bool zero = false;                // §13.6 / §13.7 the elements are multiplied by 0 (x / Inf)
    bool inf = false;                 // §14.6 zero_divisor=keep: the elements are divided by 0
    bool kept = false;                // see quantize(): fake-quant dequantizes the block with the factor 1
    std::uint32_t nan = 0x7FC00000u;  // the binary32 NaN a poisoned block's elements convert (§13.8)
  };
  // Rows [i0, i1) as dense binary32 codes (dense f32 input in place, else widened into buf).
  const std::uint32_t* rows_of(const void* x, std::size_t i0, std::size_t i1, std::vector<std::uint32_t>& buf) const;
  // Columns [cb, ce) of row i as binary32 codes (u[0] is column cb).
  const std::uint32_t* cols_of(const void* x, std::size_t i, std::size_t cb, std::size_t ce,
                               std::vector<std::uint32_t>& buf) const;
  // max into amax[(i / br - I0) * nbc + J] over rows [i0, i1) of f (row i0 first).
  void amax_rows(const std::uint32_t* f, std::size_t i0, std::size_t i1, std::size_t I0, std::uint32_t* amax) const;
  // max into am[J] (the amaxes of row i's block row) over columns [cb, ce) of row i (u[0]: column cb).
  void amax_cols(const std::uint32_t* u, std::size_t cb, std::size_t ce, std::uint32_t* am) const;
  // A column split of large work on few rows: P ranges of whole column units (col_unit(), a
  // multiple of the block width for narrow blocks), fn(k, cb, ce); P = 1 when not worth it.
  std::size_t col_unit() const;
  std::size_t col_parts(unsigned threads) const;
  void amaxes(const void* x, std::uint32_t* amax, unsigned threads) const;
  // The stored scale and factor of one block of a kind other than gam (amax: NaN canonical).
  BlockFactor block_scale(std::uint32_t a, std::uint32_t& stored) const;
  void scales_of(const std::uint32_t* amax, std::uint32_t* scales, std::uint32_t* gm, std::vector<BlockFactor>& fac,
                 std::uint32_t* tensor_amax = nullptr) const;
  // §18 the E4M3 scales and factors of blocks [0, n) from their amaxes under the tensor amax t;
  // amax and scales may be the same array (each amax is read before its scale is written).
  void nvfp4_scales(std::uint32_t t, const std::uint32_t* amax, std::uint32_t* scales, BlockFactor* fac,
                    std::size_t n) const;
  // Codes of rows [i0, i1), columns [cb, ce) (cb a multiple of col_unit()): f holds them (row i0,
  // column cb first; rows ce - cb apart), fac the factors of block rows I0...
  void codes_rows(const std::uint32_t* f, std::size_t i0, std::size_t i1, const std::uint32_t* r,
                  const BlockFactor* fac, std::size_t I0, std::uint8_t* codes, std::size_t cb = 0,
                  std::size_t ce = static_cast<std::size_t>(-1)) const;
  void dequant_rows(const std::uint8_t* codes, const std::uint32_t* scales, const std::uint32_t* gm,
                    const std::uint8_t* kept, std::size_t i0, std::size_t i1, std::uint32_t* out, std::size_t cb = 0,
                    std::size_t ce = static_cast<std::size_t>(-1), std::uint32_t tensor_amax = 0) const;
  // fn(i0, i1, cb, ce) over the tensor on `threads` threads: by row ranges, or by column ranges
  // (every row) when there are too few rows; one call for small work.
  template <class F>
  void by_rows_or_cols(unsigned threads, F&& fn) const;
  static std::uint8_t marks(const BlockFactor& F) {
    return static_cast<std::uint8_t>((F.kept ? kKept : 0) | (F.poisoned ? kPoisoned : 0));
  }
  std::uint32_t dequant_stored(std::uint32_t a) const;
  // quantize() by the streaming kernel (no random bits): streams() with fixed null, or the codes of
  // apply_stream_ with the blocks' factors fixed (see fast_quant.cpp).
  // tensor_amax non-null (NVFP4, 1-row blocks): `scales` holds the block amaxes on entry, and each
  // piece of a row turns its blocks' amaxes into scales and factors just before its codes.
  void quantize_stream(const void* x, const BlockFactor* fixed, std::uint8_t* codes, std::uint32_t* scales,
                       unsigned threads, std::uint8_t* kept, const std::uint32_t* tensor_amax = nullptr) const;
  void poisoned_nans(const std::uint32_t* u, std::size_t n, const BlockFactor& F, std::uint32_t* y) const;
  std::uint32_t first_nan_of(const void* x, std::size_t I, std::size_t J) const;
  // §19.9 elem_nan=half: the codes of lanes whose binary32 value y is NaN become ±1.5.
  void half_nans(const std::uint32_t* y, std::uint32_t* o, std::size_t n) const;

  QuantOp op_;
  std::size_t nbr_, nbc_, ngr_, ngc_;
  bool dense_f32_ = false, dense_bf16_ = false, one_pass_ = false;
  FastCast to_elem_;                                             // binary32 -> element, the element policy
  std::shared_ptr<const std::vector<std::uint32_t>> widen_lut_;  // source code -> binary32 (<= 16-bit sources)
  std::vector<std::uint32_t> elem_f32_;                          // element code -> binary32, the wide policy (§19.3)
  std::optional<FastCast> to_out_;                               // binary32 -> fake-quant output, the wide policy
  std::optional<FastCast> to_src_, from_src_;                    // §14.5 scale_round=source (16-bit sources)
  std::optional<FastCast> to_e4m3_;                              // §18.2 binary32 -> E4M3, RNE, satfinite
  std::vector<std::uint32_t> e4m3_f32_;                          // §18 E4M3 code -> binary32
  std::uint32_t e4m3_max_ = 0, e4m3_nan_ = 0;                    // the largest finite E4M3 code, its NaN
  float inv_c_ = 0;                                              // §18.4 RN32(1 / C)
  float qmax_;
  int emax_ = 0;                       // E(q_max)
  std::uint32_t qsig_ = 0;             // q_max's 24-bit significand
  float inv_qmax_ = 0;                 // RN32(1 / q_max) (mx-rceil-f32)
  std::uint32_t floor_ = 0;            // §13.5 amax_floor=1e-4: RN32(1e-4) as a binary32 code (0: no floor)
  double floor64_ = 0;                 // §13.5 amax_floor=1e-12: RN64(1e-12) (0: no floor)
  std::uint32_t floor_s_ = 0;          // RN32(q_max / RN64(1e-12)) saturated: the quotient scale of a floored block
  std::optional<std::uint32_t> half_;  // §19.9 elem_nan=half: the code of +1.5
  std::uint32_t nan_code_ = 0;         // the element code of the canonical NaN
  StreamScale stream_;                 // mode none: quantize() does not stream
  bool apply_stream_ = false;          // the two-pass path's codes by the streaming kernel
};

}  // namespace numref::cpu_fast
