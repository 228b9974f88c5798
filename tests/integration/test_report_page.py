"""The `ktune report` dashboard page (tuner/report/assets) in headless Chromium, without ktune:
a report directory is assembled the way `ktune report --out DIR` lays it out, with the synthetic
tests/data/report_sample.js as data.js, and the DOM after rendering is checked against the data:
sections and charts per group, the change-point table, escaping, empty states, and that broken
data shows an error on the page instead of a blank one.

Run as `python3 tests/integration/test_report_page.py`; the --ktune/--source-dir/--cxx arguments
ctest passes to every integration test are accepted and ignored. Needs `chromium` and Debian's
libjs-chart.js; a missing one fails the tests (CI installs both).
"""
import argparse
import html.parser
import json
import os
import pathlib
import shutil
import sys
import tempfile
import time
import unittest

import browser

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[2]
ASSETS = SOURCE_DIR / "tuner" / "report" / "assets"
SAMPLE = SOURCE_DIR / "tests" / "data" / "report_sample.js"
CHART_JS = pathlib.Path("/usr/share/javascript/chart.js/chart.min.js")
DATA_PREFIX = "window.KTUNE_REPORT = "


def read_sample():
    """The sample's report object: the text after the assignment is plain JSON."""
    text = SAMPLE.read_text()
    return json.loads(text[text.index(DATA_PREFIX) + len(DATA_PREFIX):text.rindex(";")])


def assemble_report_dir(directory, data_js):
    """Lays out DIR as `ktune report --out DIR` does; returns the path of index.html."""
    shutil.copy(ASSETS / "report.html", os.path.join(directory, "index.html"))
    for name in ("report.css", "report.js"):
        shutil.copy(ASSETS / name, os.path.join(directory, name))
    shutil.copy(CHART_JS, os.path.join(directory, "chart.min.js"))
    with open(os.path.join(directory, "data.js"), "w") as f:
        f.write(data_js)
    return os.path.join(directory, "index.html")


class Element:
    """A node of the rendered DOM, enough to query it by tag, class and id."""

    def __init__(self, tag, attrs):
        self.tag, self.attrs, self.children = tag, dict(attrs), []

    @property
    def classes(self):
        return (self.attrs.get("class") or "").split()

    def text(self):
        return "".join(child if isinstance(child, str) else child.text() for child in self.children)

    def walk(self):
        yield self
        for child in self.children:
            if isinstance(child, Element):
                yield from child.walk()

    def find_all(self, tag=None, class_name=None):
        return [node for node in self.walk() if (tag is None or node.tag == tag)
                and (class_name is None or class_name in node.classes)]

    def by_id(self, element_id):
        matches = [node for node in self.walk() if node.attrs.get("id") == element_id]
        return matches[0] if matches else None


class DomParser(html.parser.HTMLParser):
    """Builds an Element tree from Chromium's --dump-dom output (well-formed, so no repair)."""
    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.open = [self.root]

    def handle_starttag(self, tag, attrs):
        element = Element(tag, attrs)
        self.open[-1].children.append(element)
        if tag not in self.VOID:
            self.open.append(element)

    def handle_endtag(self, tag):
        for depth in range(len(self.open) - 1, 0, -1):
            if self.open[depth].tag == tag:
                del self.open[depth:]
                return

    def handle_data(self, data):
        self.open[-1].children.append(data)


def parse_dom(dom):
    parser = DomParser()
    parser.feed(dom)
    return parser.root


class ReportPageTestCase(unittest.TestCase):
    def setUp(self):
        if browser.find_chromium() is None:
            self.fail("chromium is not installed, so the report page cannot be checked (apt-get install chromium)")
        if not CHART_JS.exists():
            self.fail(f"{CHART_JS} is missing; ktune report copies it (apt-get install libjs-chart.js)")

    def render_data(self, data_js):
        """Renders a report dir holding data_js; returns (document root, console messages)."""
        with tempfile.TemporaryDirectory(prefix="ktune-report-page-") as directory:
            result = browser.render(assemble_report_dir(directory, data_js))
        return parse_dom(result.dom), result.console

    def body(self, document):
        return document.find_all("body")[0]

    def render_errors(self, document):
        return document.by_id("render-errors").text().strip()


