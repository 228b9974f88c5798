"""A full disk. Simulated for the files ktune writes beside its database: a small preloaded library
makes write(2) fail with ENOSPC for paths under a chosen folder, as a full file system would. And
real: a small tmpfs mounted in a user and mount namespace of its own (`unshare`, no privileges
needed where the kernel allows such namespaces; skipped, saying why, where it does not). A
--record that cannot be written leaves the run complete ('finished', every result stored) and no
leftover temporary file, and says so with exit 1; an export that cannot be written leaves the
headers that were there before untouched; a database whose disk fills keeps every committed
result and a rerun resumes once there is room."""
import gzip
import json
import os
import shutil
import sqlite3
import subprocess

import harness

SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/uio.h>

/* Writes to paths containing KTUNE_TEST_FULL_DISK fail once KTUNE_TEST_FULL_AFTER bytes (default
   0) have been written to such paths by this process: the disk fills up mid-run. */
static long long written_so_far;

static int on_full_disk(int fd, size_t count) {
  const char* full = getenv("KTUNE_TEST_FULL_DISK");
  if (!full || !*full) return 0;
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t length = readlink(link, path, sizeof path - 1);
  if (length <= 0) return 0;
  path[length] = '\0';
  if (!strstr(path, full)) return 0;
  const char* after = getenv("KTUNE_TEST_FULL_AFTER");
  const long long limit = after ? atoll(after) : 0;
  if (written_so_far + (long long)count <= limit) {
    written_so_far += (long long)count;
    return 0;
  }
  return 1;
}

/* SQLite writes its pages with pwrite64. */
ssize_t pwrite64(int fd, const void* buffer, size_t count, off_t offset) {
  static ssize_t (*real_pwrite64)(int, const void*, size_t, off_t);
  if (!real_pwrite64) real_pwrite64 = (ssize_t(*)(int, const void*, size_t, off_t))dlsym(RTLD_NEXT, "pwrite64");
  if (on_full_disk(fd, count)) {
    errno = ENOSPC;
    return -1;
  }
  return real_pwrite64(fd, buffer, count, offset);
}

ssize_t pwrite(int fd, const void* buffer, size_t count, off_t offset) { return pwrite64(fd, buffer, count, offset); }

ssize_t write(int fd, const void* buffer, size_t count) {
  static ssize_t (*real_write)(int, const void*, size_t);
  if (!real_write) real_write = (ssize_t(*)(int, const void*, size_t))dlsym(RTLD_NEXT, "write");
  if (on_full_disk(fd, count)) {
    errno = ENOSPC;
    return -1;
  }
  return real_write(fd, buffer, count);
}

