-- 002_bench_history: what `ktune bench` measured, kept as history for `ktune report`.
--
-- One bench_runs row per bench of one backend's device; one bench_results row per benchmark of
-- that run, each written in its own transaction, so a killed bench keeps what it finished.

CREATE TABLE bench_runs (
  id            INTEGER PRIMARY KEY,
  started_at    TEXT NOT NULL,
  finished_at   TEXT,
  status        TEXT NOT NULL DEFAULT 'running',  -- running, finished, interrupted, failed
  ktune_version TEXT NOT NULL,
  git_commit    TEXT NOT NULL,
  argv          TEXT NOT NULL DEFAULT '[]',  -- JSON array of strings
  hostname      TEXT NOT NULL,
  device_id     INTEGER NOT NULL REFERENCES devices (id),
  suite         TEXT NOT NULL,               -- the suite's name, or "shape" for --shape
  repetitions   INTEGER NOT NULL,
  context       TEXT NOT NULL DEFAULT '{}'   -- JSON object: the Google Benchmark "context"
);

CREATE TABLE bench_results (
  id             INTEGER PRIMARY KEY,
  bench_run_id   INTEGER NOT NULL REFERENCES bench_runs (id),
  name           TEXT NOT NULL,     -- the benchmark's name in the Google Benchmark JSON
  role           TEXT NOT NULL,     -- tuned, default or baseline
  kernel_id      INTEGER NOT NULL REFERENCES kernels (id),
  problem_id     INTEGER NOT NULL REFERENCES problems (id),
  config         TEXT NOT NULL,     -- Config::to_json()
  config_source  TEXT NOT NULL,     -- where the config came from: database, header, default, ...
  baseline_name  TEXT,              -- the baseline benchmark this one is compared with, if any
  outcome        TEXT NOT NULL,     -- of the last repetition that failed, else ok
  message        TEXT NOT NULL DEFAULT '',
  repetitions_ns TEXT NOT NULL DEFAULT '[]',  -- JSON array: each repetition's median time
  median_ns      REAL,              -- median over the repetitions
  min_ns         REAL,
  max_ns         REAL,
  bytes          REAL NOT NULL,     -- moved per launch (inputs read once, outputs written once)
  flops          REAL NOT NULL,
  error          REAL,              -- worst relative error over the repetitions; -1 not verified
  measured_at    TEXT NOT NULL,
  UNIQUE (bench_run_id, name)
);

CREATE INDEX bench_results_by_name ON bench_results (name, bench_run_id);
CREATE INDEX bench_runs_by_device ON bench_runs (device_id, started_at);
