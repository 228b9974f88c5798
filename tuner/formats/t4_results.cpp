#include "tuner/formats/t4_results.hpp"

#include "tuner/core/errors.hpp"
#include "tuner/formats/data_file.hpp"
#include "tuner/formats/json_values.hpp"
#include "tuner/formats/python_json.hpp"

namespace ktune {
namespace {

struct InvalidityName {
  T4Invalidity invalidity;
  std::string_view name;
};
constexpr InvalidityName kInvalidityNames[] = {
    {T4Invalidity::correct, "correct"},         {T4Invalidity::compile, "compile"},
    {T4Invalidity::runtime, "runtime"},         {T4Invalidity::timeout, "timeout"},
    {T4Invalidity::correctness, "correctness"}, {T4Invalidity::constraints, "constraints"},
};

using Json = nlohmann::ordered_json;
using Members = std::vector<std::pair<std::string, Json>>;

// ---- reading ---------------------------------------------------------------------------------

const Json& require_kind(const Json& json, bool ok, const char* expected, const std::string& at) {
  if (!ok) throw InputError(at + ": expected " + expected + ", got " + json_kind(json));
  return json;
}

std::string read_text(const Json& json, const std::string& at) {
  return require_kind(json, json.is_string(), "a string", at).get<std::string>();
}

Value read_number(const Json& json, const std::string& at) {
  return scalar_value(require_kind(json, json.is_number(), "a number", at), at);
}

Config read_configuration(const Json& json, const std::string& at) {
  require_kind(json, json.is_object(), "an object of parameter values", at);
  Config config;
  for (auto it = json.begin(); it != json.end(); ++it)
    config.values.emplace_back(it.key(), scalar_value(it.value(), at + "." + it.key()));
  return config;
}

T4Times read_times(const Json& json, const std::string& at) {
  require_kind(json, json.is_object(), "an object of durations", at);
  T4Times times;
  for (auto it = json.begin(); it != json.end(); ++it) {
    const std::string member_at = at + "." + it.key();
    if (it.key() == "runtimes") {
      require_kind(it.value(), it.value().is_array(), "a list of numbers", member_at);
      std::vector<double> runtimes;
      for (std::size_t i = 0; i < it.value().size(); ++i) {
        const Json& runtime = it.value()[i];
        runtimes.push_back(require_kind(runtime, runtime.is_number(), "a number", member_at + "[" + std::to_string(i) + "]")
                               .get<double>());
      }
      times.runtimes = std::move(runtimes);
    } else {
      times.durations.emplace_back(it.key(), read_number(it.value(), member_at));
    }
  }
  return times;
}

T4Invalidity read_invalidity(const Json& json, const std::string& at) {
  const std::string name = read_text(json, at);
  if (const auto invalidity = parse_t4_invalidity(name)) return *invalidity;
  std::vector<std::string> names;
  for (const auto& entry : kInvalidityNames) names.emplace_back(entry.name);
  throw InputError(at + ": unknown invalidity \"" + name + "\"; T4 has " + join_names(names));
}

T4Measurement read_measurement(const Json& json, const std::string& at) {
  require_kind(json, json.is_object(), "an object with name, value and unit", at);
  if (!json.contains("name")) throw InputError(at + ": no \"name\" member");
  if (!json.contains("value")) throw InputError(at + ": no \"value\" member");
  T4Measurement measurement;
  for (auto it = json.begin(); it != json.end(); ++it) {
    const std::string member_at = at + "." + it.key();
    if (it.key() == "name") {
      measurement.name = read_text(it.value(), member_at);
    } else if (it.key() == "value") {
      const Json& value = it.value();
      measurement.value = require_kind(value, value.is_number() || value.is_string() || value.is_array(),
                                       "a number, a string or a list", member_at);
    } else if (it.key() == "unit") {
      measurement.unit = read_text(it.value(), member_at);
    } else {
      measurement.other_members.emplace_back(it.key(), it.value());
    }
  }
  return measurement;
}

T4Result read_result(const Json& json, const std::string& at) {
  require_kind(json, json.is_object(), "an object", at);
  // What the schema requires of every result.
  for (const char* required : {"configuration", "times", "invalidity", "correctness"})
    if (!json.contains(required)) throw InputError(at + ": no \"" + required + "\" member");
  T4Result result;
  for (auto it = json.begin(); it != json.end(); ++it) {
    const std::string& name = it.key();
    const Json& value = it.value();
    const std::string member_at = at + "." + name;
    if (name == "timestamp") {
      result.timestamp = read_text(value, member_at);
    } else if (name == "configuration") {
      result.configuration = read_configuration(value, member_at);
    } else if (name == "times") {
      result.times = read_times(value, member_at);
    } else if (name == "invalidity") {
      result.invalidity = read_invalidity(value, member_at);
    } else if (name == "correctness") {
      result.correctness = read_number(value, member_at);
    } else if (name == "measurements") {
      require_kind(value, value.is_array(), "a list of measurements", member_at);
      for (std::size_t i = 0; i < value.size(); ++i)
        result.measurements.push_back(read_measurement(value[i], member_at + "[" + std::to_string(i) + "]"));
    } else if (name == "objectives") {
      require_kind(value, value.is_array(), "a list of measurement names", member_at);
      for (std::size_t i = 0; i < value.size(); ++i)
        result.objectives.push_back(read_text(value[i], member_at + "[" + std::to_string(i) + "]"));
    } else {
      result.other_members.emplace_back(name, value);
    }
  }
  return result;
}

// ---- writing ---------------------------------------------------------------------------------

void append_members(Json& object, const Members& members) {
  for (const auto& [name, value] : members) object[name] = value;
}

Json result_json(const T4Result& result) {
  Json out = Json::object();
  if (result.timestamp) out["timestamp"] = *result.timestamp;
  Json configuration = Json::object();
  for (const auto& [name, value] : result.configuration.values) configuration[name] = to_ordered_json(value);
  out["configuration"] = std::move(configuration);
  Json times = Json::object();
  for (const auto& [name, value] : result.times.durations) times[name] = to_ordered_json(value);
  if (result.times.runtimes) times["runtimes"] = *result.times.runtimes;
  out["times"] = std::move(times);
  out["invalidity"] = std::string(to_string(result.invalidity));
  out["correctness"] = to_ordered_json(result.correctness);
  Json measurements = Json::array();
  for (const auto& measurement : result.measurements) {
    Json entry = {{"name", measurement.name}, {"value", measurement.value}, {"unit", measurement.unit}};
    append_members(entry, measurement.other_members);
    measurements.push_back(std::move(entry));
  }
  out["measurements"] = std::move(measurements);
  out["objectives"] = result.objectives;
  append_members(out, result.other_members);
  return out;
}

// ---- conversion ------------------------------------------------------------------------------

// Kernel Tuner's cache timings under their T4 names, in its converter's order.
constexpr std::pair<std::string_view, std::string_view> kCacheTimingsInT4[] = {
    {"compile_time", "compilation"},
    {"framework_time", "framework"},
    {"strategy_time", "search_algorithm"},
    {"verification_time", "validation"},
};

T4Invalidity invalidity_of(const std::optional<KernelTunerFailure>& failure) {
  if (!failure) return T4Invalidity::correct;
  switch (*failure) {
    case KernelTunerFailure::compilation_failed: return T4Invalidity::compile;
    case KernelTunerFailure::runtime_failed: return T4Invalidity::runtime;
    case KernelTunerFailure::invalid_config: return T4Invalidity::constraints;
  }
  return T4Invalidity::constraints;
}

// The objective's value as the record holds it (a time, an error name, a metric); null if none.
Json objective_value(const KernelTunerCache& cache, const KernelTunerRecord& record) {
  if (cache.objective == "time") {
    if (record.time_ms) return *record.time_ms;
    if (record.failure && record.failure_member == "time") return std::string(to_string(*record.failure));
    return nullptr;
  }
  const Json* value = record.member(cache.objective);
  return value != nullptr ? *value : Json(nullptr);
}

}  // namespace

std::string_view to_string(T4Invalidity invalidity) {
  for (const auto& entry : kInvalidityNames)
    if (entry.invalidity == invalidity) return entry.name;
  return "constraints";
}

std::optional<T4Invalidity> parse_t4_invalidity(std::string_view name) {
  for (const auto& entry : kInvalidityNames)
    if (entry.name == name) return entry.invalidity;
  return std::nullopt;
}

T4Invalidity t4_invalidity(Outcome outcome) {
  switch (outcome) {
    case Outcome::ok: return T4Invalidity::correct;
    case Outcome::wrong_result: return T4Invalidity::correctness;
    case Outcome::compile_error: return T4Invalidity::compile;
    case Outcome::launch_error: return T4Invalidity::runtime;
    case Outcome::timeout: return T4Invalidity::timeout;
    case Outcome::crashed: return T4Invalidity::runtime;
    case Outcome::unsupported: return T4Invalidity::constraints;
    case Outcome::out_of_memory: return T4Invalidity::runtime;
    case Outcome::noisy: return T4Invalidity::runtime;  // measured, but its time is not trusted
  }
  return T4Invalidity::runtime;
}

std::optional<double> T4Times::duration(std::string_view name) const {
  for (const auto& [duration_name, value] : durations)
    if (duration_name == name && is_number(value)) return as_double(value, duration_name);
  return std::nullopt;
}

const T4Measurement* T4Result::measurement(std::string_view name) const {
  for (const auto& entry : measurements)
    if (entry.name == name) return &entry;
  return nullptr;
}

T4Results read_t4_results(std::string_view bytes, const std::string& where, std::size_t max_bytes) {
  const Json top = parse_python_json(text_maybe_gzip(bytes, where, max_bytes), where);
  if (!top.is_object()) throw InputError(where + ": not T4 results (expected a JSON object, got " + json_kind(top) + ")");
  if (!top.contains("results")) throw InputError(where + ": not T4 results (no \"results\" member)");
  T4Results results;
  for (auto it = top.begin(); it != top.end(); ++it) {
    const std::string& name = it.key();
    const Json& value = it.value();
    const std::string at = where + ": " + name;
    if (name == "metadata") {
      results.metadata = value;
    } else if (name == "schema_version") {
      results.schema_version = read_text(value, at);
    } else if (name == "results") {
      require_kind(value, value.is_array(), "a list of results", at);
      results.results.reserve(value.size());
      for (std::size_t i = 0; i < value.size(); ++i)
        results.results.push_back(read_result(value[i], where + ": results[" + std::to_string(i) + "]"));
    } else {
      results.other_members.emplace_back(name, value);
    }
  }
  return results;
}

T4Results load_t4_results(const std::filesystem::path& file) {
  return read_t4_results(read_file_bytes(file, kMaxDecompressedBytes), file.string());
}

std::string t4_results_text(const T4Results& results) {
  Json top = Json::object();
  if (!results.metadata.is_null()) top["metadata"] = results.metadata;
  Json list = Json::array();
  for (const auto& result : results.results) list.push_back(result_json(result));
  top["results"] = std::move(list);
  top["schema_version"] = results.schema_version;
  append_members(top, results.other_members);
  return dump_python_json(top, "  ");
}

void save_t4_results(const T4Results& results, const std::filesystem::path& file) {
  write_text_maybe_gzip(file, t4_results_text(results));
}

T4Results t4_from_kernel_tuner_cache(const KernelTunerCache& cache) {
  T4Results t4;
  t4.metadata = {{"timeunit", "miliseconds"}};  // Kernel Tuner's spelling, kept for tools that compare it
  t4.results.reserve(cache.records.size());
  for (const auto& record : cache.records) {
    T4Result result;
    if (const Json* timestamp = record.member("timestamp"); timestamp != nullptr && timestamp->is_string())
      result.timestamp = timestamp->get<std::string>();
    result.configuration = cache.config(record);
    for (const auto& [cache_name, t4_name] : kCacheTimingsInT4)
      if (const Json* value = record.member(cache_name); value != nullptr && value->is_number())
        result.times.durations.emplace_back(t4_name, scalar_value(*value, record.key));
    result.times.runtimes = record.times_ms;
    result.invalidity = invalidity_of(record.failure);
    result.correctness = std::int64_t{result.invalidity == T4Invalidity::correct ? 1 : 0};
    // Kernel Tuner stops on a record without its objective; here it just has no measurement.
    if (Json value = objective_value(cache, record); value.is_number() || value.is_string() || value.is_array())
      result.measurements.push_back({cache.objective, std::move(value), "", {}});
    result.objectives = {cache.objective};
    t4.results.push_back(std::move(result));
  }
  return t4;
}

}  // namespace ktune
