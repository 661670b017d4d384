// numref CUDA kernels — how a tensor is split into work units, and what one unit computes.
//                                                                       spec §12, §13, §19, §21 – §27, §A.7
//
// A *chunk* is V consecutive elements of one row of the view (V = 16 bytes of the source:
// 4 f32 or 8 bf16 codes; one 16-byte load when the view is dense and aligned). A *unit* is the
// chunk c of `tr` consecutive rows of row group g: rows [g·tr, min(rows, g·tr + tr)), columns
// [c·V, min(cols, c·V + V)); units are numbered u = g · n_chunks + c, so the 32 lanes of a warp
// read 32 consecutive chunks of each row (512 contiguous bytes of bf16). `tr` divides the
// partition's block height (or the partition has one block row), so a unit never crosses a
// block row; when the block width is a multiple of V (`one_block_chunks`) a unit lies in ONE
// block. Kernels walk the units with a grid-stride loop; the host emulation (host_run.hpp) walks
// the same units in any order. Every function below is host/device code: what a thread does
// with one unit is the same source on the GPU and in the host tests.
//
// Reductions leave a unit only as integer max / min / add contributions to its block (or the
// tensor): associative and commutative, so no order of units, threads, warps or atomics can
// change a result (§13.4, §22.1). The host tests run the units forward, backward, shuffled and
// under several simulated grid sizes and compare every output with the reference.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "numref_arith/amax.cuh"
#include "numref_arith/exact_sum.cuh"
#include "numref_arith/intmath.cuh"
#include "numref_arith/mor.cuh"
#include "numref_arith/philox.cuh"
#include "numref_arith/quantize.cuh"
#include "numref_arith/scale.cuh"

namespace numref_cuda {

// §12.1 / §12.2 / §12.4 The view, its partition and groups, and the work units.
struct Geometry {
  std::uint32_t rows = 0, cols = 0;  // each < 2^31
  std::int64_t rs = 0, cs = 0;       // element strides of the view
  std::uint32_t br = 1, bc = 1;      // effective block extent (§12.2)
  std::uint32_t nbr = 1, nbc = 1;    // block grid
  FastDiv div_br, div_bc;
  std::uint32_t gbr = 1, gbc = 1;  // a group is gbr × gbc blocks (§12.4); 1 × 1 when unused
  std::uint32_t ngc = 1;           // groups per group row
  FastDiv div_gbr, div_gbc;
  std::uint32_t tr = 1;         // rows per unit
  std::uint32_t n_chunks = 0;   // chunks per row
  std::uint32_t n_rgroups = 0;  // row groups
  FastDiv div_chunks;
  std::uint64_t n_units = 0;
  bool vec = false;               // chunks of V are aligned 16-byte vectors
  bool one_block_chunks = false;  // every chunk lies in one block column (bc % V == 0)

