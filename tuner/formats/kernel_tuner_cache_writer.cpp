// Writing Kernel Tuner caches byte for byte as Kernel Tuner does: the header as
// json.dumps(header, indent="") without its closing "}\n}", each record on its own line as
// json.dumps({key: record})[1:-1], records separated by ",", and "}\n}" to close.
#include <cmath>
#include <stdexcept>

#include "tuner/formats/data_file.hpp"
#include "tuner/formats/json_values.hpp"
#include "tuner/formats/kernel_tuner_cache.hpp"
#include "tuner/formats/python_json.hpp"

namespace ktune {
namespace {

// Python's str() of a value, as Kernel Tuner joins the values into a record key.
std::string python_str(const Value& value) {
  if (const auto* real = std::get_if<double>(&value)) {
    if (std::isnan(*real)) return "nan";
    if (std::isinf(*real)) return *real > 0 ? "inf" : "-inf";
    return python_float_repr(*real);
  }
  return to_string(value);
}

nlohmann::ordered_json value_list_json(const std::vector<Value>& values) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& value : values) list.push_back(to_ordered_json(value));
  return list;
}

nlohmann::ordered_json header_json(const KernelTunerCache& cache) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  header["device_name"] = cache.device_name;
  header["kernel_name"] = cache.kernel_name;
  if (!cache.problem_size.empty()) header["problem_size"] = value_list_json(cache.problem_size);
  header["tune_params_keys"] = cache.tune_params_keys;
  nlohmann::ordered_json tune_params = nlohmann::ordered_json::object();
  for (const auto& [name, values] : cache.tune_params) tune_params[name] = value_list_json(values);
  header["tune_params"] = std::move(tune_params);
  header["objective"] = cache.objective;
  for (const auto& [name, value] : cache.other_header_members) header[name] = value;
  header["cache"] = nlohmann::ordered_json::object();  // last: the records are appended to it
  return header;
}

// Members in Kernel Tuner's order: the parameters, "time", "times", then the rest as read.
nlohmann::ordered_json record_json(const KernelTunerCache& cache, const KernelTunerRecord& record) {
  if (record.config.size() != cache.tune_params_keys.size())
    throw std::invalid_argument("Kernel Tuner cache record \"" + record.key + "\" has " +
                                std::to_string(record.config.size()) + " values for " +
                                std::to_string(cache.tune_params_keys.size()) + " parameters");
  nlohmann::ordered_json body = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < record.config.size(); ++i) body[cache.tune_params_keys[i]] = to_ordered_json(record.config[i]);
  if (record.time_ms) body["time"] = *record.time_ms;
  else if (record.failure && record.failure_member == "time") body["time"] = std::string(to_string(*record.failure));
  if (record.times_ms) body["times"] = *record.times_ms;
  for (const auto& [name, value] : record.other_members) body[name] = value;
  return body;
}

}  // namespace

std::string kernel_tuner_key(const std::vector<Value>& config) {
  std::string key;
  for (const auto& value : config) {
    if (!key.empty()) key += ',';
    key += python_str(value);
  }
  return key;
}

std::string kernel_tuner_cache_text(const KernelTunerCache& cache) {
  std::string text = dump_python_json(header_json(cache), "");
  text.resize(text.size() - 3);  // `"cache": {}\n}` -> `"cache": {`, as Kernel Tuner opens the file
  for (const auto& record : cache.records) {
    nlohmann::ordered_json line = nlohmann::ordered_json::object();
    line[record.key] = record_json(cache, record);
    const std::string member = dump_python_json(line);
    text += '\n';
    text.append(member, 1, member.size() - 2);  // without the object's braces
    text += ',';
  }
  if (!cache.records.empty()) text.pop_back();
  text += "}\n}";
  return text;
}

void save_kernel_tuner_cache(const KernelTunerCache& cache, const std::filesystem::path& file) {
  write_text_maybe_gzip(file, kernel_tuner_cache_text(cache));
}

}  // namespace ktune
