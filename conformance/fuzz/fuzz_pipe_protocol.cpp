// libFuzzer target: the runner's parsing of a pipe backend's output (spec §33). The
// input is read as the lines a backend writes: a greeting, preamble lines up to "ready",
// then the reply to a batch of 8 cases (f32 -> f8e4m3fn; flags on when the greeting says
// flags=yes). Every input must be accepted or rejected with ProtocolError / BackendError.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "numref/conform/protocol.hpp"
#include "numref/format.hpp"
#include "numref/policy.hpp"
#include "numref/conform/core.hpp"

using namespace numref::conform;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto params = registry().find("cast")->parse_params(
      "f32 f8e4m3fn ocp round=sr sr_bits=9 sr_variant=fraction overflow=nonsat inf_sat=max nan=payload "
      "nan_to_finite=zero e8m0_round=follow zero_to_nozero=nan negative=nan daz=0 ftz=0 tininess=after int_range=full "
      "e8m0_low=linear inf_nan=slot");
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  std::string line;
  try {
    if (!std::getline(in, line)) return 0;
    const PipeHello h = parse_pipe_hello(line);
    std::vector<Departure> deps;
    bool ready = false;
    while (!ready && std::getline(in, line)) ready = parse_pipe_preamble(line, deps);
    if (!ready) return 0;
    if (std::getline(in, line)) (void)parse_pipe_supports(line);
    std::vector<std::uint32_t> out(16);
    PipeBatchParser p(*params, 8, h.flags, out.data());
    while (std::getline(in, line))
      if (p.feed(line)) break;
  } catch (const ProtocolError&) {
  } catch (const BackendError&) {}
  return 0;
}
