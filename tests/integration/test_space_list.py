#!/usr/bin/env python3
"""`ktune space --list`: every valid config of a constrained space, in each format, filtered by
--where; its counts agree with `ktune space --json`, and bad --where, --format, --limit and --db
exit 2 with a message naming the option.

The space is softmax on the CPU at a small shape: five parameters, one of them a string (exp),
and constraints that read a problem dim (rows) and a device limit (hardware_threads)."""
import csv
import io
import json
import math
import os
import subprocess

import harness

SPACE = ["space", "-k", "softmax", "-b", "cpu", "--shape", "rows=64,cols=256"]
PARAMETERS = ["threads", "rows_per_task", "vector_width", "unroll", "exp"]
# Numbers and strings that cannot be mistaken for each other when a table is read back.
FILTER = "vector_width * unroll >= 16 and exp == 'poly'"


def satisfies_filter(config):
    return config["vector_width"] * config["unroll"] >= 16 and config["exp"] == "poly"


def satisfies_constraints(config, rows=64):
    """softmax.cpu.json's constraints but threads_exist (whose limit is the machine's)."""
    tasks = math.ceil(rows / config["rows_per_task"])
    return (config["threads"] == 1 or tasks >= config["threads"]) and config["vector_width"] * config["unroll"] <= 32


def as_text(config):
    return [str(config[name]) for name in PARAMETERS]


