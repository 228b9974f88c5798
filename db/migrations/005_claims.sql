-- 005_claims: configs being measured, so that concurrent tuners of one problem on one device
-- model never measure the same config twice.
-- A row per config a tuner has claimed and not yet recorded: its process (db/process_owner.hpp)
-- and host, and when the claim lapses (Unix seconds) should the claimant die on another host.
-- Recording the measurement deletes the claim.
CREATE TABLE claims (
  device_id   INTEGER NOT NULL REFERENCES devices (id),
  kernel_id   INTEGER NOT NULL REFERENCES kernels (id),
  problem_id  INTEGER NOT NULL REFERENCES problems (id),
  config_key  TEXT NOT NULL,
  owner       TEXT NOT NULL,
  hostname    TEXT NOT NULL,
  expires_at  REAL NOT NULL,
  PRIMARY KEY (device_id, kernel_id, problem_id, config_key)
);
