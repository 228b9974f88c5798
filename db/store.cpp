// The results database's data: devices, kernels, problems, runs and measurements. Opening,
// classifying and migrating a database is in store_open.cpp; bench history in
// bench_history_store.cpp; merging databases in store_merge.cpp. See store.hpp for the contract
// and db/migrations/*.sql for the schema.
#include "db/store.hpp"

#include "db/process_owner.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "db/store_impl.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace fs = std::filesystem;
using namespace store_detail;

namespace {

// Columns shared by load_measurements and best_measurements, in this order, from alias m.
constexpr const char* kMeasurementColumns =
    "m.id, m.run_id, m.config, m.outcome, m.message, m.median_ns, m.min_ns, m.max_ns, m.mean_ns, "
    "m.stddev_ns, m.rel_stddev, m.sample_count, m.samples, m.error, m.compile_ms, m.environment, "
    "m.measured_at, m.config_key";
constexpr int kMeasurementColumnCount = 18;

SampleStatistics read_stats(const Statement& row, int first) {
  SampleStatistics stats;
  stats.median_ns = row.real(first);
  stats.min_ns = row.real(first + 1);
  stats.max_ns = row.real(first + 2);
  stats.mean_ns = row.real(first + 3);
  stats.stddev_ns = row.real(first + 4);
  stats.rel_stddev = row.real(first + 5);
  stats.count = static_cast<std::size_t>(std::max<std::int64_t>(0, row.int64(first + 6)));
  return stats;
}

StoredMeasurement read_measurement(const Statement& row, const fs::path& path) {
  StoredMeasurement stored;
  stored.id = row.int64(0);
  stored.run_id = row.int64(1);
  const std::string where = "measurement " + std::to_string(stored.id);
  stored.config = Config::from_json(parse_json(row.text(2), path, where + " config"),
                                    "database " + path.string() + " " + where + " config");
  const std::string outcome_text = row.text(3);
  const auto outcome = parse_outcome(outcome_text);
  if (!outcome)
    throw InputError("database " + quoted(path) + ": " + where + " has unknown outcome '" +
                     outcome_text + "'.");
  EvaluationResult& result = stored.result;
  result.outcome = *outcome;
  result.message = row.text(4);
  result.stats = read_stats(row, 5);
  result.samples_ns = samples_from_json(parse_json(row.text(12), path, where + " samples"), path,
                                        where + " samples");
  result.error = row.real(13);
  result.compile_ms = row.real(14);
  result.environment = parse_json(row.text(15), path, where + " environment");
  stored.measured_at = row.text(16);
  return stored;
}

}  // namespace

std::int64_t Store::upsert_device(const DeviceInfo& device) {
  Impl& self = Impl::of(impl_);
  if (device.fingerprint.empty())
    throw std::invalid_argument("Store::upsert_device: the device has no fingerprint");
  nlohmann::json limits = nlohmann::json::object();
  for (const auto& [name, value] : device.limits) limits[name] = value;
  const std::string now = now_iso8601();
  Transaction txn = self.transaction();
  {
    Query insert = self.query(
        "INSERT INTO devices (fingerprint, backend, name, vendor, architecture, limits, properties, "
        "first_seen, last_seen) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8) "
        "ON CONFLICT (fingerprint) DO UPDATE SET backend = excluded.backend, name = excluded.name, "
        "vendor = excluded.vendor, architecture = excluded.architecture, limits = excluded.limits, "
        "properties = excluded.properties, last_seen = excluded.last_seen");
    insert->bind_text(1, device.fingerprint)
        .bind_text(2, device.backend)
        .bind_text(3, device.name)
        .bind_text(4, device.vendor)
        .bind_text(5, device.architecture)
        .bind_text(6, dump(limits))
        .bind_text(7, dump(device.properties))
        .bind_text(8, now);
    insert->run();
  }
  std::int64_t id = 0;
  {
    Query select = self.query("SELECT id FROM devices WHERE fingerprint = ?1");
    select->bind_text(1, device.fingerprint);
    if (!select->step()) throw std::logic_error("Store::upsert_device: row vanished");
    id = select->int64(0);
  }
  txn.commit();
  return id;
}

