-- 006_run_device_use: how busy a tune kept its devices, written when the run ends.
-- Over the run's wall time and per device (the device time divided by the number of devices that
-- measured): the share spent running the variants (kernel_share) and between their timed samples,
-- evicting caches and restoring read-write tensors (between_share), each 0..1; and the distinct
-- configs measured per minute, all devices together. Only configs measured in the run count, not
-- those reused from the database. NULL for runs that failed, were abandoned, or were recorded
-- before.
ALTER TABLE runs ADD COLUMN kernel_share REAL;
ALTER TABLE runs ADD COLUMN between_share REAL;
ALTER TABLE runs ADD COLUMN configs_per_minute REAL;
