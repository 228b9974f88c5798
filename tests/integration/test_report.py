"""`ktune report` end to end: real CPU tunes and benches into one database, the dashboard written
by ktune and rendered in headless Chromium. Change points are checked on a history whose truth is
known: real bench results copied into a series of bench runs, slowed by 20% from one commit on."""
import json
import os
import sqlite3

import browser
import harness
from test_report_page import parse_dom

SHAPE = "rows=64,cols=256"
FAST = ["--repetitions", "3", "--max-seconds-per-repetition", "0.02", "--min-samples", "3"]


class Report(harness.KtuneTestCase):
    def setUp(self):
        super().setUp()
        self.assertIsNotNone(browser.find_chromium(), "chromium is missing: apt-get install chromium")

    def tune_and_bench(self, benches=2):
        self.ktune("tune", "-k", "rmsnorm", "-b", "cpu", "--shape", SHAPE, "--budget", "8", "--no-export",
                   "--max-seconds-per-config", "0.02", "--db", self.db, check=0)
        for i in range(benches):
            self.ktune("bench", "-k", "rmsnorm", "-b", "cpu", "--shape", SHAPE, *FAST, "--db", self.db,
                       "--out", os.path.join(self.dir, f"bench-{i}.json"), check=0)

    def render_report(self):
        out = os.path.join(self.dir, "report")
        summary = self.ktune_json("report", "--db", self.db, "--out", out)
        for name in ("index.html", "report.js", "report.css", "chart.min.js", "data.js"):
            self.assertTrue(os.path.isfile(os.path.join(out, name)), name)
        result = browser.render(os.path.join(out, "index.html"))
        self.assertEqual(result.console, [], "the page logged to the console")
        document = parse_dom(result.dom)
        body = document.find_all("body")[0]
        self.assertEqual(body.attrs.get("data-rendered"), "true", result.dom[:2000])
        return summary, document, out

    def test_real_tune_and_benches_render(self):
        self.tune_and_bench()
        summary, document, _ = self.render_report()
        ids = {section.attrs.get("id") for section in document.find_all("section", "group")}
        self.assertIn("rmsnorm-cpu-1", ids)
        self.assertNotIn("copy-cpu-1", ids)  # the baseline shows beside rmsnorm, not as a group
        rmsnorm = document.by_id("rmsnorm-cpu-1")
        history = rmsnorm.find_all("canvas", "history-chart")
        self.assertEqual([c.attrs.get("data-benchmark") for c in history], [f"rmsnorm/cpu/{SHAPE}/fp32"])
        self.assertEqual(len(rmsnorm.find_all("canvas", "convergence-chart")), 1)
        parameters = {c.attrs.get("data-parameter") for c in rmsnorm.find_all("canvas", "parameter-chart")}
        self.assertEqual(parameters, {"threads", "rows_per_task", "vector_width", "unroll"})
        latest = rmsnorm.find_all("table", "latest")[0].text()
        self.assertIn("copy", latest)
        self.assertIn("database", latest)  # the tuned config came from the tune
        self.assertEqual(summary["series"], 1)  # rmsnorm at one shape; the copy baseline is no series
        self.assertEqual(summary["change_points"], 0)  # two runs of one commit: no level change
        self.assertIn("8 evaluations", rmsnorm.text())

    def test_change_point_of_a_known_regression_is_shown(self):
        self.tune_and_bench(benches=1)
        with sqlite3.connect(self.db) as db:
            run = db.execute("SELECT * FROM bench_runs").fetchone()
            columns = [c[1] for c in db.execute("PRAGMA table_info(bench_runs)")]
            results = db.execute("SELECT * FROM bench_results WHERE role = 'tuned'").fetchall()
            result_columns = [c[1] for c in db.execute("PRAGMA table_info(bench_results)")]
            base = dict(zip(result_columns, results[0]))
            # Twelve more runs of twelve commits; from the eighth on the kernel is 20% slower.
            for i in range(12):
                values = dict(zip(columns, run))
                values.update(id=None, git_commit=f"{i:02d}aaaaa{i:02d}bbbbb", started_at=f"2030-01-01T00:{i:02d}:00.000Z")
                cursor = db.execute(f"INSERT INTO bench_runs ({','.join(columns)}) VALUES ({','.join('?' * len(columns))})",
                                    [values[c] for c in columns])
                factor = (1.2 if i >= 7 else 1.0) * (1 + 0.005 * ((i * 7) % 5 - 2))
                row = dict(base, id=None, bench_run_id=cursor.lastrowid, median_ns=base["median_ns"] * factor,
                           min_ns=base["median_ns"] * factor * 0.99, max_ns=base["median_ns"] * factor * 1.01,
                           repetitions_ns=json.dumps([base["median_ns"] * factor] * 3))
                db.execute(f"INSERT INTO bench_results ({','.join(result_columns)}) VALUES "
                           f"({','.join('?' * len(result_columns))})", [row[c] for c in result_columns])
        summary, document, _ = self.render_report()
        self.assertGreaterEqual(summary["change_points"], 1)
        section = document.by_id(f"{base['name'].split('/')[0]}-cpu-1")
        tables = [t.text() for t in section.find_all("table", "change-points")]
        self.assertTrue(any("07aaaaa" in text for text in tables), tables)  # the commit of the step
        self.assertTrue(any("+2" in text for text in tables), tables)       # about +20%

    def test_missing_database_is_an_input_error(self):
        result = self.ktune("report", "--db", os.path.join(self.dir, "nope.db"), "--out", "r", check=2)
        self.assertIn("nope.db", result.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "nope.db")))

    def test_missing_chartjs_is_exit_3(self):
        self.tune_and_bench(benches=0)
        result = self.ktune("report", "--db", self.db, "--out", "r", env_extra={"KTUNE_CHARTJS": "/nonexistent.js"},
                            check=3)
        self.assertIn("libjs-chart.js", result.stderr)


if __name__ == "__main__":
    harness.main()