class SampleReport(ReportPageTestCase):
    """The sample data, rendered once for all its tests."""

    @classmethod
    def setUpClass(cls):
        cls.report = read_sample()
        cls.document = cls.console = None
        if browser.find_chromium() and CHART_JS.exists():  # else setUp fails each test with the reason
            started = time.monotonic()
            with tempfile.TemporaryDirectory(prefix="ktune-report-page-") as directory:
                result = browser.render(assemble_report_dir(directory, SAMPLE.read_text()))
            cls.render_seconds = time.monotonic() - started
            cls.document, cls.console = parse_dom(result.dom), result.console

    def section(self, group_id):
        section = self.document.by_id(group_id)
        self.assertIsNotNone(section, f"no element with id {group_id}")
        self.assertEqual(section.tag, "section")
        return section

    def test_renders_without_errors(self):
        body = self.body(self.document)
        self.assertEqual(self.render_errors(self.document), "", "the page reported errors")
        self.assertEqual(body.attrs.get("data-rendered"), "true")
        self.assertIn("hidden", self.document.by_id("render-errors").attrs)
        # Chromium logs every console level alike, so any message at all counts as a failure:
        # the page logs nothing when all is well.
        self.assertEqual(self.console, [], "console messages")
        print(f"\n  sample report rendered in {self.render_seconds:.1f} s", file=sys.stderr)

    def test_one_section_per_group_with_its_title(self):
        sections = self.document.find_all("section", "group")
        self.assertEqual([s.attrs["id"] for s in sections], [g["id"] for g in self.report["groups"]])
        for section, group in zip(sections, self.report["groups"]):
            title = section.find_all("h2")[0].text()
            self.assertEqual(title, f"{group['family']} · {group['backend']} · {group['device']}")
        links = [a.attrs.get("href") for a in self.document.by_id("group-nav").find_all("a")]
        self.assertEqual(links, [f"#{g['id']}" for g in self.report["groups"]])

    def test_one_chart_per_series_row_set_search_and_parameter(self):
        groups = self.report["groups"]
        searched = [entry for group in groups for entry in group["tuning"]
                    if any(e["outcome"] == "ok" and e["median_ns"] is not None for e in entry["evaluations"])]
        expected = {
            "history-chart": sum(len(group["history"]) for group in groups),
            "baseline-chart": sum(1 for group in groups if group["latest"] and group["latest"]["rows"]),
            "convergence-chart": len(searched),
            "parameter-chart": sum(len(entry["parameters"]) for entry in searched),
        }
        for canvas_class, count in expected.items():
            self.assertEqual(len(self.document.find_all("canvas", canvas_class)), count, canvas_class)
        self.assertEqual(self.body(self.document).attrs.get("data-charts"), str(sum(expected.values())))
        benchmarks = [c.attrs.get("data-benchmark") for c in self.document.find_all("canvas", "history-chart")]
        self.assertEqual(benchmarks, [s["benchmark"] for g in groups for s in g["history"]])
        parameters = [c.attrs.get("data-parameter") for c in self.document.find_all("canvas", "parameter-chart")]
        self.assertEqual(parameters, [p for entry in searched for p in entry["parameters"]])

    def test_change_point_table_lists_the_regression(self):
        series = self.section("rmsnorm-cuda-1").find_all("div", "series")
        history = self.report["groups"][0]["history"]
        self.assertEqual(len(series), len(history))
        regression = history[0]["change_points"][0]
        tables = series[0].find_all("table", "change-points")
        self.assertEqual(len(tables), 1)
        rows = tables[0].find_all("tbody")[0].find_all("tr")
        self.assertEqual(len(rows), 1)
        self.assertIn(regression["commit"], rows[0].text())
        self.assertIn(f"+{100 * regression['change']:.1f}%", rows[0].text())
        self.assertEqual(history[1]["change_points"], [])
        self.assertEqual(series[1].find_all("table", "change-points"), [])
        self.assertIn("no change point", series[1].text().lower())

    def test_names_from_the_data_are_text_not_markup(self):
        name = self.report["groups"][0]["history"][1]["benchmark"]
        self.assertIn("<b>&", name)
        headings = [h.text() for h in self.document.find_all("h4", "benchmark")]
        self.assertIn(name, headings)
        self.assertEqual(self.document.find_all("b"), [], "a <b> element came from the data")

    def test_latest_table_compares_tuned_default_and_baseline(self):
        rows = self.report["groups"][0]["latest"]["rows"]
        table = self.section("rmsnorm-cuda-1").find_all("table", "latest")[0]
        cells = [[td.text() for td in tr.find_all("td")] for tr in table.find_all("tbody")[0].find_all("tr")]
        self.assertEqual([row[0] for row in cells], [row["problem"] for row in rows])
        first = cells[0]
        self.assertIn(f"{rows[0]['default_ns'] / rows[0]['tuned_ns']:.2f}×", first)
        self.assertIn(f"{rows[0]['percent_of_ceiling']:.1f}%", first)
        self.assertTrue(any(cell.endswith("TB/s") for cell in first), first)
        self.assertTrue(any(cell.endswith(" us") for cell in first), first)
        self.assertIn("–", cells[2], "a row without default or baseline shows dashes")

    def test_search_caption_counts_outcomes(self):
        entry = self.report["groups"][0]["tuning"][0]
        outcomes = [e["outcome"] for e in entry["evaluations"]]
        caption = self.section("rmsnorm-cuda-1").find_all("p", "caption")[0].text()
        self.assertTrue(caption.startswith(f"{len(outcomes)} evaluations: {outcomes.count('ok')} ok"), caption)
        for failure in set(outcomes) - {"ok"}:
            self.assertIn(f"{outcomes.count(failure)} {failure}", caption)

    def test_group_without_bench_data_says_so(self):
        cpu = self.section("softmax-cpu-2")
        empty = [p.text() for p in cpu.find_all("p", "empty")]
        self.assertTrue(any(text.startswith("No bench history for this group") for text in empty), empty)
        self.assertTrue(any(text.startswith("No bench run for this group") for text in empty), empty)
        self.assertEqual(cpu.find_all("canvas", "history-chart") + cpu.find_all("canvas", "baseline-chart"), [])
        self.assertEqual(len(cpu.find_all("canvas", "convergence-chart")), 1)


