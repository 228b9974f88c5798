#include "tuner/measure/evaluation.hpp"

#include <cmath>

#include "tuner/core/errors.hpp"

namespace ktune {

nlohmann::json EvaluationResult::to_json() const {
  return {{"outcome", std::string(to_string(outcome))},
          {"message", message},
          {"samples_ns", samples_ns},
          {"error", std::isnan(error) ? nlohmann::json(nullptr) : nlohmann::json(error)},  // JSON has no NaN
          {"compile_ms", compile_ms},
          {"environment", environment},
          {"device_time", {{"kernel_ns", device_time.kernel_ns}, {"between_ns", device_time.between_ns}}}};
}

EvaluationResult EvaluationResult::from_json(const nlohmann::json& json) {
  EvaluationResult result;
  const auto outcome = parse_outcome(json.at("outcome").get<std::string>());
  if (!outcome) throw InputError("unknown outcome '" + json.at("outcome").get<std::string>() + "'");
  result.outcome = *outcome;
  result.message = json.value("message", "");
  result.samples_ns = json.value("samples_ns", std::vector<double>{});
  result.stats = summarize(result.samples_ns);
  const auto& error = json.contains("error") ? json.at("error") : nlohmann::json(-1.0);
  result.error = error.is_null() ? std::nan("") : error.get<double>();
  result.compile_ms = json.value("compile_ms", 0.0);
  result.environment = json.value("environment", nlohmann::json::object());
  if (const auto time = json.find("device_time"); time != json.end() && time->is_object()) {
    result.device_time.kernel_ns = time->value("kernel_ns", 0.0);
    result.device_time.between_ns = time->value("between_ns", 0.0);
  }
  return result;
}

}  // namespace ktune
