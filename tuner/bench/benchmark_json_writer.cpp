#include "tuner/bench/benchmark_json_writer.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tuner/measure/statistics.hpp"

namespace ktune {
namespace {


double mean(const std::vector<double>& values) {
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double stddev(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const double m = mean(values);
  double sum = 0;
  for (double v : values) sum += (v - m) * (v - m);
  return std::sqrt(sum / static_cast<double>(values.size() - 1));
}

// The fields every entry of one benchmark shares.
nlohmann::json base_entry(const BenchmarkRecord& record, std::size_t family_index) {
  nlohmann::json entry = {{"name", record.name},
                          {"family_index", family_index},
                          {"per_family_instance_index", 0},
                          {"run_name", record.name},
                          {"threads", 1}};
  if (!record.label.empty()) entry["label"] = record.label;
  return entry;
}

// Counters for a time of `ns` per launch.
void add_counters(nlohmann::json& entry, const BenchmarkRecord& record, double ns) {
  const double seconds = ns * 1e-9;
  entry["bytes_per_second"] = seconds > 0 ? record.bytes / seconds : 0.0;
  entry["flops_per_second"] = seconds > 0 ? record.flops / seconds : 0.0;
  if (record.baseline_ns && ns > 0) entry["percent_of_baseline"] = 100.0 * *record.baseline_ns / ns;
  if (record.peak_bytes_per_second && seconds > 0)
    entry["percent_of_peak_bandwidth"] = 100.0 * record.bytes / seconds / *record.peak_bytes_per_second;
}

// Nanoseconds, Google Benchmark's own default: its compare.py prints times as whole numbers.
void set_time(nlohmann::json& entry, double ns) {
  entry["real_time"] = ns;
  entry["cpu_time"] = ns;
  entry["time_unit"] = "ns";
}

}  // namespace

nlohmann::json make_benchmark_json(const nlohmann::json& context, const std::vector<BenchmarkRecord>& records) {
  nlohmann::json benchmarks = nlohmann::json::array();
  for (std::size_t index = 0; index < records.size(); ++index) {
    const BenchmarkRecord& record = records[index];
    const std::size_t repetitions = record.repetitions_ns.size();
    if (!record.error_message.empty() || repetitions == 0) {
      nlohmann::json entry = base_entry(record, index);
      entry["run_type"] = "iteration";
      entry["repetitions"] = std::max<std::size_t>(repetitions, 1);
      entry["repetition_index"] = 0;
      entry["iterations"] = 0;
      set_time(entry, 0);
      entry["error_occurred"] = true;
      entry["error_message"] = record.error_message.empty() ? "no repetition ran" : record.error_message;
      benchmarks.push_back(std::move(entry));
      continue;
    }
    for (std::size_t r = 0; r < repetitions; ++r) {
      nlohmann::json entry = base_entry(record, index);
      entry["run_type"] = "iteration";
      entry["repetitions"] = repetitions;
      entry["repetition_index"] = r;
      entry["iterations"] = r < record.iterations.size() ? record.iterations[r] : 1;
      set_time(entry, record.repetitions_ns[r]);
      add_counters(entry, record, record.repetitions_ns[r]);
      benchmarks.push_back(std::move(entry));
    }
    if (repetitions < 2) continue;
    const double m = mean(record.repetitions_ns);
    const double s = stddev(record.repetitions_ns);
    const std::vector<std::pair<const char*, double>> aggregates{
        {"mean", m}, {"median", median(record.repetitions_ns)}, {"stddev", s}, {"cv", m > 0 ? s / m : 0}};
    for (const auto& [aggregate, value] : aggregates) {
      nlohmann::json entry = base_entry(record, index);
      entry["name"] = record.name + "_" + aggregate;
      entry["run_type"] = "aggregate";
      entry["repetitions"] = repetitions;
      entry["iterations"] = repetitions;
      entry["aggregate_name"] = aggregate;
      entry["aggregate_unit"] = std::string(aggregate) == "cv" ? "percentage" : "time";
      if (std::string(aggregate) == "cv") {
        entry["real_time"] = value;
        entry["cpu_time"] = value;
        entry["time_unit"] = "ns";
      } else {
        set_time(entry, value);
        if (std::string(aggregate) != "stddev") add_counters(entry, record, value);
      }
      benchmarks.push_back(std::move(entry));
    }
  }
  return {{"context", context}, {"benchmarks", benchmarks}};
}

}  // namespace ktune
