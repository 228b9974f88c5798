"""What the largest cubins of the cache hold: counts of the tensor-core and memory instructions
of interest in their SASS, and their registers, stack and shared memory (cuobjdump)."""
import collections
import glob
import os
import re
import subprocess

RESOURCES = re.compile(r"REG:[0-9]+|STACK:[0-9]+|SHARED:[0-9]+")


def largest_cubins(cache_dir, family, count):
    cubins = glob.glob(os.path.join(cache_dir, f"{family}-*.cubin"))
    return sorted(cubins, key=os.path.getsize, reverse=True)[:count]


def summary(cubin, instructions):
    """One line: "  N INSTR ... REG:x STACK:y SHARED:z  name" (as `uniq -c` counts them)."""
    try:
        sass = subprocess.run(["cuobjdump", "-sass", cubin], capture_output=True, text=True).stdout
        usage = subprocess.run(["cuobjdump", "-res-usage", cubin], capture_output=True, text=True).stdout
    except OSError as e:
        return f"{os.path.basename(cubin)}: {e}"
    counts = collections.Counter(re.findall(instructions, sass))
    parts = [f"{counts[name]:7d} {name}" for name in sorted(counts)]
    return " ".join(parts + RESOURCES.findall(usage)) + f"  {os.path.basename(cubin)}"


def report(cache_dir, family, count, instructions, log):
    for cubin in largest_cubins(cache_dir, family, count):
        log(summary(cubin, instructions))