class EdgeCases(ReportPageTestCase):
    def test_empty_database_shows_a_message(self):
        document, console = self.render_data(
            DATA_PREFIX + json.dumps({"schema": 1, "generated_at": "2026-11-21T12:00:00Z", "ktune_version": "0.4.0",
                                      "git_commit": "6e3e21d", "database": "/tmp/ktune.db", "groups": []}) + ";\n")
        self.assertEqual(self.render_errors(document), "")
        self.assertEqual(self.body(document).attrs.get("data-rendered"), "true")
        self.assertEqual(self.body(document).attrs.get("data-charts"), "0")
        self.assertEqual(document.find_all("section"), [])
        self.assertIn("The database holds no tuning or bench results yet", document.by_id("groups").text())
        self.assertEqual(console, [])

    def test_sparse_but_valid_data_renders(self):
        point = {"bench_run_id": 1, "commit": "abc1234", "time": "2026-11-21T10:00:00Z", "median_ns": 5.0e6,
                 "min_ns": None, "max_ns": None, "repetitions_ns": []}
        group = {"id": "odd-group", "family": "copy", "backend": "cpu", "device": "CPU <&>", "device_fingerprint": "",
                 "history": [{"benchmark": "copy/cpu/n=1", "problem": "n=1;fp32", "points": [point],
                              "change_points": [{"index": 0, "commit": "abc1234", "before_ns": 4.0e6,
                                                 "after_ns": 5.0e6, "change": 0.25, "p_value": 0.0001}]}],
                 "latest": {"bench_run_id": 1, "commit": "abc1234", "time": "2026-11-21T10:00:00Z", "rows": []},
                 "tuning": [{"problem": "n=1;fp32", "space_valid": None, "parameters": ["unroll"],
                             "outcome_counts": {"compile_error": 5, "timeout": 2},  # optional: of a subsample
                             "evaluations": [{"order": 1, "median_ns": None, "outcome": "compile_error",
                                              "config": {"unroll": 4}}]}]}
        document, console = self.render_data(DATA_PREFIX + json.dumps({"schema": 1, "groups": [group]}) + ";")
        self.assertEqual(self.render_errors(document), "")
        self.assertEqual(self.body(document).attrs.get("data-rendered"), "true")
        self.assertEqual(console, [])
        text = document.by_id("odd-group").text()
        self.assertIn("The latest bench run measured no problem", text)
        self.assertIn("No evaluation succeeded", text)
        self.assertIn("7 evaluations: 5 compile_error, 2 timeout (1 of them listed)", text)
        self.assertEqual(self.body(document).attrs.get("data-charts"), "1")  # the history chart alone

    def test_data_missing_a_field_shows_the_error_on_the_page(self):
        document, console = self.render_data(DATA_PREFIX + '{"schema": 1, "groups": [{"id": "x"}]};\n')
        errors = self.render_errors(document)
        self.assertIn('"history" must be an array', errors)
        self.assertIn('"x"', errors, "the error names the group")
        self.assertNotIn("hidden", document.by_id("render-errors").attrs)
        self.assertEqual(self.body(document).attrs.get("data-rendered"), "false")
        self.assertTrue(any("history" in message for message in console), console)

    def test_data_js_that_does_not_parse_shows_the_error_on_the_page(self):
        document, _ = self.render_data(DATA_PREFIX + '{"schema": 1, "groups": [};\n')
        errors = self.render_errors(document)
        self.assertIn("SyntaxError", errors)
        self.assertIn("did not define window.KTUNE_REPORT", errors)
        self.assertEqual(self.body(document).attrs.get("data-rendered"), "false")


if __name__ == "__main__":
    # ctest passes every integration test --ktune, --source-dir and --cxx; this one needs none of
    # them (harness.parse_args would require --ktune, which a plain run does not have).
    parser = argparse.ArgumentParser()
    for option in ("--ktune", "--source-dir", "--cxx"):
        parser.add_argument(option)
    _, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