class SpaceList(harness.KtuneTestCase):
    def summary(self):
        return self.ktune_json(*SPACE)

    def listing(self, *extra):
        return json.loads(self.ktune(*SPACE, "--list", "--format", "json", *extra, check=0).stdout)

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_json_lists_every_valid_config_once(self):
        summary = self.summary()
        listing = self.listing()
        self.assertEqual(listing["kernel"], "softmax")
        self.assertEqual(listing["backend"], "cpu")
        self.assertEqual(listing["shape"], "rows=64,cols=256")
        self.assertEqual(listing["precision"], "fp32")
        self.assertEqual(listing["parameters"], PARAMETERS)
        self.assertEqual(listing["parameters"], summary["parameters"])
        self.assertIsNone(listing["where"])
        self.assertEqual(listing["count"], summary["valid"])
        self.assertEqual(listing["valid"], summary["valid"])
        self.assertEqual(listing["total"], summary["total"])
        self.assertEqual(listing["listed"], summary["valid"])
        configs = listing["configs"]
        self.assertEqual(len(configs), summary["valid"])
        self.assertLess(len(configs), summary["total"])  # the constraints prune
        for config in configs:
            self.assertEqual(list(config), PARAMETERS)  # the space's order, not sorted keys
            self.assertTrue(satisfies_constraints(config), config)
        self.assertEqual(len({json.dumps(c) for c in configs}), len(configs))
        # --json alone with --list is the same document.
        plain = json.loads(self.ktune(*SPACE, "--list", "--json", check=0).stdout)
        self.assertEqual(plain, listing)

    def test_csv_parses_to_the_same_configs(self):
        configs = self.listing()["configs"]
        # Read as bytes: text mode would turn the line ends into "\n" before they are checked.
        result = subprocess.run([harness.ARGS.ktune, *SPACE, "--list", "--format", "csv"], cwd=self.dir,
                                capture_output=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        text = result.stdout.decode()
        self.assertEqual(text.count("\r\n"), 1 + len(configs))  # RFC 4180 line ends, one a record
        self.assertNotIn("\n", text.replace("\r\n", ""))
        rows = list(csv.reader(io.StringIO(text, newline="")))
        self.assertEqual(rows[0], PARAMETERS)
        self.assertEqual(rows[1:], [as_text(c) for c in configs])
        self.assertEqual(result.stderr, b"")  # nothing was cut short

    def test_table_is_aligned_and_says_how_many(self):
        configs = self.listing()["configs"]
        lines = self.ktune(*SPACE, "--list", check=0).stdout.splitlines()
        self.assertEqual(lines[0].split(), PARAMETERS)
        rows = lines[1:-1]
        self.assertEqual([r.split() for r in rows], [as_text(c) for c in configs])
        # Numeric columns end where their header ends (right-aligned).
        header_end = lines[0].index("vector_width") + len("vector_width")
        for row in rows:
            self.assertNotEqual(row[header_end - 1], " ", row)
        self.assertIn(f"{len(configs)} of {len(configs)} valid configs listed", lines[-1])

    def test_markdown_has_a_header_separator(self):
        configs = self.listing()["configs"]
        lines = self.ktune(*SPACE, "--list", "--format", "md", check=0).stdout.splitlines()
        self.assertEqual(lines[0], "| " + " | ".join(PARAMETERS) + " |")
        self.assertRegex(lines[1], r"^\|( :?-{3,}:? \|){5}$")
        self.assertEqual(len(lines), 2 + len(configs))
        for line, config in zip(lines[2:], configs):
            self.assertEqual([cell.strip() for cell in line.strip("|").split("|")], as_text(config))

    def test_where_keeps_only_the_configs_it_is_true_for(self):
        every = self.listing()["configs"]
        expected = [c for c in every if satisfies_filter(c)]
        self.assertTrue(0 < len(expected) < len(every))
        filtered = self.listing("--where", FILTER)
        self.assertEqual(filtered["where"], FILTER)
        self.assertEqual(filtered["count"], len(expected))
        self.assertEqual(filtered["valid"], len(every))
        self.assertEqual(filtered["configs"], expected)
        # The same filter in the table: every row satisfies it, and the last line says so.
        lines = self.ktune(*SPACE, "--list", "--where", FILTER, check=0).stdout.splitlines()
        rows = [dict(zip(PARAMETERS, line.split())) for line in lines[1:-1]]
        self.assertEqual(len(rows), len(expected))
        for row in rows:
            self.assertGreaterEqual(int(row["vector_width"]) * int(row["unroll"]), 16)
            self.assertEqual(row["exp"], "poly")
        self.assertIn(f"{len(expected)} of {len(expected)} configs matching --where", lines[-1])
        self.assertIn(f"({len(every)} valid", lines[-1])

    def test_where_reads_problem_dims(self):
        """rows is the problem's dim, not a parameter: the filter sees what the constraints see."""
        every = self.listing()["configs"]
        filtered = self.listing("--where", "rows_per_task * 8 <= rows")
        self.assertEqual(filtered["configs"], [c for c in every if c["rows_per_task"] * 8 <= 64])
        self.assertLess(filtered["count"], len(every))

    def test_limit_caps_the_rows_and_says_of_how_many(self):
        valid = self.summary()["valid"]
        listing = self.listing("--limit", "3")
        self.assertEqual((listing["count"], listing["listed"], len(listing["configs"])), (valid, 3, 3))
        lines = self.ktune(*SPACE, "--list", "--limit", "2", check=0).stdout.splitlines()
        self.assertEqual(len(lines), 1 + 2 + 1)
        self.assertIn(f"2 of {valid} valid configs listed", lines[-1])
        self.assertIn("--limit 0", lines[-1])
        result = self.ktune(*SPACE, "--list", "--format", "csv", "--limit", "4", check=0)
        self.assertEqual(len(list(csv.reader(io.StringIO(result.stdout, newline="")))), 1 + 4)
        self.assertIn(f"4 of {valid}", result.stderr)
        lines = self.ktune(*SPACE, "--list", "--format", "md", "--limit", "1", check=0).stdout.splitlines()
        self.assertEqual(len(lines[:lines.index("")]), 2 + 1)
        self.assertIn(f"1 of {valid}", lines[-1])

    def test_table_lists_a_page_of_a_large_t1_space_by_default(self):
        spec = os.path.join(harness.ARGS.source_dir, "tests", "data", "t1", "matmul", "matmul_T1.json")
        valid = self.ktune_json("space", "--t1", spec)["valid"]
        self.assertGreater(valid, 1000)
        lines = self.ktune("space", "--t1", spec, "--list", check=0).stdout.splitlines()
        self.assertEqual(len(lines), 1 + 1000 + 1)
        self.assertIn(f"1000 of {valid} valid configs listed", lines[-1])
        listing = json.loads(self.ktune("space", "--t1", spec, "--list", "--json", check=0).stdout)
        self.assertEqual((listing["count"], len(listing["configs"])), (valid, valid))
        self.assertIsNone(listing["shape"])
        self.assertEqual(listing["t1"], spec)
        for config in listing["configs"]:
            self.assertTrue(32 <= config["block_size_x"] * config["block_size_y"] <= 1024, config)

    def test_text_values_are_quoted_and_escaped(self):
        labels = ["a,b", 'say "hi"', "p|q", "plain"]
        spec = self.write("labels_T1.json", json.dumps({"ConfigurationSpace": {"TuningParameters": [
            {"Name": "label", "Type": "string", "Values": labels},
            {"Name": "n", "Type": "int", "Values": "[1, 2]"}],
            "Conditions": [{"Expression": "n == 1 or label == 'plain'", "Parameters": ["n", "label"]}]}}))
        expected = [[label, "1"] for label in labels] + [["plain", "2"]]
        result = self.ktune("space", "--t1", spec, "--list", "--format", "csv", check=0)
        rows = list(csv.reader(io.StringIO(result.stdout, newline="")))
        self.assertEqual(rows[0], ["label", "n"])
        self.assertEqual(sorted(rows[1:]), sorted(expected))
        markdown = self.ktune("space", "--t1", spec, "--list", "--format", "md", check=0).stdout
        self.assertIn("| p\\|q |", markdown)
        listing = json.loads(self.ktune("space", "--t1", spec, "--list", "--json", check=0).stdout)
        self.assertEqual(sorted([c["label"], str(c["n"])] for c in listing["configs"]), sorted(expected))

    def test_bad_where_exits_2_naming_the_expression(self):
        cases = [
            ("threads >=", "expected"),                        # malformed
            ("thread > 2", "unknown variable 'thread'"),        # a misspelt parameter
            ("threads // (unroll - 1) > 0", "by zero"),         # fails on the configs with unroll 1
        ]
        for expression, what in cases:
            with self.subTest(where=expression):
                result = self.ktune(*SPACE, "--list", "--where", expression, check=2)
                self.assertIn("--where", result.stderr)
                self.assertIn(f'"{expression}"', result.stderr)
                self.assertIn(what, result.stderr)
                self.assertEqual(result.stdout, "")  # no partial listing
        result = self.ktune(*SPACE, "--list", "--where", "thread > 2", "--json", check=2)
        self.assertEqual(json.loads(result.stdout)["exit_code"], 2)
        self.assertIn("known names: threads", result.stderr)

    def test_listing_options_need_list_and_valid_values(self):
        cases = [
            (["--where", "threads > 1"], ["--where", "--list"]),
            (["--format", "csv"], ["--format", "--list"]),
            (["--limit", "5"], ["--limit", "--list"]),
            (["--list", "--format", "yaml"], ["--format", "'yaml'", "table, md, csv, json"]),
            (["--list", "--limit", "-1"], ["--limit", "'-1'"]),
            (["--list", "--where", ""], ["--where", "empty"]),
            (["--list", "--json", "--format", "csv"], ["--json", "--format csv"]),
        ]
        for extra, fragments in cases:
            with self.subTest(args=extra):
                result = self.ktune(*SPACE, *extra, check=2)
                for fragment in fragments:
                    self.assertIn(fragment, result.stderr)

    def test_db_is_refused(self):
        db = os.path.join(self.dir, "results.db")
        for extra in ([], ["--list"], ["--json"]):
            with self.subTest(args=extra):
                result = self.ktune(*SPACE, "--db", db, *extra, check=2)
                self.assertIn("--db", result.stderr)
                self.assertIn("reads no results database", result.stderr)
        self.ktune(*SPACE, "--db", check=2)
        self.assertFalse(os.path.exists(db))
        self.assertNotRegex(self.ktune("space", "--help", check=0).stdout, r"(?m)^\s*--db")  # not offered

    def test_without_list_the_summary_is_unchanged(self):
        summary = self.summary()
        self.assertEqual(set(summary), {"total", "valid", "seconds", "parameters", "constraints", "bytes", "flops"})
        text = self.ktune(*SPACE, check=0).stdout
        self.assertRegex(text, r"softmax\.cpu\.json\n  parameters:  5\n  constraints: 3\n  total:       \d+\n"
                               r"  valid:       \d+\n  built in:    ")


if __name__ == "__main__":
    harness.main()