std::int64_t Store::upsert_kernel(const std::string& family, const std::string& backend,
                                  const std::string& source_hash) {
  Impl& self = Impl::of(impl_);
  Transaction txn = self.transaction();
  {
    Query insert = self.query(
        "INSERT INTO kernels (family, backend, source_hash, first_seen) VALUES (?1, ?2, ?3, ?4) "
        "ON CONFLICT (family, backend, source_hash) DO NOTHING");
    insert->bind_text(1, family).bind_text(2, backend).bind_text(3, source_hash).bind_text(4, now_iso8601());
    insert->run();
  }
  std::int64_t id = 0;
  {
    Query select = self.query(
        "SELECT id FROM kernels WHERE family = ?1 AND backend = ?2 AND source_hash = ?3");
    select->bind_text(1, family).bind_text(2, backend).bind_text(3, source_hash);
    if (!select->step()) throw std::logic_error("Store::upsert_kernel: row vanished");
    id = select->int64(0);
  }
  txn.commit();
  return id;
}

std::int64_t Store::upsert_problem(const Problem& problem) {
  Impl& self = Impl::of(impl_);
  nlohmann::json dims = nlohmann::json::array();
  for (const auto& [name, value] : problem.dims) dims.push_back(nlohmann::json::array({name, value}));
  const std::string key = problem.key();
  Transaction txn = self.transaction();
  {
    Query insert = self.query(
        "INSERT INTO problems (family, key, dims, precision) VALUES (?1, ?2, ?3, ?4) "
        "ON CONFLICT (family, key) DO NOTHING");
    insert->bind_text(1, problem.family)
        .bind_text(2, key)
        .bind_text(3, dump(dims))
        .bind_text(4, to_string(problem.precision));
    insert->run();
  }
  std::int64_t id = 0;
  {
    Query select = self.query("SELECT id FROM problems WHERE family = ?1 AND key = ?2");
    select->bind_text(1, problem.family).bind_text(2, key);
    if (!select->step()) throw std::logic_error("Store::upsert_problem: row vanished");
    id = select->int64(0);
  }
  txn.commit();
  return id;
}

