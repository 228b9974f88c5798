#include "tuner/backends/backend.hpp"

namespace ktune {

nlohmann::json MeasureSettings::to_json() const {
  return {{"seed", seed}, {"warmup_runs", warmup_runs}, {"stopping", stopping.to_json()}};
}

MeasureSettings MeasureSettings::from_json(const nlohmann::json& json) {
  MeasureSettings settings;
  settings.seed = json.value("seed", settings.seed);
  settings.warmup_runs = json.value("warmup_runs", settings.warmup_runs);
  if (json.contains("stopping")) settings.stopping = StoppingCriteria::from_json(json.at("stopping"));
  return settings;
}

}  // namespace ktune
