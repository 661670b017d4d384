// numref — INT8 symmetric quantization ([MD] Eq. 1).               spec §20
#include "numref/int8.hpp"

#include <stdexcept>

namespace numref {

QuantizeSpec int8_quantize_spec(const Int8Spec& s) {
  QuantizeSpec q;
  q.element = &format(FormatId::int8);
  q.partition = s.partition;
  q.rule = s.variant == Int8Variant::d127 ? ScaleRule::int8 : ScaleRule::int8_127_5;
  q.amax = s.amax;
  q.apply = ScaleApply::fused;  // §20.1 x / delta rounded once
  Policy p = default_element_policy();
  switch (s.round) {
    case Int8Round::rne: p.round = Round::rne; break;
    case Int8Round::rna: p.round = Round::rna; break;
    case Int8Round::ceil: p.round = Round::rup; break;
    case Int8Round::sr:
      p.round = Round::sr;
      p.sr_bits = s.sr_bits;
      break;
  }
  q.policy = p;  // int_range is fixed by the rule (§20.2)
  return q;
}

QuantizeResult quantize_int8(const TensorView& x, const Int8Spec& s, std::span<std::uint8_t> codes,
                             std::span<const std::uint32_t> random) {
  return quantize(x, int8_quantize_spec(s), codes, random);
}

}  // namespace numref
