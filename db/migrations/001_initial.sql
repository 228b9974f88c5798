-- 001_initial: the first ktune results schema.
--
-- Applied by db/store.cpp inside one BEGIN IMMEDIATE transaction, which also records the row in
-- schema_migrations and sets PRAGMA user_version and PRAGMA application_id (the ktune marker).
-- JSON columns hold text written by nlohmann::json. Timestamps are ISO-8601 UTC
-- ("2024-05-01T12:34:56.789Z"). Real columns are NULL where the value was NaN.

CREATE TABLE schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  applied_at TEXT NOT NULL
);

-- One row per kind of device (hardware + driver), identified by the backend's fingerprint.
CREATE TABLE devices (
  id           INTEGER PRIMARY KEY,
  fingerprint  TEXT NOT NULL UNIQUE,
  backend      TEXT NOT NULL,
  name         TEXT NOT NULL,
  vendor       TEXT NOT NULL,
  architecture TEXT NOT NULL,
  limits       TEXT NOT NULL DEFAULT '{}',  -- JSON object: limit name -> integer
  properties   TEXT NOT NULL DEFAULT '{}',  -- JSON object
  first_seen   TEXT NOT NULL,
  last_seen    TEXT NOT NULL
);

-- One row per kernel source: a new source hash is a new kernel, so old results are not reused.
CREATE TABLE kernels (
  id          INTEGER PRIMARY KEY,
  family      TEXT NOT NULL,
  backend     TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  first_seen  TEXT NOT NULL,
  UNIQUE (family, backend, source_hash)
);

-- One row per problem; key is Problem::key() ("rows=256,cols=1024;fp32").
CREATE TABLE problems (
  id        INTEGER PRIMARY KEY,
  family    TEXT NOT NULL,
  key       TEXT NOT NULL,
  dims      TEXT NOT NULL,  -- JSON array of [name, value] pairs, in the family's order
  precision TEXT NOT NULL,
  UNIQUE (family, key)
);

CREATE TABLE runs (
  id            INTEGER PRIMARY KEY,
  started_at    TEXT NOT NULL,
  finished_at   TEXT,
  status        TEXT NOT NULL DEFAULT 'running',  -- running, finished, interrupted, failed, ...
  command       TEXT NOT NULL,
  ktune_version TEXT NOT NULL,
  git_commit    TEXT NOT NULL,
  argv          TEXT NOT NULL DEFAULT '[]',  -- JSON array of strings
  hostname      TEXT NOT NULL,
  strategy      TEXT NOT NULL,
  seed          INTEGER NOT NULL DEFAULT 0,  -- the uint64 seed's bits as a signed 64-bit integer
  device_id     INTEGER NOT NULL REFERENCES devices (id),
  kernel_id     INTEGER NOT NULL REFERENCES kernels (id),
  problem_id    INTEGER NOT NULL REFERENCES problems (id)
);

-- Every evaluated config with its outcome, kept whatever the outcome. Measured once: a second
-- result for the same (device, kernel, problem, config) is not stored.
CREATE TABLE measurements (
  id           INTEGER PRIMARY KEY,
  run_id       INTEGER NOT NULL REFERENCES runs (id),
  device_id    INTEGER NOT NULL REFERENCES devices (id),
  kernel_id    INTEGER NOT NULL REFERENCES kernels (id),
  problem_id   INTEGER NOT NULL REFERENCES problems (id),
  config_key   TEXT NOT NULL,     -- Config::key()
  config       TEXT NOT NULL,     -- Config::to_json()
  outcome      TEXT NOT NULL,     -- ok, wrong_result, compile_error, ...
  message      TEXT NOT NULL DEFAULT '',
  median_ns    REAL,
  min_ns       REAL,
  max_ns       REAL,
  mean_ns      REAL,
  stddev_ns    REAL,
  rel_stddev   REAL,
  sample_count INTEGER NOT NULL DEFAULT 0,
  samples      TEXT NOT NULL DEFAULT '[]',  -- JSON array of every timed sample (ns), in order
  error        REAL,                        -- relative L2 error; -1 when not verified
  compile_ms   REAL,
  environment  TEXT NOT NULL DEFAULT '{}',  -- JSON object
  measured_at  TEXT NOT NULL,
  UNIQUE (device_id, kernel_id, problem_id, config_key)
);

-- load_measurements uses the UNIQUE index above. best_measurements and measured_families go
-- from kernels (family) to their ok measurements ranked by median.
CREATE INDEX measurements_by_kernel
  ON measurements (kernel_id, outcome, device_id, problem_id, median_ns);
CREATE INDEX measurements_by_run ON measurements (run_id);
CREATE INDEX runs_by_target ON runs (device_id, kernel_id, problem_id);
