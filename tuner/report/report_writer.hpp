// Writes the dashboard of `ktune report` into a directory that opens offline from file://:
// index.html, report.css and report.js (embedded in ktune at build time from
// tuner/report/assets/), chart.min.js (Chart.js, copied from Debian's libjs-chart.js) and
// data.js (`window.KTUNE_REPORT = {...};`, the data of report_data.hpp).
#pragma once

#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

namespace ktune {

// Where Chart.js is looked for: $KTUNE_CHARTJS, else Debian's libjs-chart.js.
std::filesystem::path chartjs_path();

// Returns the files written. BackendUnavailable (exit 3) when Chart.js is missing, saying which
// package to install; InputError when `dir` cannot be written.
std::vector<std::filesystem::path> write_report(const std::filesystem::path& dir, const nlohmann::json& data);

}  // namespace ktune
