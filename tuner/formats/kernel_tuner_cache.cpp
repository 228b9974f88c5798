// Reading Kernel Tuner caches: the model's helpers, the header and records, and the recovery of
// files an interrupted run left unterminated. Writing is in kernel_tuner_cache_writer.cpp.
#include "tuner/formats/kernel_tuner_cache.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "tuner/core/errors.hpp"
#include "tuner/formats/data_file.hpp"
#include "tuner/formats/json_values.hpp"
#include "tuner/formats/python_json.hpp"

namespace ktune {

namespace {

struct FailureName {
  KernelTunerFailure failure;
  std::string_view name;
};
constexpr FailureName kFailureNames[] = {
    {KernelTunerFailure::invalid_config, "InvalidConfig"},
    {KernelTunerFailure::compilation_failed, "CompilationFailedConfig"},
    {KernelTunerFailure::runtime_failed, "RuntimeFailedConfig"},
};

std::string known_failure_names() {
  std::vector<std::string> names;
  for (const auto& entry : kFailureNames) names.emplace_back(entry.name);
  return join_names(names);
}

// Newer Kernel Tuner versions also record the error of a failed config under this member.
constexpr std::string_view kErrorMember = "__error__";

std::string record_where(const std::string& where, std::string_view key) {
  return where + ": record \"" + std::string(key) + "\"";
}

// ---- header ----------------------------------------------------------------------------------

std::string text_member(const nlohmann::ordered_json& json, const std::string& at) {
  if (!json.is_string()) throw InputError(at + ": expected a string, got " + json_kind(json));
  return json.get<std::string>();
}

std::vector<Value> value_list(const nlohmann::ordered_json& json, const std::string& at) {
  if (!json.is_array()) throw InputError(at + ": expected a list of values, got " + json_kind(json));
  std::vector<Value> values;
  values.reserve(json.size());
  for (std::size_t i = 0; i < json.size(); ++i) values.push_back(scalar_value(json[i], at + "[" + std::to_string(i) + "]"));
  return values;
}

void check_parameters_agree(const KernelTunerCache& cache, const std::string& where) {
  std::unordered_set<std::string> keys;
  for (const auto& name : cache.tune_params_keys)
    if (!keys.insert(name).second) throw InputError(where + ": tune_params_keys names '" + name + "' twice");
  std::unordered_set<std::string> with_values;
  for (const auto& [name, values] : cache.tune_params) {
    if (!keys.contains(name))
      throw InputError(where + ": tune_params has '" + name + "', which is not in tune_params_keys (" +
                       join_names(cache.tune_params_keys) + ")");
    with_values.insert(name);
  }
  for (const auto& name : cache.tune_params_keys)
    if (!with_values.contains(name)) throw InputError(where + ": tune_params has no values for '" + name + "'");
}

// Fills everything but the records from the top-level object (whose "cache" member is skipped).
void read_header(const nlohmann::ordered_json& top, const std::string& where, KernelTunerCache& cache) {
  if (!top.is_object())
    throw InputError(where + ": not a Kernel Tuner cache (expected a JSON object, got " + json_kind(top) + ")");
  for (const char* required : {"device_name", "kernel_name", "tune_params_keys", "tune_params", "cache"})
    if (!top.contains(required))
      throw InputError(where + ": not a Kernel Tuner cache (no \"" + required + "\" member)");
  for (auto it = top.begin(); it != top.end(); ++it) {
    const std::string& name = it.key();
    const nlohmann::ordered_json& value = it.value();
    const std::string at = where + ": " + name;
    if (name == "device_name") {
      cache.device_name = text_member(value, at);
    } else if (name == "kernel_name") {
      cache.kernel_name = text_member(value, at);
    } else if (name == "problem_size") {
      // Kernel Tuner accepts a single number for a 1D problem and writes "callable" for a function.
      cache.problem_size = value.is_array() ? value_list(value, at) : std::vector<Value>{scalar_value(value, at)};
    } else if (name == "tune_params_keys") {
      if (!value.is_array()) throw InputError(at + ": expected a list of names, got " + json_kind(value));
      for (std::size_t i = 0; i < value.size(); ++i)
        cache.tune_params_keys.push_back(text_member(value[i], at + "[" + std::to_string(i) + "]"));
    } else if (name == "tune_params") {
      if (!value.is_object()) throw InputError(at + ": expected an object of value lists, got " + json_kind(value));
      for (auto param = value.begin(); param != value.end(); ++param)
        cache.tune_params.emplace_back(param.key(), value_list(param.value(), at + "." + param.key()));
    } else if (name == "objective") {
      cache.objective = text_member(value, at);
    } else if (name == "cache") {
      if (!value.is_object()) throw InputError(at + ": expected an object of records, got " + json_kind(value));
    } else {
      cache.other_header_members.emplace_back(name, value);
    }
  }
  check_parameters_agree(cache, where);
}

// ---- records ---------------------------------------------------------------------------------

std::optional<KernelTunerFailure> failure_named(const nlohmann::ordered_json& value, const std::string& at) {
  const std::string& text = value.get_ref<const std::string&>();
  const auto failure = parse_kernel_tuner_failure(text);
  if (!failure)
    throw InputError(at + ": \"" + text + "\" is neither a number nor an error Kernel Tuner writes (" +
                     known_failure_names() + ")");
  return failure;
}

// Reads records against the header, keeping the parameter names for quick membership checks.
class RecordReader {
 public:
  explicit RecordReader(const KernelTunerCache& cache)
      : cache_(cache), parameters_(cache.tune_params_keys.begin(), cache.tune_params_keys.end()) {}

