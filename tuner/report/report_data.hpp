// The data behind `ktune report`: everything the dashboard shows, built from the database as one
// JSON object (the schema is documented at the top of tuner/report/assets/report.js's loader and
// in README's "Report" section). Per (family, backend, device) group:
//   history      per tuned benchmark, its median time at each bench run, with change points
//                found by E-divisive means (change_points.hpp) rather than a fixed threshold;
//   latest       the newest bench run: tuned vs default vs baseline (copy) and % of the ceiling;
//   tuning       per tuned problem, every evaluation in order (convergence, parameter effects).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/store.hpp"
#include "tuner/report/change_points.hpp"

namespace ktune {

struct ReportOptions {
  ChangePointOptions change_points{.alpha = 0.05, .permutations = 499, .min_segment = 3,
                                   .min_relative_change = 0.02, .seed = 1};
  std::size_t max_evaluations = 3000;  // per tuned problem; thinned beyond (improvements kept)
  std::vector<std::string> families;   // only these kernel families; empty: all
};

nlohmann::json build_report_data(Store& store, const std::string& database_label, const ReportOptions& options);

}  // namespace ktune
