#!/usr/bin/env python3
"""Writes the inputs and reference output of matmul_T1.json (no numpy needed).

a.bin: A, M x K, and b.bin: B, K x N, row-major float32, uniform in [-1, 1] from a fixed seed;
expected_c.bin: C = A * B computed in float64 and stored as float32. M = N = K = 512 as in the
spec's ProblemSize [N, M, K]. Run from anywhere: the files go next to this script.
"""
import math
import os
import random
import struct

M = N = K = 512
SEED = 20240611


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    rng = random.Random(SEED)
    # Round to float32 first so the reference is computed from exactly the values the GPU reads.
    to_f32 = lambda x: struct.unpack("<f", struct.pack("<f", x))[0]
    a = [to_f32(rng.uniform(-1.0, 1.0)) for _ in range(M * K)]
    b = [to_f32(rng.uniform(-1.0, 1.0)) for _ in range(K * N)]
    b_columns = [b[n::N] for n in range(N)]
    c = []
    for m in range(M):
        row = a[m * K:(m + 1) * K]
        c.extend(math.fsum(x * y for x, y in zip(row, column)) for column in b_columns)
    for name, values in (("a.bin", a), ("b.bin", b), ("expected_c.bin", c)):
        with open(os.path.join(here, name), "wb") as out:
            out.write(struct.pack("<%df" % len(values), *values))


if __name__ == "__main__":
    main()
