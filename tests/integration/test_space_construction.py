#!/usr/bin/env python3
"""`ktune space --t1 FILE --json` against an independent count: Python enumerates the whole
Cartesian product of each T1 spec with itertools.product and evaluates every condition with
Python itself (Values computed by Python's eval too), so the C++ enumerator, its pruning order
and its expression language are all checked against the reference semantics of the format.

Specs: the two recorded spaces in shared/data, and tests/data/t1/ (the CLBlast GEMM space,
1.3e6 raw configs, and a hotspot stencil space, 1.9e7 raw configs, whose Values are Python
computations: comprehensions and list(range(...))). Python counts all of them in ~15 s."""
import itertools
import json
import math
import os
import sys
import unittest

import harness
from harness import KtuneTestCase, main


def python_count(spec_path):
    spec = json.load(open(spec_path))
    parameters = spec["ConfigurationSpace"]["TuningParameters"]
    names = [p["Name"] for p in parameters]
    values = [eval(p["Values"]) if isinstance(p["Values"], str) else p["Values"] for p in parameters]
    conditions = [c["Expression"] for c in spec["ConfigurationSpace"].get("Conditions", [])]
    # One compiled function per condition, called with every parameter by keyword order.
    checks = [eval("lambda " + ", ".join(names) + ": " + text) for text in conditions]
    total = math.prod(len(v) for v in values)
    valid = 0
    for config in itertools.product(*values):
        if all(check(*config) for check in checks):
            valid += 1
    return total, valid


class SpaceConstruction(KtuneTestCase):
    def specs(self):
        source_dir = harness.ARGS.source_dir
        shared = os.path.join(source_dir, "..", "shared", "data", "kernel_tuner_caches")
        found = [os.path.join(source_dir, "tests", "data", "t1", name)
                 for name in ("gemm_clblast_T1.json", "hotspot_T1.json", os.path.join("matmul", "matmul_T1.json"),
                              os.path.join("matmul", "matmul_contiguous_padded_T1.json"))]
        for name in ("convolution_milo_T1.json", "dedispersion_milo_T1.json"):
            if os.path.exists(os.path.join(shared, name)):
                found.append(os.path.join(shared, name))
        return found

    def test_valid_counts_match_a_python_brute_force(self):
        for spec in self.specs():
            with self.subTest(spec=os.path.basename(spec)):
                ours = self.ktune_json("space", "--t1", spec)
                total, valid = python_count(spec)
                self.assertEqual(ours["total"], total)
                self.assertEqual(ours["valid"], valid)
                self.assertGreater(valid, 0)
                self.assertLess(valid, total)  # the conditions do prune
                print(f"{os.path.basename(spec)}: {valid} valid of {total} in {ours['seconds']:.3f} s",
                      file=sys.stderr)


if __name__ == "__main__":
    main()
