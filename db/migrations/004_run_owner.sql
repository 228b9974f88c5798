-- 004_run_owner: which process a run belongs to.
-- "<pid> <start time>" of the process that runs it (db/process_owner.hpp), so that a run left
-- 'running' by a process that died can be marked 'abandoned'. NULL for runs recorded before.
ALTER TABLE runs ADD COLUMN owner TEXT;
ALTER TABLE bench_runs ADD COLUMN owner TEXT;
