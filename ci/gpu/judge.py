"""Verdicts of the check tunes: a check passes when ktune exited 0 and every config was `ok`; and
the configs of a database that were not, with their messages, so a failure can be read without
the database."""
import json
import sqlite3

from .ktune import tune_result


def check_line(label, precision, shape, rc, path):
    """(passed, the log line) of one check tune's JSON summary at `path`."""
    try:
        with open(path) as f:
            s = tune_result(json.load(f))
    except Exception as e:
        return False, f"{label} {precision} {shape}: no JSON (exit {rc}): {e}"
    bad = {k: v for k, v in s.get("outcomes", {}).items() if k != "ok"}
    line = (f"{label:26s} {precision} {shape:18s} exit {rc} outcomes {s.get('outcomes')} "
            f"best error {s['best']['error'] if s.get('best') else None}")
    return not bad and str(rc) == "0", line


def not_ok(db_path, with_family=False, limit=None):
    """"not ok: ..." lines for every measurement of the database whose outcome is not ok."""
    columns = ("p.family, " if with_family else "") + "p.key, m.config, m.outcome, substr(m.message, 1, 300)"
    query = (f"select {columns} from measurements m join problems p on p.id = m.problem_id "
             f"where m.outcome != 'ok'" + (f" limit {int(limit)}" if limit else ""))
    try:
        with sqlite3.connect(db_path) as db:
            return [" | ".join(["not ok:", *(str(v) for v in row)]) for row in db.execute(query)]
    except sqlite3.Error as e:  # a database no tune wrote: say so, do not stop the phase
        return [f"{db_path}: {e}"]


def measurements(db_path, message_chars=120):
    """Every measurement of a database as "config | outcome | message" lines."""
    with sqlite3.connect(db_path) as db:
        return [" | ".join(str(v) for v in row) for row in
                db.execute(f"select config, outcome, substr(message, 1, {int(message_chars)}) from measurements")]
