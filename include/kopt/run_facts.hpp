// A run's facts beside its series (the projection keeps them as it reads the log; the comparison
// and the report read them): nothing here includes anything above src/core/projection.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kopt/json.hpp"

namespace kopt {

// What a session's log says about the run beyond its evaluations: its title (the last
// `session/title`), the models it ran on (`request/header` config.provider/model, in order of first
// use), the supervisor models that reviewed it (`source.supervisor` of the loop's messages), and
// the first and last `time` among the events the projection reads.
struct RunFacts {
  std::optional<std::string> title;
  std::vector<std::string> models, supervisors;
  std::optional<double> firstTime, lastTime;
  std::uint64_t version = 0;  // bumped when any of the above changed

  // At most this many models (and supervisors) are kept; a title is cut to kTitleMax UTF-16 units.
  static constexpr std::size_t kModelsMax = 8, kTitleMax = 200, kModelMax = 120;
  // The event types take() reads beyond their time (the log reader builds these events).
  static bool read_type(std::string_view type);
  // One event in log order (any type; only `time` of the projected types and read_type's are read).
  void take(const json& event);
  std::size_t approx_bytes() const;
};

}  // namespace kopt
