#include "tuner/tune/evaluation_job.hpp"

#include "tuner/worker/protocol.hpp"

namespace ktune {

nlohmann::json EvaluationTask::to_json() const {
  return {{"backend", backend},
          {"problem", problem.to_json()},
          {"settings", settings.to_json()},
          {"config_timeout_s", config_timeout_s},
          {"setup_timeout_s", setup_timeout_s}};
}

EvaluationTask EvaluationTask::from_json(const nlohmann::json& json) {
  EvaluationTask task;
  task.backend = json.at("backend");
  task.problem = protocol::problem_from_json(json.at("problem"));
  task.settings = MeasureSettings::from_json(json.at("settings"));
  task.config_timeout_s = json.at("config_timeout_s");
  task.setup_timeout_s = json.value("setup_timeout_s", kDefaultSetupTimeoutSeconds);
  return task;
}

nlohmann::json EvaluationJob::to_json() const {
  return {{"id", id}, {"index", index}, {"config", protocol::config_to_json(config)}, {"launch", launch},
          {"race_ns", race_ns}};
}

EvaluationJob EvaluationJob::from_json(const nlohmann::json& json) {
  EvaluationJob job;
  job.id = json.at("id");
  job.index = json.at("index");
  job.config = protocol::config_from_json(json.at("config"));
  job.launch = json.at("launch").get<std::map<std::string, std::int64_t>>();
  job.race_ns = json.value("race_ns", 0.0);
  return job;
}

nlohmann::json FinishedEvaluation::to_json() const {
  nlohmann::json json = {{"job", job.to_json()},
                         {"result", result.to_json()},
                         {"evaluation_seconds", evaluation_seconds},
                         {"prepare_seconds", prepare_seconds},
                         {"device", device}};
  if (failure) json["failure"] = {{"exit_code", failure->exit_code}, {"message", failure->message}};
  if (abandoned) json["abandoned"] = true;
  return json;
}

FinishedEvaluation FinishedEvaluation::from_json(const nlohmann::json& json) {
  FinishedEvaluation done;
  done.job = EvaluationJob::from_json(json.at("job"));
  done.result = EvaluationResult::from_json(json.at("result"));
  done.evaluation_seconds = json.at("evaluation_seconds");
  done.prepare_seconds = json.at("prepare_seconds");
  done.device = json.at("device");
  if (json.contains("failure"))
    done.failure = HarnessFailure{json["failure"].at("exit_code"), json["failure"].at("message")};
  done.abandoned = json.value("abandoned", false);
  return done;
}

}  // namespace ktune
