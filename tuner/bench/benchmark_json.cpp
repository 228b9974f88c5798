#include "tuner/bench/benchmark_json.hpp"

#include <cmath>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "tuner/core/errors.hpp"
#include "tuner/core/input_file.hpp"

namespace ktune {
namespace {

struct TimeUnit {
  const char* name;
  double ns;
};
constexpr TimeUnit kTimeUnits[] = {{"ns", 1.0}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};

// Cuts `text` to at most `limit` bytes without splitting a UTF-8 sequence: messages end up in
// JSON error documents, which must stay valid UTF-8.
std::string shorten(std::string text, std::size_t limit = 60) {
  if (text.size() <= limit) return text;
  std::size_t end = limit - 3;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end) + "...";
}

// A value as messages show it: scalars as written, containers by kind only (input may be
// large or nested deeply, and printing it whole would be neither useful nor cheap).
std::string describe(const nlohmann::json& value) {
  if (value.is_object()) return "an object";
  if (value.is_array()) return "an array";
  return shorten(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// The JSON library's parse messages quote the bytes it stopped at, which may be anything;
// keep the message printable ASCII so it survives terminals and JSON error documents.
std::string printable(const std::string& text) {
  std::string out = text;
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7F) c = '?';
  return out;
}

// Google Benchmark output nests four levels deep; far deeper input is no benchmark file, and
// copying or printing it (both recursive in the JSON library) could overflow the stack.
constexpr int kMaxNesting = 64;

// Prepares the text for the JSON parser, looking only outside strings:
// - Google Benchmark writes NaN, -NaN, Infinity and -Infinity for values it could not compute
//   (the cv of a zero mean, say); JSON has no such numbers. They become null, so one such value
//   makes only the member that holds it unusable, not the whole file.
// - Nesting deeper than kMaxNesting is refused.
std::string prepare_for_parser(std::string_view text, const std::string& source) {
  static constexpr std::string_view kLiterals[] = {"-Infinity", "Infinity", "-NaN", "NaN"};
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  int depth = 0;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) out += text[++i];  // an escaped quote ends nothing
      else if (c == '"') in_string = false;
      ++i;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '[' || c == '{') {
      if (++depth > kMaxNesting)
        throw InputError(source + ": nested more than " + std::to_string(kMaxNesting) +
                         " levels deep at byte " + std::to_string(i) + "; not Google Benchmark JSON");
    }
    if (c == ']' || c == '}') --depth;
    bool replaced = false;
    for (std::string_view literal : kLiterals) {
      if (text.substr(i, literal.size()) == literal) {
        out += "null";
        i += literal.size();
        replaced = true;
        break;
      }
    }
    if (!replaced) out += text[i++];
  }
  return out;
}

// An optional member of type string: `fallback` when absent.
std::string optional_string(const nlohmann::json& entry, const char* key, const std::string& fallback,
                            const std::string& where) {
  const auto member = entry.find(key);
  if (member == entry.end()) return fallback;
  if (!member->is_string()) throw InputError(where + ": \"" + key + "\" must be a string, got " + describe(*member));
  return member->get<std::string>();
}

bool optional_bool(const nlohmann::json& entry, const char* key, const std::string& where) {
  const auto member = entry.find(key);
  if (member == entry.end()) return false;
  if (!member->is_boolean()) throw InputError(where + ": \"" + key + "\" must be true or false, got " + describe(*member));
  return member->get<bool>();
}

// The entry's "real_time" in nanoseconds.
double real_time_ns(const nlohmann::json& entry, const std::string& where) {
  const auto time = entry.find("real_time");
  if (time == entry.end()) throw InputError(where + ": missing \"real_time\"");
  if (!time->is_number())
    throw InputError(where + ": \"real_time\" must be a number, got " + describe(*time) +
                     (time->is_null() ? " (NaN and Infinity read as null)" : ""));
  const double value = time->get<double>();
  if (!std::isfinite(value) || value < 0)
    throw InputError(where + ": \"real_time\" must be a finite time >= 0, got " + describe(*time));

  const auto unit = entry.find("time_unit");
  if (unit == entry.end()) throw InputError(where + ": missing \"time_unit\" (one of ns, us, ms, s)");
  if (!unit->is_string()) throw InputError(where + ": \"time_unit\" must be a string, got " + describe(*unit));
  for (const TimeUnit& known : kTimeUnits) {
    if (unit->get<std::string>() != known.name) continue;
    const double ns = value * known.ns;
    if (!std::isfinite(ns))
      throw InputError(where + ": \"real_time\" " + describe(*time) + " " + known.name + " is too large");
    return ns;
  }
  throw InputError(where + ": unknown \"time_unit\" " + describe(*unit) + "; valid: ns, us, ms, s");
}

// Collects the entries of one benchmark name while the file is read.
struct Collected {
  BenchmarkSamples samples;
  std::vector<double> mean_aggregates_ns;
  bool has_timing_entry = false;  // an entry other than a complexity fit (BigO, RMS)
};

class Collector {
 public:
  Collected& operator[](const std::string& name) {
    const auto [position, inserted] = index_.try_emplace(name, collected_.size());
    if (inserted) {
      collected_.emplace_back();
      collected_.back().samples.name = name;
    }
    return collected_[position->second];
  }

