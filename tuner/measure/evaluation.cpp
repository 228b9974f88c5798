#include "tuner/measure/evaluation.hpp"

#include "tuner/core/errors.hpp"

namespace ktune {

nlohmann::json EvaluationResult::to_json() const {
  return {{"outcome", std::string(to_string(outcome))},
          {"message", message},
          {"samples_ns", samples_ns},
          {"error", error},
          {"compile_ms", compile_ms},
          {"environment", environment}};
}

EvaluationResult EvaluationResult::from_json(const nlohmann::json& json) {
  EvaluationResult result;
  const auto outcome = parse_outcome(json.at("outcome").get<std::string>());
  if (!outcome) throw InputError("unknown outcome '" + json.at("outcome").get<std::string>() + "'");
  result.outcome = *outcome;
  result.message = json.value("message", "");
  result.samples_ns = json.value("samples_ns", std::vector<double>{});
  result.stats = summarize(result.samples_ns);
  result.error = json.value("error", -1.0);
  result.compile_ms = json.value("compile_ms", 0.0);
  result.environment = json.value("environment", nlohmann::json::object());
  return result;
}

}  // namespace ktune