  NUMREF_HD NUMREF_FORCEINLINE std::uint32_t block_of(std::uint32_t i, std::uint32_t j) const {
    return div_br.div(i) * nbc + div_bc.div(j);
  }
  NUMREF_HD NUMREF_FORCEINLINE std::uint32_t group_of_block(std::uint32_t b) const {
    const std::uint32_t I = b / nbc, J = b - (b / nbc) * nbc;
    return div_gbr.div(I) * ngc + div_gbc.div(J);
  }
  NUMREF_HD NUMREF_FORCEINLINE std::uint32_t n_blocks() const { return nbr * nbc; }
};

// §A.7 The extent of unit u.
struct Unit {
  std::uint32_t r0, r1;  // rows [r0, r1)
  std::uint32_t c0, n;   // columns [c0, c0 + n), 1 <= n <= V
};
template <int V>
NUMREF_HD NUMREF_FORCEINLINE Unit unit_of(const Geometry& g, std::uint64_t u) {
  // FastDiv for the usual u < 2^32 (no 64-bit division per unit); '/' beyond.
  const std::uint32_t grp = u < (std::uint64_t{1} << 32) ? g.div_chunks.div(static_cast<std::uint32_t>(u))
                                                         : static_cast<std::uint32_t>(u / g.n_chunks);
  const std::uint32_t c = static_cast<std::uint32_t>(u - static_cast<std::uint64_t>(grp) * g.n_chunks);
  Unit t;
  t.r0 = grp * g.tr;
  t.r1 = g.rows - t.r0 < g.tr ? g.rows : t.r0 + g.tr;
  t.c0 = c * static_cast<std::uint32_t>(V);
  t.n = g.cols - t.c0 < static_cast<std::uint32_t>(V) ? g.cols - t.c0 : static_cast<std::uint32_t>(V);
  return t;
}

// §12.1 Loads the n codes of row i, columns [c0, c0 + n) of a view of S into x[0 .. n).
template <class S, int V>
NUMREF_HD NUMREF_FORCEINLINE void load_chunk(const Geometry& g, const unsigned char* base, std::uint32_t i,
                                             std::uint32_t c0, std::uint32_t n, std::uint32_t (&x)[V]) {
  constexpr int B = S::bits / 8;
  static_assert(B * V == 16, "a chunk is 16 bytes of the source");
  using W = typename std::conditional<B == 4, std::uint32_t, std::uint16_t>::type;
  const std::int64_t row = static_cast<std::int64_t>(i) * g.rs;
  if (g.vec && n == static_cast<std::uint32_t>(V)) {
    W w[V];
#if defined(__CUDA_ARCH__)
    const uint4 v = *reinterpret_cast<const uint4*>(base + (row + c0) * B);
    memcpy(w, &v, 16);
#else
    std::memcpy(w, base + (row + c0) * B, 16);
#endif
    NUMREF_UNROLL
    for (int t = 0; t < V; ++t) x[t] = w[t];
    return;
  }
  for (int t = 0; t < V; ++t) {
    if (static_cast<std::uint32_t>(t) >= n) {
      x[t] = 0u;
      continue;
    }
    W w;
#if defined(__CUDA_ARCH__)
    memcpy(&w, base + (row + static_cast<std::int64_t>(c0 + t) * g.cs) * B, B);
#else
    std::memcpy(&w, base + (row + static_cast<std::int64_t>(c0 + t) * g.cs) * B, B);
#endif
    x[t] = w;
  }
}

// §19.2 / §A.3 The random value of element idx (element order): an explicit array, or the
// Philox stream of §A.3; `bad` is set when an explicit value has more than k bits (§4.3).
struct ElementRandom {
  const std::uint32_t* values = nullptr;
  PhiloxStream philox;
  int k = 0;  // 0: the policy does not use random values
  NUMREF_HD NUMREF_FORCEINLINE std::uint32_t get(std::uint64_t idx, bool& bad) const {
    if (k == 0) return 0u;
    if (values != nullptr) {
      const std::uint32_t r = values[idx];
      bad |= !sr_value_valid(r, k);
      return r;
    }
    return philox.value(idx, k);
  }
};

// ---- pass 1: amax (§13) ---------------------------------------------------------------------

// §13 The amax (and, with want_min, the smallest non-zero magnitude, §24.2) of the elements of
// unit u, handed to emit(block, max_key, min_key) once per block the unit touches — exactly once
// when g.one_block_chunks.
template <class S, int V, class Emit>
NUMREF_HD inline void amax_unit(const Geometry& g, const unsigned char* x, std::uint64_t u, const AmaxPolicy& p,
                                bool want_min, Emit&& emit) {
  const Unit t = unit_of<V>(g, u);
  std::uint32_t mx[V], mn[V];
  for (int k = 0; k < V; ++k) mx[k] = 0u, mn[k] = kNoMin;
  for (std::uint32_t i = t.r0; i < t.r1; ++i) {
    std::uint32_t c[V];
    load_chunk<S, V>(g, x, i, t.c0, t.n, c);
    NUMREF_UNROLL
    for (int k = 0; k < V; ++k) {
      if (static_cast<std::uint32_t>(k) < t.n) {
        mx[k] = amax_max(mx[k], amax_key<S>(c[k], p));
        if (want_min) {
          const std::uint32_t m = min_key<S>(c[k]);
          mn[k] = m < mn[k] ? m : mn[k];
        }
      }
    }
  }
  const std::uint32_t I = g.div_br.div(t.r0);
  if (g.one_block_chunks) {
    std::uint32_t a = mx[0], b = mn[0];
    for (int k = 1; k < V; ++k) a = amax_max(a, mx[k]), b = mn[k] < b ? mn[k] : b;
    emit(I * g.nbc + g.div_bc.div(t.c0), a, b);
    return;
  }
  // The chunk spans several block columns: one contribution per run of equal block column.
  std::uint32_t J = g.div_bc.div(t.c0), a = mx[0], b = mn[0];
  for (std::uint32_t k = 1; k < t.n; ++k) {
    const std::uint32_t Jk = g.div_bc.div(t.c0 + k);
    if (Jk != J) {
      emit(I * g.nbc + J, a, b);
      J = Jk, a = 0u, b = kNoMin;
    }
    a = amax_max(a, mx[k]);
    b = mn[k] < b ? mn[k] : b;
  }
  emit(I * g.nbc + J, a, b);
}

// ---- pass 2: quantize / fake-quant (§19) -----------------------------------------------------

// §19.6 The fake-quant output format of a launch.
enum class OutFormat : std::uint8_t { bf16 = 0, f16 = 1, f32 = 2 };

namespace detail {
NUMREF_HD NUMREF_FORCEINLINE void store_fake(void* out, std::uint64_t idx, OutFormat f, std::uint32_t v) {
  if (f == OutFormat::f32)
    static_cast<std::uint32_t*>(out)[idx] = v;
  else
    static_cast<std::uint16_t*>(out)[idx] = static_cast<std::uint16_t>(v);
}
}  // namespace detail

// §19.2 / §19.3 / §19.6 The per-launch constants of a quantize pass.
template <class D>
struct QuantizeArgs {
  const BlockFactors* factors = nullptr;  // per block
  ElementCtx<D> elem;
  CastPolicy wide_d;    // code -> f32 under the wide policy (§19.3 NaN codes)
  CastPolicy wide_out;  // f32 -> output format (§19.6)
  OutFormat out = OutFormat::bf16;
  ElementRandom rnd;
  std::uint8_t* codes = nullptr;  // §19.4 (null: not written)
  void* fake = nullptr;           // §19.6 (null: not written)
};

// §19.5 Count totals of a thread (summed over its units).
struct Counts {
  std::uint64_t saturated = 0, flushed = 0, nan = 0, inf = 0;
  NUMREF_HD NUMREF_FORCEINLINE void add(std::uint32_t bits) {
    saturated += bits & kCountSaturated ? 1u : 0u;
    flushed += bits & kCountFlushed ? 1u : 0u;
    nan += bits & kCountNan ? 1u : 0u;
    inf += bits & kCountInf ? 1u : 0u;
  }
};

namespace detail {
template <class D>
NUMREF_HD NUMREF_FORCEINLINE std::uint32_t fake_of(std::uint32_t code, const BlockFactors& f,
                                                   const QuantizeArgs<D>& a) {
  const std::uint32_t v = dequantize_element<D>(code, f, a.wide_d);
  switch (a.out) {
    case OutFormat::bf16: return to_output<FloatTraits<numref::FormatId::bf16>>(v, a.wide_out);
    case OutFormat::f16: return to_output<FloatTraits<numref::FormatId::f16>>(v, a.wide_out);
    default: return to_output<F32>(v, a.wide_out);
  }
}
}  // namespace detail

// §19.2 Quantizes (and/or fake-quantizes) the elements of unit u; returns false when an explicit
// random value was invalid (§4.3).
template <class S, class D, int V>
NUMREF_HD inline bool quantize_unit(const Geometry& g, const unsigned char* x, std::uint64_t u,
                                    const QuantizeArgs<D>& a, Counts& counts) {
  const Unit t = unit_of<V>(g, u);
  bool bad = false;
  const std::uint32_t I = g.div_br.div(t.r0);
  BlockFactors f = a.factors[I * g.nbc + g.div_bc.div(t.c0)];
  for (std::uint32_t i = t.r0; i < t.r1; ++i) {
    std::uint32_t c[V];
    load_chunk<S, V>(g, x, i, t.c0, t.n, c);
    const std::uint64_t row = static_cast<std::uint64_t>(i) * g.cols + t.c0;
    NUMREF_NO_UNROLL
    for (std::uint32_t k = 0; k < t.n; ++k) {
      if (!g.one_block_chunks) f = a.factors[I * g.nbc + g.div_bc.div(t.c0 + k)];
      std::uint32_t bits = 0;
      const std::uint32_t r = a.rnd.get(row + k, bad);
      const std::uint32_t code = quantize_element<S, D>(c[k], f, a.elem, r, bits);
      counts.add(bits);
      if (a.codes != nullptr) a.codes[row + k] = static_cast<std::uint8_t>(code);
      if (a.fake != nullptr) detail::store_fake(a.fake, row + k, a.out, detail::fake_of<D>(code, f, a));
    }
  }
  return !bad;
}

// ---- one pass for row blocks (§A.7 item 3) -------------------------------------------------------

// §A.7 item 3 Block b of a partition with one row per block (MX 1×32, 1×16, DeepSeek 1×128, short
// rows) and a rule whose scale needs only the block's amax, in ONE pass: the thread reads the
// block's chunks for the amax, forms the block's factors, and quantizes the same chunks (read
// again from the cache), so the tensor is read once from memory and no atomics are needed. The
// stored scale and the amax go to scales[b] and amax[b] (when not null). Returns false when an
// explicit random value was invalid (§4.3).
template <class S, class D, int V>
NUMREF_HD inline bool quantize_row_block(const Geometry& g, const unsigned char* x, std::uint32_t b,
                                         const ScaleParams& sp, const AmaxPolicy& ap, const QuantizeArgs<D>& a,
                                         std::uint32_t* scales, std::uint32_t* amax, Counts& counts) {
  const std::uint32_t i = b / g.nbc, J = b - i * g.nbc;  // br = 1: block row I is row i
  const std::uint32_t c0 = J * g.bc, c1 = g.cols - c0 < g.bc ? g.cols : c0 + g.bc;
  std::uint32_t m = 0;
  for (std::uint32_t c = c0; c < c1; c += static_cast<std::uint32_t>(V)) {
    const std::uint32_t n = c1 - c < static_cast<std::uint32_t>(V) ? c1 - c : static_cast<std::uint32_t>(V);
    std::uint32_t v[V];
    load_chunk<S, V>(g, x, i, c, n, v);
    NUMREF_UNROLL
    for (int k = 0; k < V; ++k)
      if (static_cast<std::uint32_t>(k) < n) m = amax_max(m, amax_key<S>(v[k], ap));
  }
  const BlockFactors f = block_factors(sp, m, TensorState{});
  if (scales != nullptr) scales[b] = f.stored;
  if (amax != nullptr) amax[b] = m;
  bool bad = false;
  for (std::uint32_t c = c0; c < c1; c += static_cast<std::uint32_t>(V)) {
    const std::uint32_t n = c1 - c < static_cast<std::uint32_t>(V) ? c1 - c : static_cast<std::uint32_t>(V);
    std::uint32_t v[V];
    load_chunk<S, V>(g, x, i, c, n, v);
    const std::uint64_t row = static_cast<std::uint64_t>(i) * g.cols + c;
    NUMREF_NO_UNROLL
    for (std::uint32_t k = 0; k < n; ++k) {
      std::uint32_t bits = 0;
      const std::uint32_t r = a.rnd.get(row + k, bad);
      const std::uint32_t code = quantize_element<S, D>(v[k], f, a.elem, r, bits);
      counts.add(bits);
      if (a.codes != nullptr) a.codes[row + k] = static_cast<std::uint8_t>(code);
      if (a.fake != nullptr) detail::store_fake(a.fake, row + k, a.out, detail::fake_of<D>(code, f, a));
    }
  }
  return !bad;
}

// ---- dequantize (§19.3) ---------------------------------------------------------------------

// §19.3 Dequantizes the codes of unit u (codes are dense, element order) into binary32 codes.
template <class D, int V>
NUMREF_HD inline void dequantize_unit(const Geometry& g, const std::uint8_t* codes, std::uint64_t u,
                                      const BlockFactors* factors, const CastPolicy& wide_d, std::uint32_t* out) {
  const Unit t = unit_of<V>(g, u);
  const std::uint32_t I = g.div_br.div(t.r0);
  for (std::uint32_t i = t.r0; i < t.r1; ++i) {
    const std::uint64_t row = static_cast<std::uint64_t>(i) * g.cols + t.c0;
    for (std::uint32_t k = 0; k < t.n; ++k) {
      const BlockFactors& f = factors[I * g.nbc + g.div_bc.div(t.c0 + k)];
      out[row + k] = dequantize_element<D>(codes[row + k], f, wide_d);
    }
  }
}

// ---- MoR error sums (§21, §22) -------------------------------------------------------------

// §22 A thread's (or a unit's) share of one ErrorSum: window terms and counts; terms outside the
// window go to emit_piece(counter, value) at once.
struct ErrorAcc {
  Window w;
  ErrorCounts c;
  template <class EmitPiece>
  NUMREF_HD NUMREF_FORCEINLINE void add(ErrKind kind, std::uint32_t e, EmitPiece&& emit_piece) {
    switch (kind) {
      case ErrKind::zero: ++c.zeros; return;
      case ErrKind::nonfinite_input: ++c.nonfinite_input; return;
      case ErrKind::nonfinite_quant: ++c.nonfinite_quant; return;
      default: break;
    }
    ++c.n;
    if (e == 0u) return;
    std::uint32_t m;
    int pos;
    error_term(e, m, pos);
    if (w.add(m, pos)) return;
    int d;
    std::uint32_t lo, hi;
    term_pieces(m, pos, d, lo, hi);
    emit_piece(d, lo);
    if (hi != 0u) emit_piece(d + 1, hi);
  }
};

// §26 The per-launch constants of a MoR error pass for one quantized type.
template <class D>
struct MorArgs {
  const BlockFactors* factors = nullptr;
  ElementCtx<D> elem;
  CastPolicy wide_d, wide_o;
  std::uint8_t* codes = nullptr;  // optional: the element codes (tensor-level MoR's "fused quantize")
};

// §21 / §26 The errors of the elements of unit u under one quantized type, added to `acc`
// (tensor-level MoR: one ErrorSum for the whole tensor, so the accumulator may span units).
template <class S, class D, class O, int V, class EmitPiece>
NUMREF_HD inline void mor_error_unit(const Geometry& g, const unsigned char* x, std::uint64_t u, const MorArgs<D>& a,
                                     ErrorAcc& acc, EmitPiece&& emit_piece) {
  const Unit t = unit_of<V>(g, u);
  const std::uint32_t I = g.div_br.div(t.r0);
  BlockFactors f = a.factors[I * g.nbc + g.div_bc.div(t.c0)];
  for (std::uint32_t i = t.r0; i < t.r1; ++i) {
    std::uint32_t c[V];
    load_chunk<S, V>(g, x, i, t.c0, t.n, c);
    const std::uint64_t row = static_cast<std::uint64_t>(i) * g.cols + t.c0;
    NUMREF_NO_UNROLL
    for (std::uint32_t k = 0; k < t.n; ++k) {
      if (!g.one_block_chunks) f = a.factors[I * g.nbc + g.div_bc.div(t.c0 + k)];
      std::uint32_t code, fake, e = 0;
      const ErrKind kind = mor_element<S, D, O>(c[k], f, a.elem, a.wide_d, a.wide_o, code, fake, e);
      if (a.codes != nullptr) a.codes[row + k] = static_cast<std::uint8_t>(code);
      acc.add(kind, e, emit_piece);
    }
  }
}

// §27 Sub-tensor MoR: the E4M3 and E5M2 errors of unit u, per selection block (= quantization
// block). With one_block_chunks the unit's two accumulators are handed to emit_unit(block, acc4,
// acc5) once; otherwise every element is handed over on its own. Out-of-window pieces go to
// emit_piece(block, format, counter, value).
template <class S, class O, int V, class EmitUnit, class EmitPiece>
NUMREF_HD inline void subtensor_error_unit(const Geometry& g, const unsigned char* x, std::uint64_t u,
                                           const MorArgs<FloatTraits<numref::FormatId::f8e4m3fn>>& a4,
                                           const MorArgs<FloatTraits<numref::FormatId::f8e5m2>>& a5,
                                           EmitUnit&& emit_unit, EmitPiece&& emit_piece) {
  using E4 = FloatTraits<numref::FormatId::f8e4m3fn>;
  using E5 = FloatTraits<numref::FormatId::f8e5m2>;
  const Unit t = unit_of<V>(g, u);
  const std::uint32_t I = g.div_br.div(t.r0);
  std::uint32_t b = I * g.nbc + g.div_bc.div(t.c0);
  ErrorAcc acc4, acc5;
  for (std::uint32_t i = t.r0; i < t.r1; ++i) {
    std::uint32_t c[V];
    load_chunk<S, V>(g, x, i, t.c0, t.n, c);
    NUMREF_NO_UNROLL
    for (std::uint32_t k = 0; k < t.n; ++k) {
      if (!g.one_block_chunks) b = I * g.nbc + g.div_bc.div(t.c0 + k);
      std::uint32_t code, fake, e4 = 0, e5 = 0;
      const ErrKind k4 = mor_element<S, E4, O>(c[k], a4.factors[b], a4.elem, a4.wide_d, a4.wide_o, code, fake, e4);
      const ErrKind k5 = mor_element<S, E5, O>(c[k], a5.factors[b], a5.elem, a5.wide_d, a5.wide_o, code, fake, e5);
      acc4.add(k4, e4, [&](int d, std::uint32_t v) { emit_piece(b, 0, d, v); });
      acc5.add(k5, e5, [&](int d, std::uint32_t v) { emit_piece(b, 1, d, v); });
      if (!g.one_block_chunks) {
        emit_unit(b, acc4, acc5);
        acc4 = ErrorAcc{};
        acc5 = ErrorAcc{};
      }
    }
  }
  if (g.one_block_chunks) emit_unit(b, acc4, acc5);
}

// §27.4 The sub-tensor output of unit u: per element, the fake-quant of its block's type, or the
// element converted to O (kept type, wide policy).
template <class S, class O, int V>
NUMREF_HD inline void subtensor_output_unit(const Geometry& g, const unsigned char* x, std::uint64_t u,
                                            const std::uint8_t* type,
                                            const MorArgs<FloatTraits<numref::FormatId::f8e4m3fn>>& a4,
                                            const MorArgs<FloatTraits<numref::FormatId::f8e5m2>>& a5,
                                            const CastPolicy& keep, void* out) {
  using E4 = FloatTraits<numref::FormatId::f8e4m3fn>;
  using E5 = FloatTraits<numref::FormatId::f8e5m2>;
  const Unit t = unit_of<V>(g, u);
  const std::uint32_t I = g.div_br.div(t.r0);
  for (std::uint32_t i = t.r0; i < t.r1; ++i) {
    std::uint32_t c[V];
    load_chunk<S, V>(g, x, i, t.c0, t.n, c);
    const std::uint64_t row = static_cast<std::uint64_t>(i) * g.cols + t.c0;
    NUMREF_NO_UNROLL
    for (std::uint32_t k = 0; k < t.n; ++k) {
      const std::uint32_t b = I * g.nbc + g.div_bc.div(t.c0 + k);
      std::uint32_t code, fake, e = 0;
      if (type[b] == kTypeE4M3)
        mor_element<S, E4, O>(c[k], a4.factors[b], a4.elem, a4.wide_d, a4.wide_o, code, fake, e);
      else if (type[b] == kTypeE5M2)
        mor_element<S, E5, O>(c[k], a5.factors[b], a5.elem, a5.wide_d, a5.wide_o, code, fake, e);
      else
        fake = convert<S, O>(c[k], keep);
      if constexpr (O::bits == 16)
        static_cast<std::uint16_t*>(out)[row + k] = static_cast<std::uint16_t>(fake);
      else
        static_cast<std::uint32_t*>(out)[row + k] = fake;
    }
  }
}

}  // namespace numref_cuda