  std::vector<BenchmarkSamples> finish() {
    std::vector<BenchmarkSamples> benchmarks;
    for (Collected& c : collected_) {
      if (!c.has_timing_entry) continue;  // complexity fits only: no timing to compare
      BenchmarkSamples& b = c.samples;
      if (b.real_time_ns.empty() && !c.mean_aggregates_ns.empty()) {
        b.real_time_ns = c.mean_aggregates_ns;
        b.from_mean_aggregate = true;
      }
      if (b.real_time_ns.empty() && b.error_message.empty())
        b.error_message = "no timing: neither repetitions nor a mean aggregate";
      benchmarks.push_back(std::move(b));
    }
    return benchmarks;
  }

 private:
  std::vector<Collected> collected_;
  std::unordered_map<std::string, std::size_t> index_;
};

void read_entry(const nlohmann::json& entry, const std::string& at, Collector& collector) {
  if (!entry.is_object()) throw InputError(at + ": expected an object, got " + describe(entry));
  const std::string entry_name = optional_string(entry, "name", "", at);
  std::string name = optional_string(entry, "run_name", entry_name, at);
  if (name.empty()) throw InputError(at + ": missing \"name\" (a non-empty string)");
  const std::string where = at + " (" + shorten(entry_name.empty() ? name : entry_name, 120) + ")";

  const bool has_aggregate_name = entry.contains("aggregate_name");
  const std::string run_type = optional_string(entry, "run_type", has_aggregate_name ? "aggregate" : "iteration", where);
  if (run_type != "iteration" && run_type != "aggregate")
    throw InputError(where + ": unknown \"run_type\" \"" + shorten(run_type) + "\"; valid: iteration, aggregate");

  const std::string aggregate = run_type == "aggregate" ? optional_string(entry, "aggregate_name", "", where) : "";
  // Files from before "run_name" existed name an aggregate "<benchmark>_<aggregate>".
  const std::string suffix = "_" + aggregate;
  if (!entry.contains("run_name") && !aggregate.empty() && name.size() > suffix.size() && name.ends_with(suffix))
    name.resize(name.size() - suffix.size());
  if (aggregate == "BigO" || aggregate == "RMS") return;  // a complexity fit, no timing
  Collected& collected = collector[name];
  collected.has_timing_entry = true;

  const bool error = optional_bool(entry, "error_occurred", where);
  const bool skipped = optional_bool(entry, "skipped", where);
  if (error || skipped) {
    if (collected.samples.error_message.empty()) {
      const std::string message = error ? optional_string(entry, "error_message", "", where)
                                        : optional_string(entry, "skip_message", "", where);
      collected.samples.error_message =
          (error ? "error" : "skipped") + (message.empty() ? std::string() : ": " + message);
    }
    return;
  }
  if (run_type == "iteration") {
    collected.samples.real_time_ns.push_back(real_time_ns(entry, where));
  } else if (aggregate == "mean" && optional_string(entry, "aggregate_unit", "time", where) == "time") {
    collected.mean_aggregates_ns.push_back(real_time_ns(entry, where));
  }
}

}  // namespace

const BenchmarkSamples* BenchmarkFile::find(std::string_view name) const {
  for (const BenchmarkSamples& b : benchmarks)
    if (b.name == name) return &b;
  return nullptr;
}

BenchmarkFile parse_benchmark_json(std::string_view text, const std::string& source) {
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(prepare_for_parser(text, source));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(source + ": not valid JSON (" + printable(e.what()) + ")");
  }
  if (!document.is_object())
    throw InputError(source + ": expected Google Benchmark JSON (an object with a \"benchmarks\" array), got " +
                     describe(document));
  BenchmarkFile file;
  file.source = source;
  file.context = nlohmann::json::object();
  if (const auto context = document.find("context"); context != document.end()) {
    if (!context->is_object()) throw InputError(source + ": \"context\" must be an object, got " + describe(*context));
    file.context = std::move(*context);
  }
  const auto benchmarks = document.find("benchmarks");
  if (benchmarks == document.end())
    throw InputError(source + ": no \"benchmarks\" array; expected Google Benchmark JSON "
                              "(--benchmark_format=json or --benchmark_out=FILE)");
  if (!benchmarks->is_array())
    throw InputError(source + ": \"benchmarks\" must be an array, got " + describe(*benchmarks));

  Collector collector;
  for (std::size_t i = 0; i < benchmarks->size(); ++i)
    read_entry((*benchmarks)[i], source + ": benchmarks[" + std::to_string(i) + "]", collector);
  file.benchmarks = collector.finish();
  return file;
}

BenchmarkFile load_benchmark_json(const std::filesystem::path& file) {
  std::error_code error;
  if (!std::filesystem::exists(file, error)) throw InputError(file.string() + ": no such file");
  if (std::filesystem::is_directory(file, error))
    throw InputError(file.string() + ": is a directory, not a Google Benchmark JSON file");
  return parse_benchmark_json(read_file_bytes(file, std::size_t{256} << 20), file.string());
}

}  // namespace ktune