  KernelTunerRecord read(const std::string& key, const nlohmann::ordered_json& body, const std::string& where) const {
    const std::string at = record_where(where, key);
    if (!body.is_object()) throw InputError(at + ": expected an object, got " + json_kind(body));
    KernelTunerRecord record;
    record.key = key;
    record.config.reserve(cache_.tune_params_keys.size());
    for (const auto& name : cache_.tune_params_keys) {
      const auto it = body.find(name);
      if (it == body.end()) throw InputError(at + ": no value for the parameter '" + name + "'");
      record.config.push_back(scalar_value(*it, at + ": parameter '" + name + "'"));
    }
    for (auto it = body.begin(); it != body.end(); ++it) {
      const std::string& name = it.key();
      const nlohmann::ordered_json& value = it.value();
      if (parameters_.contains(name)) continue;
      if (name == "time") {
        read_time(value, at + ": member 'time'", record);
      } else if (name == "times") {
        record.times_ms = number_list(value, at + ": member 'times'");
      } else {
        record.other_members.emplace_back(name, value);
      }
    }
    if (!record.failure) find_failure_elsewhere(record, at);
    return record;
  }

 private:
  static void read_time(const nlohmann::ordered_json& value, const std::string& at, KernelTunerRecord& record) {
    if (value.is_number()) {
      record.time_ms = value.get<double>();
    } else if (value.is_string()) {
      record.failure = failure_named(value, at);
      record.failure_member = "time";
    } else {
      throw InputError(at + ": expected a number (ms) or an error name, got " + json_kind(value));
    }
  }

  static std::vector<double> number_list(const nlohmann::ordered_json& value, const std::string& at) {
    if (!value.is_array()) throw InputError(at + ": expected a list of numbers, got " + json_kind(value));
    std::vector<double> numbers;
    numbers.reserve(value.size());
    for (std::size_t i = 0; i < value.size(); ++i) {
      const auto number = number_of(value[i]);
      if (!number) throw InputError(at + "[" + std::to_string(i) + "]: expected a number, got " + json_kind(value[i]));
      numbers.push_back(*number);
    }
    return numbers;
  }

  // With an objective other than time, Kernel Tuner stores the error under the objective; newer
  // versions also under "__error__". Such a member stays in other_members, where it was.
  void find_failure_elsewhere(KernelTunerRecord& record, const std::string& at) const {
    for (const auto& [name, value] : record.other_members) {
      const bool may_hold_failure = name == kErrorMember || (name == cache_.objective && name != "time");
      if (!may_hold_failure || !value.is_string()) continue;
      record.failure = failure_named(value, at + ": member '" + name + "'");
      record.failure_member = name;
      return;
    }
  }

