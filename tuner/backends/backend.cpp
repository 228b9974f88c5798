#include "tuner/backends/backend.hpp"

namespace ktune {

nlohmann::json MeasureSettings::to_json() const {
  return {{"seed", seed},
          {"warmup_runs", warmup_runs},
          {"stopping", stopping.to_json()},
          {"capture_reference", capture_reference}};
}

MeasureSettings MeasureSettings::from_json(const nlohmann::json& json) {
  MeasureSettings settings;
  settings.seed = json.value("seed", settings.seed);
  settings.warmup_runs = json.value("warmup_runs", settings.warmup_runs);
  if (json.contains("stopping")) settings.stopping = StoppingCriteria::from_json(json.at("stopping"));
  settings.capture_reference = json.value("capture_reference", false);
  return settings;
}

nlohmann::json VariantBuild::to_json() const {
  return {{"binary", binary}, {"entry", entry}, {"compile_ms", compile_ms}, {"launch", launch}};
}

VariantBuild VariantBuild::from_json(const nlohmann::json& json) {
  VariantBuild build;
  build.binary = json.value("binary", "");
  build.entry = json.value("entry", "");
  build.compile_ms = json.value("compile_ms", 0.0);
  build.launch = json.value("launch", std::map<std::string, std::int64_t>{});
  return build;
}

}  // namespace ktune
