// Store's bench history and tuning traces: what `ktune bench` writes and `ktune report` reads.
// Schema: db/migrations/002_bench_history.sql (bench) and 001_initial.sql (measurements).
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "db/process_owner.hpp"
#include "db/store_impl.hpp"
#include "tuner/measure/statistics.hpp"

namespace ktune {
using namespace store_detail;

namespace {


// Indices of an even spread of `limit` points out of `total` (the first and last included),
// plus those in `keep`.
std::vector<std::size_t> spread(std::size_t total, std::size_t limit, const std::vector<std::size_t>& keep) {
  std::vector<std::size_t> picked;
  if (total <= limit) {
    for (std::size_t i = 0; i < total; ++i) picked.push_back(i);
    return picked;
  }
  for (std::size_t k = 0; k < limit; ++k)
    picked.push_back(limit == 1 ? 0 : k * (total - 1) / (limit - 1));
  picked.insert(picked.end(), keep.begin(), keep.end());
  std::sort(picked.begin(), picked.end());
  picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
  return picked;
}

}  // namespace

std::int64_t Store::begin_bench_run(const BenchRunInfo& run, std::int64_t device_id) {
  Impl& self = Impl::of(impl_);
  Transaction txn = self.transaction();
  {
    Query insert = self.query(
        "INSERT INTO bench_runs (started_at, status, ktune_version, git_commit, argv, hostname, device_id, "
        "suite, repetitions, context, owner) VALUES (?1, 'running', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
    insert->bind_text(1, now_iso8601())
        .bind_text(2, run.ktune_version)
        .bind_text(3, run.git_commit)
        .bind_text(4, dump(nlohmann::json(run.argv)))
        .bind_text(5, run.hostname)
        .bind_int(6, device_id)
        .bind_text(7, run.suite)
        .bind_int(8, run.repetitions)
        .bind_text(9, dump(run.context))
        .bind_text(10, this_process_owner());
    insert->run();
  }
  const std::int64_t id = sqlite3_last_insert_rowid(self.db);
  txn.commit();
  return id;
}

void Store::record_bench_result(std::int64_t bench_run_id, const BenchResultRecord& result) {
  Impl& self = Impl::of(impl_);
  std::vector<double> finite;
  for (double t : result.repetitions_ns)
    if (std::isfinite(t)) finite.push_back(t);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Transaction txn = self.transaction();
  {
    Query insert = self.query(
        "INSERT INTO bench_results (bench_run_id, name, role, kernel_id, problem_id, config, config_source, "
        "baseline_name, outcome, message, repetitions_ns, median_ns, min_ns, max_ns, bytes, flops, error, "
        "measured_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, NULLIF(?8, ''), ?9, ?10, ?11, ?12, ?13, ?14, ?15, "
        "?16, ?17, ?18)");
    insert->bind_int(1, bench_run_id)
        .bind_text(2, result.name)
        .bind_text(3, result.role)
        .bind_int(4, result.kernel_id)
        .bind_int(5, result.problem_id)
        .bind_text(6, dump(result.config.to_json()))
        .bind_text(7, result.config_source)
        .bind_text(8, result.baseline_name)
        .bind_text(9, to_string(result.outcome))
        .bind_text(10, result.message)
        .bind_text(11, dump(samples_to_json(result.repetitions_ns)))
        .bind_real(12, median(finite))
        .bind_real(13, finite.empty() ? nan : *std::min_element(finite.begin(), finite.end()))
        .bind_real(14, finite.empty() ? nan : *std::max_element(finite.begin(), finite.end()))
        .bind_real(15, result.bytes)
        .bind_real(16, result.flops)
        .bind_real(17, result.error)
        .bind_text(18, now_iso8601());
    insert->run();
  }
  txn.commit();
}

void Store::finish_bench_run(std::int64_t bench_run_id, const std::string& status) {
  Impl& self = Impl::of(impl_);
  Transaction txn = self.transaction();
  {
    Query update = self.query("UPDATE bench_runs SET finished_at = ?1, status = ?2 WHERE id = ?3");
    update->bind_text(1, now_iso8601()).bind_text(2, status).bind_int(3, bench_run_id);
    update->run();
  }
  if (sqlite3_changes(self.db) == 0)
    throw std::invalid_argument("Store::finish_bench_run: no bench run with id " + std::to_string(bench_run_id));
  txn.commit();
}

std::vector<BenchHistoryEntry> Store::bench_history() {
  Impl& self = Impl::of(impl_);
  Query select = self.query(
      "SELECT r.id, r.started_at, r.git_commit, r.ktune_version, r.status, d.name, d.fingerprint, d.backend, "
      "k.family, p.key, b.name, b.role, b.config, b.config_source, COALESCE(b.baseline_name, ''), b.outcome, "
      "b.message, b.repetitions_ns, b.median_ns, b.min_ns, b.max_ns, b.bytes, b.flops, b.error, b.id "
      "FROM bench_results b JOIN bench_runs r ON r.id = b.bench_run_id JOIN devices d ON d.id = r.device_id "
      "JOIN kernels k ON k.id = b.kernel_id JOIN problems p ON p.id = b.problem_id "
      "ORDER BY r.started_at, r.id, b.id");
  std::vector<BenchHistoryEntry> out;
  while (select->step()) {
    const Statement& row = *select.operator->();
    BenchHistoryEntry entry;
    entry.bench_run_id = row.int64(0);
    const std::string where = "bench result " + std::to_string(row.int64(24));
    entry.started_at = row.text(1);
    entry.git_commit = row.text(2);
    entry.ktune_version = row.text(3);
    entry.run_status = row.text(4);
    entry.device_name = row.text(5);
    entry.device_fingerprint = row.text(6);
    entry.backend = row.text(7);
    entry.family = row.text(8);
    entry.problem_key = row.text(9);
    entry.name = row.text(10);
    entry.role = row.text(11);
    entry.config = parse_json(row.text(12), self.path, where + " config");
    entry.config_source = row.text(13);
    entry.baseline_name = row.text(14);
    entry.outcome = row.text(15);
    entry.message = row.text(16);
    entry.repetitions_ns = samples_from_json(parse_json(row.text(17), self.path, where + " repetitions"),
                                             self.path, where + " repetitions");
    entry.median_ns = row.real(18);
    entry.min_ns = row.real(19);
    entry.max_ns = row.real(20);
    entry.bytes = row.real(21);
    entry.flops = row.real(22);
    entry.error = row.real(23);
    out.push_back(std::move(entry));
  }
  return out;
}

std::vector<TuningTrace> Store::tuning_traces(std::size_t max_points) {
  Impl& self = Impl::of(impl_);
  Query select = self.query(
      "SELECT d.name, d.fingerprint, d.backend, k.family, p.key, m.config, m.outcome, m.median_ns, m.id "
      "FROM measurements m JOIN devices d ON d.id = m.device_id JOIN kernels k ON k.id = m.kernel_id "
      "JOIN problems p ON p.id = m.problem_id ORDER BY d.id, k.family, p.id, m.id");
  std::vector<TuningTrace> out;
  std::vector<std::vector<TuningTrace::Point>> all;
  while (select->step()) {
    const Statement& row = *select.operator->();
    if (out.empty() || out.back().device_fingerprint != row.text(1) || out.back().family != row.text(3) ||
        out.back().problem_key != row.text(4)) {
      out.push_back(TuningTrace{row.text(0), row.text(1), row.text(2), row.text(3), row.text(4), 0, {}, {}});
      all.emplace_back();
    }
    TuningTrace::Point point;
    point.order = all.back().size() + 1;
    point.config = parse_json(row.text(5), self.path, "measurement " + std::to_string(row.int64(8)) + " config");
    point.outcome = row.text(6);
    point.median_ns = point.outcome == "ok" ? row.real(7) : std::numeric_limits<double>::quiet_NaN();
    all.back().push_back(std::move(point));
  }
  for (std::size_t t = 0; t < out.size(); ++t) {
    auto& points = all[t];
    out[t].total = points.size();
    // Every point that improved on the best so far is kept, so the convergence curve and the
    // best config are exact however the rest is thinned.
    std::vector<std::size_t> improvements;
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < points.size(); ++i) {
      ++out[t].outcome_counts[points[i].outcome];
      if (std::isfinite(points[i].median_ns) && points[i].median_ns < best) {
        best = points[i].median_ns;
        improvements.push_back(i);
      }
    }
    for (std::size_t i : spread(points.size(), std::max<std::size_t>(1, max_points), improvements))
      out[t].points.push_back(std::move(points[i]));
  }
  return out;
}

}  // namespace ktune