  const KernelTunerCache& cache_;
  std::unordered_set<std::string> parameters_;
};

// ---- the two ways in -------------------------------------------------------------------------

KernelTunerCache read_complete(const nlohmann::ordered_json& top, const std::string& where) {
  KernelTunerCache cache;
  read_header(top, where, cache);
  const RecordReader reader(cache);
  const nlohmann::ordered_json& records = top["cache"];
  cache.records.reserve(records.size());
  for (auto it = records.begin(); it != records.end(); ++it) cache.records.push_back(reader.read(it.key(), it.value(), where));
  return cache;
}

// Kernel Tuner ends the header with this line and writes each record on a line of its own.
constexpr std::string_view kCacheLine = "\n\"cache\": {";

std::string_view trim(std::string_view text) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

// The key at the start of a record line, for messages about a line that does not parse.
std::string leading_key(std::string_view line) {
  if (line.empty() || line[0] != '"') return {};
  for (std::size_t i = 1; i < line.size() && i < 200; ++i) {
    if (line[i] == '\\') ++i;
    else if (line[i] == '"') return std::string(line.substr(1, i - 1));
  }
  return {};
}

// Reads a file that is not valid JSON as a whole the way Kernel Tuner's own reader does: the
// header up to the "cache" line, then one record per line. Kernel Tuner closes such a file with
// "}\n}" and parses it, so it fails on a record cut off in the middle of a line (killed while
// writing); this reader drops that last line instead and says so in `recovery`. A line that does
// not parse anywhere else is an error, as is anything after the closing braces.
KernelTunerCache read_line_by_line(std::string_view text, const std::string& where, const InputError& whole_file_error) {
  const std::size_t cache_line = text.find(kCacheLine);
  if (cache_line == std::string_view::npos) throw whole_file_error;  // not Kernel Tuner's layout: report the JSON error
  const std::size_t body_start = cache_line + kCacheLine.size();
  std::string header_text(text.substr(0, body_start));
  header_text += "}\n}";
  KernelTunerCache cache;
  read_header(parse_python_json(header_text, where + " (header)"), where, cache);
  const RecordReader reader(cache);

  std::vector<std::string_view> lines;
  for (std::size_t start = body_start; start <= text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  std::size_t last_filled = lines.size();
  for (std::size_t i = lines.size(); i-- > 0;)
    if (!trim(lines[i]).empty()) {
      last_filled = i;
      break;
    }
  const std::size_t first_line_number = static_cast<std::size_t>(std::count(text.begin(), text.begin() + body_start, '\n')) + 1;

  std::unordered_map<std::string, std::size_t> position_of_key;
  std::size_t closing_braces = 0;  // 1: "cache" closed, 2: the file closed
  std::size_t bytes_dropped = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = trim(lines[i]);
    if (line.empty()) continue;
    const std::string at = where + ": line " + std::to_string(first_line_number + i);
    if (closing_braces == 2) throw InputError(at + ": text after the end of the cache");
    if (std::all_of(line.begin(), line.end(), [](char c) { return c == '}'; }) && closing_braces + line.size() <= 2) {
      closing_braces += line.size();
      continue;
    }
    if (closing_braces > 0) throw InputError(at + ": a record after the end of the cache");

    if (line.back() == ',') line.remove_suffix(1);
    nlohmann::ordered_json members;
    try {
      members = parse_python_json("{" + std::string(line) + "}", at);
    } catch (const InputError& error) {
      // The last record of a closed file carries the cache's closing brace: `"key": {...}}`.
      bool closes_cache = false;
      if (line.back() == '}') {
        try {
          members = parse_python_json("{" + std::string(line), at);
          closes_cache = true;
        } catch (const InputError&) {
        }
      }
      if (closes_cache) {
        closing_braces = 1;
      } else if (i == last_filled) {
        bytes_dropped = lines[i].size();  // cut off while being written
        break;
      } else {
        const std::string key = leading_key(line);
        throw InputError(key.empty() ? std::string(error.what())
                                     : record_where(at, key) + ": not a complete record: " + error.what());
      }
    }
    for (auto it = members.begin(); it != members.end(); ++it) {
      KernelTunerRecord record = reader.read(it.key(), it.value(), at);
      // Python's json keeps the last value of a repeated key, at the first one's place.
      const auto [found, inserted] = position_of_key.try_emplace(record.key, cache.records.size());
      if (inserted) cache.records.push_back(std::move(record));
      else cache.records[found->second] = std::move(record);
    }
  }
  if (closing_braces < 2) cache.recovery = InterruptedRunRecovery{cache.records.size(), bytes_dropped};
  return cache;
}

}  // namespace

// ---- public ----------------------------------------------------------------------------------

std::string_view to_string(KernelTunerFailure failure) {
  for (const auto& entry : kFailureNames)
    if (entry.failure == failure) return entry.name;
  return "UnknownFailure";
}

std::optional<KernelTunerFailure> parse_kernel_tuner_failure(std::string_view name) {
  for (const auto& entry : kFailureNames)
    if (entry.name == name) return entry.failure;
  return std::nullopt;
}

std::optional<double> KernelTunerRecord::number(std::string_view name) const {
  const nlohmann::ordered_json* value = member(name);
  return value != nullptr ? number_of(*value) : std::nullopt;
}

const nlohmann::ordered_json* KernelTunerRecord::member(std::string_view name) const {
  for (const auto& [member_name, value] : other_members)
    if (member_name == name) return &value;
  return nullptr;
}

const KernelTunerRecord* KernelTunerCache::find(std::string_view key) const {
  for (const auto& record : records)
    if (record.key == key) return &record;
  return nullptr;
}

Config KernelTunerCache::config(const KernelTunerRecord& record) const {
  Config config;
  for (std::size_t i = 0; i < tune_params_keys.size() && i < record.config.size(); ++i)
    config.values.emplace_back(tune_params_keys[i], record.config[i]);
  return config;
}

KernelTunerCache read_kernel_tuner_cache(std::string_view bytes, const std::string& where, std::size_t max_bytes) {
  const std::string text = text_maybe_gzip(bytes, where, max_bytes);
  nlohmann::ordered_json top;
  try {
    top = parse_python_json(text, where);
  } catch (const InputError& whole_file_error) {
    try {
      return read_line_by_line(text, where, whole_file_error);
    } catch (const InputError& line_error) {
      if (std::strcmp(line_error.what(), whole_file_error.what()) == 0) throw;
      // Both readings failed; the parser's line and column usually point at the damage.
      throw InputError(std::string(whole_file_error.what()) + "; read line by line as a file an interrupted run left: " +
                       line_error.what());
    }
  }
  return read_complete(top, where);
}

KernelTunerCache load_kernel_tuner_cache(const std::filesystem::path& file) {
  return read_kernel_tuner_cache(read_file_bytes(file, kMaxDecompressedBytes), file.string());
}

}  // namespace ktune