/* C++ streams write large buffers with writev. */
ssize_t writev(int fd, const struct iovec* iov, int count) {
  static ssize_t (*real_writev)(int, const struct iovec*, int);
  if (!real_writev) real_writev = (ssize_t(*)(int, const struct iovec*, int))dlsym(RTLD_NEXT, "writev");
  size_t total = 0;
  for (int i = 0; i < count; ++i) total += iov[i].iov_len;
  if (on_full_disk(fd, total)) {
    errno = ENOSPC;
    return -1;
  }
  return real_writev(fd, iov, count);
}
"""


class FullDisk(harness.KtuneTestCase):
    def setUp(self):
        super().setUp()
        source = os.path.join(self.dir, "full_disk.c")
        with open(source, "w") as f:
            f.write(SHIM)
        self.shim = os.path.join(self.dir, "libfull_disk.so")
        compiler = harness.ARGS.cxx
        subprocess.run([compiler, "-x", "c", "-shared", "-fPIC", "-O1", source, "-o", self.shim, "-ldl"], check=True)

    def full(self, folder):
        return {"LD_PRELOAD": self.shim, "KTUNE_TEST_FULL_DISK": folder}

    def test_a_record_that_cannot_be_written_keeps_the_run_complete(self):
        record = os.path.join(self.dir, "record")
        os.makedirs(record)
        result = self.ktune("tune", "-k", "rmsnorm", "-b", "cpu", "--shape", "rows=16,cols=256", "--budget", "4",
                            "--max-seconds-per-config", "0.01", "--db", self.db, "--no-export", "--record", record,
                            env_extra=self.full(record + "/"))
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("--record could not write", result.stderr)
        self.assertIn("No space left on device", result.stderr)
        self.assertEqual(os.listdir(record), [])  # no temporary left behind
        with sqlite3.connect(self.db) as c:
            self.assertEqual(c.execute("SELECT status FROM runs").fetchall(), [("finished",)])
            self.assertEqual(c.execute("SELECT count(*) FROM measurements").fetchone()[0], 4)

    def test_an_export_that_cannot_be_written_leaves_the_old_headers(self):
        tuned = os.path.join(self.dir, "tuned")
        self.ktune("tune", "-k", "rmsnorm", "-b", "cpu", "--shape", "rows=16,cols=256", "--budget", "3",
                   "--max-seconds-per-config", "0.01", "--db", self.db, "--export-dir", tuned, check=0)
        before = {}
        for root, _, files in os.walk(tuned):
            for name in files:
                with open(os.path.join(root, name), "rb") as f:
                    before[os.path.join(root, name)] = f.read()
        self.assertTrue(before)
        self.ktune("tune", "-k", "rmsnorm", "-b", "cpu", "--shape", "rows=16,cols=512", "--budget", "3",
                   "--max-seconds-per-config", "0.01", "--db", self.db, "--no-export", check=0)
        result = self.ktune("export", "--db", self.db, "--out", tuned, env_extra=self.full(tuned + "/"))
        self.assertNotEqual(result.returncode, 0, result.stderr)
        self.assertIn("No space left on device", result.stderr)
        after = {}
        for root, _, files in os.walk(tuned):
            for name in files:
                with open(os.path.join(root, name), "rb") as f:
                    after[os.path.join(root, name)] = f.read()
        self.assertEqual(after, before)

    def test_a_database_whose_disk_fills_mid_tune_keeps_every_committed_result(self):
        """The database's own disk fills up after a few results: the tune stops with a clear error
        (exit 2, the disk is full), the database is intact with every result committed before, and
        once there is room again a rerun resumes from them."""
        data = os.path.join(self.dir, "data")
        os.makedirs(data)
        db = os.path.join(data, "ktune.db")
        tune = ["tune", "-k", "rmsnorm", "-b", "cpu", "--shape", "rows=64,cols=1024", "--strategy", "random",
                "--budget", "40", "--max-seconds-per-config", "0.01", "--db", db, "--no-export", "--json"]
        full = dict(self.full(data + "/"), KTUNE_TEST_FULL_AFTER=str(400 * 1024))
        result = self.ktune(*tune, env_extra=full)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("disk is full", result.stderr)
        with sqlite3.connect(db) as c:
            self.assertEqual(c.execute("PRAGMA integrity_check").fetchone()[0], "ok")
            kept = c.execute("SELECT count(*) FROM measurements").fetchone()[0]
        self.assertGreater(kept, 0, "the disk filled before any result: make the limit larger")
        self.assertLess(kept, 40, "the disk never filled: make the limit smaller")
        again = harness.only_result(self, self.ktune_json(*tune))
        self.assertEqual(again["reused"], kept)
        self.assertEqual(again["evaluated"] + again["reused"], 40)


# Runs inside `unshare --user --map-root-user --mount` with $1 the mount point, $2 its size, $3 a
# folder outside it and $4 ktune: mounts the tmpfs (exit 77 when it cannot), then the test's
# script runs, which copies out what the test inspects (the tmpfs goes with the namespace).
TMPFS_SCRIPT = r"""
set -u
mnt=$1; size=$2; out=$3
mount -t tmpfs -o size=$size tmpfs "$mnt" || exit 77
"""


def read_text(path):
    with open(path) as f:
        return f.read()


class RealTmpfs(harness.KtuneTestCase):
    def in_tmpfs(self, size, script):
        """Runs `script` (sh) with a fresh tmpfs of `size` at $mnt and self.dir/out as $out."""
        unshare = shutil.which("unshare")
        if not unshare:
            self.skipTest("unshare (util-linux) is missing: cannot mount a real tmpfs")
        mnt = os.path.join(self.dir, "mnt")
        out = os.path.join(self.dir, "out")
        os.makedirs(mnt, exist_ok=True)
        os.makedirs(out, exist_ok=True)
        result = subprocess.run([unshare, "--user", "--map-root-user", "--mount", "sh", "-c", TMPFS_SCRIPT + script,
                                 "sh", mnt, size, out, harness.ARGS.ktune], cwd=self.dir, capture_output=True,
                                text=True, timeout=600)
        if result.returncode == 77 or "unshare failed" in result.stderr or "Operation not permitted" in result.stderr:
            self.skipTest("this kernel refuses an unprivileged mount namespace: " + result.stderr.strip()[:200])
        return result, out

    def test_a_database_on_a_full_tmpfs_keeps_every_committed_result_and_resumes(self):
        # 500 KB holds the schema and a few results before the tune's writes fill it.
        tune = ('"$ktune" tune -k gemm -b cpu --shape m=128,n=128,k=128 --strategy brute_force '
                '--max-seconds-per-config 0.002 --min-samples 3 --db "$mnt/t.db" --no-export --json')
        result, out = self.in_tmpfs("500k", f"""