bool Store::claim(std::int64_t device_id, std::int64_t kernel_id, std::int64_t problem_id,
                  const std::string& config_key, const std::string& hostname, double lease_s, bool remeasure) {
  Impl& self = Impl::of(impl_);
  const std::string me = this_process_owner();
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  Transaction txn = self.transaction();
  {
    Query measured = self.query(
        "SELECT 1 FROM measurements WHERE device_id = ?1 AND kernel_id = ?2 AND problem_id = ?3 AND config_key = ?4");
    measured->bind_int(1, device_id).bind_int(2, kernel_id).bind_int(3, problem_id).bind_text(4, config_key);
    if (measured->step() && !remeasure) return false;
  }
  {
    Query held = self.query(
        "SELECT owner, hostname, expires_at FROM claims WHERE device_id = ?1 AND kernel_id = ?2 AND problem_id = ?3 "
        "AND config_key = ?4");
    held->bind_int(1, device_id).bind_int(2, kernel_id).bind_int(3, problem_id).bind_text(4, config_key);
    if (held->step()) {
      const std::string owner = held->text(0);
      // A claimant on this host is asked whether it lives; one elsewhere is trusted until its lease lapses.
      const bool live = owner != me && (held->text(1) == hostname ? process_owner_alive(owner) : held->real(2) > now);
      if (live) return false;
    }
  }
  {
    Query insert = self.query(
        "INSERT OR REPLACE INTO claims (device_id, kernel_id, problem_id, config_key, owner, hostname, expires_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    insert->bind_int(1, device_id).bind_int(2, kernel_id).bind_int(3, problem_id).bind_text(4, config_key)
        .bind_text(5, me).bind_text(6, hostname).bind_real(7, now + lease_s);
    insert->run();
  }
  txn.commit();
  return true;
}

void Store::release_claims() {
  Impl& self = Impl::of(impl_);
  Transaction txn = self.transaction();
  Query remove = self.query("DELETE FROM claims WHERE owner = ?1");
  remove->bind_text(1, this_process_owner());
  remove->run();
  txn.commit();
}

void Store::set_stop_check(bool (*stop)()) { store_detail::g_lock_wait_stop = stop; }

std::size_t Store::abandon_dead_runs(const std::string& hostname) {
  Impl& self = Impl::of(impl_);
  std::size_t abandoned = 0;
  for (const char* table : {"runs", "bench_runs"}) {
    std::vector<std::int64_t> dead;
    {
      Query select = self.query(std::string("SELECT id, owner FROM ") + table +
                                " WHERE status = 'running' AND hostname = ?1 AND owner IS NOT NULL");
      select->bind_text(1, hostname);
      while (select->step())
        if (!process_owner_alive(select->text(1))) dead.push_back(select->int64(0));
    }
    for (const std::int64_t id : dead) {
      Transaction txn = self.transaction();
      Query update = self.query(std::string("UPDATE ") + table +
                                " SET status = 'abandoned', finished_at = ?2 WHERE id = ?1 AND status = 'running'");
      update->bind_int(1, id).bind_text(2, now_iso8601());
      update->run();
      abandoned += static_cast<std::size_t>(sqlite3_changes(self.db));
      txn.commit();
    }
  }
  if (abandoned > 0)
    std::fprintf(stderr, "ktune: %zu run%s of this host left 'running' by a process that has ended: marked 'abandoned'\n",
                 abandoned, abandoned == 1 ? "" : "s");
  return abandoned;
}

std::int64_t Store::begin_run(const RunInfo& run, std::int64_t device_id, std::int64_t kernel_id,
                              std::int64_t problem_id) {
  Impl& self = Impl::of(impl_);
  Transaction txn = self.transaction();
  {
    Query insert = self.query(
        "INSERT INTO runs (started_at, status, command, ktune_version, git_commit, argv, hostname, "
        "strategy, seed, device_id, kernel_id, problem_id, owner) "
        "VALUES (?1, 'running', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
    insert->bind_text(1, now_iso8601())
        .bind_text(2, run.command)
        .bind_text(3, run.ktune_version)
        .bind_text(4, run.git_commit)
        .bind_text(5, dump(nlohmann::json(run.argv)))
        .bind_text(6, run.hostname)
        .bind_text(7, run.strategy)
        .bind_int(8, static_cast<std::int64_t>(run.seed))
        .bind_int(9, device_id)
        .bind_int(10, kernel_id)
        .bind_int(11, problem_id)
        .bind_text(12, this_process_owner());
    insert->run();
  }
  const std::int64_t id = sqlite3_last_insert_rowid(self.db);
  txn.commit();
  return id;
}

void Store::finish_run(std::int64_t run_id, const std::string& status, const std::optional<DeviceUse>& device_use) {
  Impl& self = Impl::of(impl_);
  Transaction txn = self.transaction();
  {
    Query update = self.query(
        "UPDATE runs SET finished_at = ?1, status = ?2, kernel_share = ?4, between_share = ?5, "
        "configs_per_minute = ?6 WHERE id = ?3");
    update->bind_text(1, now_iso8601()).bind_text(2, status).bind_int(3, run_id);
    if (device_use)
      update->bind_real(4, device_use->kernel_share)
          .bind_real(5, device_use->between_share)
          .bind_real(6, device_use->configs_per_minute);
    update->run();
  }
  if (sqlite3_changes(self.db) == 0)
    throw std::invalid_argument("Store::finish_run: no run with id " + std::to_string(run_id));
  txn.commit();
}

void Store::set_run_notes(std::int64_t run_id, const nlohmann::json& notes) {
  Impl& self = Impl::of(impl_);
  Query update = self.query("UPDATE runs SET notes = ?1 WHERE id = ?2");
  update->bind_text(1, notes.dump()).bind_int(2, run_id);
  update->run();
}

std::map<std::string, StoredMeasurement> Store::load_measurements(std::int64_t device_id,
                                                                  std::int64_t kernel_id,
                                                                  std::int64_t problem_id) {
  Impl& self = Impl::of(impl_);
  std::map<std::string, StoredMeasurement> out;
  Query select = self.query(std::string("SELECT ") + kMeasurementColumns +
                            " FROM measurements m WHERE m.device_id = ?1 AND m.kernel_id = ?2 "
                            "AND m.problem_id = ?3 ORDER BY m.id");
  select->bind_int(1, device_id).bind_int(2, kernel_id).bind_int(3, problem_id);
  while (select->step()) {
    StoredMeasurement stored = read_measurement(*select.operator->(), self.path);
    out.emplace(select->text(kMeasurementColumnCount - 1), std::move(stored));
  }
  return out;
}

std::optional<StoredMeasurement> Store::find_measurement(std::int64_t device_id, std::int64_t kernel_id,
                                                         std::int64_t problem_id, const std::string& config_key) {
  Impl& self = Impl::of(impl_);
  Query select = self.query(std::string("SELECT ") + kMeasurementColumns +
                            " FROM measurements m WHERE m.device_id = ?1 AND m.kernel_id = ?2 "
                            "AND m.problem_id = ?3 AND m.config_key = ?4");
  select->bind_int(1, device_id).bind_int(2, kernel_id).bind_int(3, problem_id).bind_text(4, config_key);
  if (!select->step()) return std::nullopt;
  return read_measurement(*select.operator->(), self.path);
}

std::int64_t Store::record_measurement(std::int64_t run_id, std::int64_t device_id,
                                       std::int64_t kernel_id, std::int64_t problem_id,
                                       const Config& config, const EvaluationResult& result,
                                       bool replace_existing) {
  Impl& self = Impl::of(impl_);
  const std::string key = config.key();
  // Stats as given when they describe the samples; recomputed when the caller did not fill them.
  const SampleStatistics stats = result.stats.count == result.samples_ns.size()
                                     ? result.stats
                                     : summarize(result.samples_ns);
  Transaction txn = self.transaction();
  {
    Query existing = self.query(
        "SELECT id FROM measurements WHERE device_id = ?1 AND kernel_id = ?2 AND problem_id = ?3 "
        "AND config_key = ?4");
    existing->bind_int(1, device_id).bind_int(2, kernel_id).bind_int(3, problem_id).bind_text(4, key);
    if (existing->step()) {
      const std::int64_t id = existing->int64(0);
      if (!replace_existing) return id;  // measured once, never twice; nothing written
      Query remove = self.query("DELETE FROM measurements WHERE id = ?1");
      remove->bind_int(1, id);
      remove->step();  // the new result takes its place in the same transaction
    }
  }
  {
    Query insert = self.query(
        "INSERT INTO measurements (run_id, device_id, kernel_id, problem_id, config_key, config, "
        "outcome, message, median_ns, min_ns, max_ns, mean_ns, stddev_ns, rel_stddev, "
        "sample_count, samples, error, compile_ms, environment, measured_at) VALUES "
        "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)");
    insert->bind_int(1, run_id)
        .bind_int(2, device_id)
        .bind_int(3, kernel_id)
        .bind_int(4, problem_id)
        .bind_text(5, key)
        .bind_text(6, dump(config.to_json()))
        .bind_text(7, to_string(result.outcome))
        .bind_text(8, result.message)
        .bind_real(9, stats.median_ns)
        .bind_real(10, stats.min_ns)
        .bind_real(11, stats.max_ns)
        .bind_real(12, stats.mean_ns)
        .bind_real(13, stats.stddev_ns)
        .bind_real(14, stats.rel_stddev)
        .bind_int(15, static_cast<std::int64_t>(stats.count))
        .bind_text(16, dump(samples_to_json(result.samples_ns)))
        .bind_real(17, result.error)
        .bind_real(18, result.compile_ms)
        .bind_text(19, dump(result.environment))
        .bind_text(20, now_iso8601());
    insert->run();
  }
  const std::int64_t id = sqlite3_last_insert_rowid(self.db);
  {  // measured: the claim, whoever held it, has served
    Query release = self.query(
        "DELETE FROM claims WHERE device_id = ?1 AND kernel_id = ?2 AND problem_id = ?3 AND config_key = ?4");
    release->bind_int(1, device_id).bind_int(2, kernel_id).bind_int(3, problem_id).bind_text(4, key);
    release->run();
  }
  txn.commit();
  return id;
}

std::vector<BestMeasurement> Store::best_measurements(const std::string& family) {
  Impl& self = Impl::of(impl_);
  // Rank the timed ok measurements of each (device, kernel, problem) by median (ties: oldest).
  Query select = self.query(
      std::string("WITH ranked AS (SELECT m.*, ROW_NUMBER() OVER (PARTITION BY m.device_id, "
                  "m.kernel_id, m.problem_id ORDER BY m.median_ns, m.id) AS place "
                  "FROM measurements m JOIN kernels k ON k.id = m.kernel_id "
                  "WHERE m.outcome = 'ok' AND m.sample_count > 0 AND m.median_ns IS NOT NULL "
                  "AND (?1 = '' OR k.family = ?1)) "
                  "SELECT ") +
      kMeasurementColumns +
      ", d.backend, d.name, d.vendor, d.architecture, d.fingerprint, d.limits, d.properties, "
      "k.family, k.backend, k.source_hash, p.family, p.dims, p.precision, "
      "r.ktune_version, r.git_commit "
      "FROM ranked m JOIN devices d ON d.id = m.device_id JOIN kernels k ON k.id = m.kernel_id "
      "JOIN problems p ON p.id = m.problem_id JOIN runs r ON r.id = m.run_id "
      "WHERE m.place = 1");
  select->bind_text(1, family);
  std::vector<BestMeasurement> out;
  const fs::path& path = self.path;
  while (select->step()) {
    const Statement& row = *select.operator->();
    const StoredMeasurement stored = read_measurement(row, path);
    const std::string where = "measurement " + std::to_string(stored.id);
    BestMeasurement best;
    best.measurement_id = stored.id;
    best.config = stored.config;
    best.stats = stored.result.stats;
    best.error = stored.result.error;
    best.measured_at = stored.measured_at;
    int c = kMeasurementColumnCount;
    best.device.backend = row.text(c++);
    best.device.name = row.text(c++);
    best.device.vendor = row.text(c++);
    best.device.architecture = row.text(c++);
    best.device.fingerprint = row.text(c++);
    const nlohmann::json limits = parse_json(row.text(c++), path, where + " device limits");
    try {
      for (const auto& [name, value] : limits.items()) {
        if (!value.is_number_integer())
          throw InputError("database " + quoted(path) + ": " + where + " device limit " + name + " = " + value.dump() +
                           " is not an integer; the row was edited or is corrupt");
        best.device.limits[name] = value.get<std::int64_t>();
      }
    } catch (const nlohmann::json::exception& error) {
      throw InputError("database " + quoted(path) + ": " + where + " device limits: " + error.what());
    }
    best.device.properties = parse_json(row.text(c++), path, where + " device properties");
    best.family = row.text(c++);
    best.backend = row.text(c++);
    best.source_hash = row.text(c++);
    best.problem.family = row.text(c++);
    const nlohmann::json dims = parse_json(row.text(c++), path, where + " problem dims");
    try {
      for (const auto& dim : dims) {
        // get<int64_t> of 1e300 is undefined (it came out as INT64_MIN): integers only.
        const auto& extent = dim.at(1);
        if (!extent.is_number_integer() ||
            (extent.is_number_unsigned() && extent.get<std::uint64_t>() > std::numeric_limits<std::int64_t>::max()))
          throw InputError("database " + quoted(path) + ": " + where + " problem dims: " + dim.dump() +
                           " is not an integer extent; the row was edited or is corrupt");
        best.problem.dims.emplace_back(dim.at(0).get<std::string>(), extent.get<std::int64_t>());
      }
    } catch (const nlohmann::json::exception& error) {
      throw InputError("database " + quoted(path) + ": " + where + " problem dims: " + error.what());
    }
    const std::string precision = row.text(c++);
    const auto parsed = parse_precision(precision);
    if (!parsed)
      throw InputError("database " + quoted(path) + ": " + where + " has unknown precision '" +
                       precision + "'.");
    best.problem.precision = *parsed;
    best.ktune_version = row.text(c++);
    best.git_commit = row.text(c++);
    out.push_back(std::move(best));
  }
  // Ordered by backend, device, problem (dims compared numerically), then kernel source.
  std::sort(out.begin(), out.end(), [](const BestMeasurement& a, const BestMeasurement& b) {
    return std::tie(a.backend, a.device.name, a.device.fingerprint, a.family, a.problem.dims,
                    a.problem.precision, a.source_hash, a.measurement_id) <
           std::tie(b.backend, b.device.name, b.device.fingerprint, b.family, b.problem.dims,
                    b.problem.precision, b.source_hash, b.measurement_id);
  });
  return out;
}

std::vector<std::string> Store::measured_families() {
  Impl& self = Impl::of(impl_);
  Query select = self.query(
      "SELECT k.family FROM kernels k WHERE EXISTS (SELECT 1 FROM measurements m WHERE "
      "m.kernel_id = k.id) GROUP BY k.family ORDER BY k.family");
  std::vector<std::string> out;
  while (select->step()) out.push_back(select->text(0));
  return out;
}

}  // namespace ktune
