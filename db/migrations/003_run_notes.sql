-- 003_run_notes: notes on a run.
-- Notes on a run, as a JSON object: how its launch geometry was derived (a T1 spec's GridDiv or
-- GlobalSize rule) and the launch of its default config.
ALTER TABLE runs ADD COLUMN notes TEXT NOT NULL DEFAULT '{}';