ktune=$4
{tune} > "$out/first.json" 2> "$out/first.err"; echo $? > "$out/first.code"
cp "$mnt"/t.db* "$out/"
mount -o remount,size=64m "$mnt"
{tune} > "$out/second.json" 2> "$out/second.err"; echo $? > "$out/second.code"
""")
        self.assertEqual(result.returncode, 0, result.stderr)
        read = lambda name: read_text(os.path.join(out, name))
        self.assertEqual(read("first.code").strip(), "2", read("first.err"))
        self.assertIn("disk is full", read("first.err"))
        with sqlite3.connect(os.path.join(out, "t.db")) as c:
            self.assertEqual(c.execute("PRAGMA integrity_check").fetchone()[0], "ok")
            kept = c.execute("SELECT count(*) FROM measurements").fetchone()[0]
        self.assertGreater(kept, 0, "the tmpfs filled before any result: make it larger")
        self.assertEqual(read("second.code").strip(), "0", read("second.err"))
        again = harness.only_result(self, json.loads(read("second.json")))
        self.assertEqual(again["reused"], kept)  # nothing committed was lost
        self.assertEqual(again["outcomes"].get("ok", 0), again["evaluated"] + again["reused"])
        self.assertGreater(again["evaluated"], 0, "the first tune never filled the tmpfs: make it smaller")

    def test_a_record_on_a_full_tmpfs_keeps_the_run_complete(self):
        # One page: the database is elsewhere, the recording cannot be written.
        result, out = self.in_tmpfs("4k", f"""
"$4" tune -k rmsnorm -b cpu --shape rows=16,cols=256 --budget 4 --max-seconds-per-config 0.01 \
  --db "{self.db}" --no-export --record "$mnt/record" > "$out/tune.out" 2> "$out/tune.err"
echo $? > "$out/tune.code"
mkdir "$out/left" && cp -a "$mnt/record/." "$out/left/" 2>/dev/null || true
""")
        self.assertEqual(result.returncode, 0, result.stderr)
        read = lambda name: read_text(os.path.join(out, name))
        self.assertEqual(read("tune.code").strip(), "1", read("tune.err"))
        self.assertIn("--record could not write", read("tune.err"))
        self.assertIn("No space left on device", read("tune.err"))
        # No temporary left behind; a file that did fit before the disk filled is whole.
        for name in os.listdir(os.path.join(out, "left")):
            self.assertTrue(name.endswith(".json.gz") and ".partial" not in name, name)
            with gzip.open(os.path.join(out, "left", name)) as f:
                json.load(f)
        with sqlite3.connect(self.db) as c:
            self.assertEqual(c.execute("SELECT status FROM runs").fetchall(), [("finished",)])
            self.assertEqual(c.execute("SELECT count(*) FROM measurements").fetchone()[0], 4)


if __name__ == "__main__":
    harness.main()
