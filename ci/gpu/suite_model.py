"""The suite phase's cost model: how long each remaining step will take, learned from the steps
done, and so how many seconds the next tune may have.

Each tune pays a fixed start-up F0 (worker, CUDA context, first NVRTC compile: seconds) plus, at
the large shapes, the set-up of its inputs and float64 reference inside its first evaluation,
k seconds per tensor element; each shape's PyTorch baselines take B. Starting from F0 = 4 s,
k = 12 ns and B = 20 s, F0 is fitted to the small tunes (under 8e7 elements) and k to the large
ones, three rounds. Before a tune, the remaining steps' predicted cost is taken from what is left
of the budget and the tune gets its share of the rest, at most the cap and at least 1 s; a step
that cannot fit in the budget at all is skipped."""
from dataclasses import dataclass

F0_START, K_START, B_START = 4.0, 1.2e-8, 20.0
LARGE = 8e7  # elements from which a tune's set-up time shows
OVERHEAD = 5.0  # seconds kept back for the end of the phase


@dataclass
class Step:
    """A step done: kind (tune or baselines), elements, its time limit and the wall seconds it took."""
    kind: str
    elements: float
    limit: float
    wall: float


@dataclass
class Verdict:
    run: bool
    limit: float  # the next tune's time limit (0 for baselines)
    f0: float
    b: float
    k: float
    slack: float  # what is left of the budget after the predicted cost of every remaining step


def fit(steps):
    """(F0, k, B) from the steps done."""
    tunes = [(s.elements, s.wall - s.limit) for s in steps if s.kind == "tune"]
    baselines = [s.wall for s in steps if s.kind == "baselines"]
    f0, k = F0_START, K_START
    for _ in range(3):
        small = [over - k * elements for elements, over in tunes if elements < LARGE]
        if small:
            f0 = sum(small) / len(small)
        f0 = max(f0, 1.0)
        large = [(over - f0) / elements for elements, over in tunes if elements >= LARGE]
        if large:
            k = sum(large) / len(large)
        k = max(k, 0.0)
    b = sum(baselines) / len(baselines) if baselines else B_START
    return f0, k, b


def decide(steps, remaining, budget, elapsed, cap):
    """The verdict for remaining[0], remaining being [(kind, elements)] of every step not yet run."""
    f0, k, b = fit(steps)
    cost = OVERHEAD + sum(f0 + k * elements if kind == "tune" else b for kind, elements in remaining)
    tunes = sum(1 for kind, _ in remaining if kind == "tune")
    left = budget - elapsed
    kind, elements = remaining[0]
    limit, need = 0.0, b
    if kind == "baselines" and len(remaining) > 1 and remaining[1][0] == "tune":
        need += f0 + k * remaining[1][1] + 1  # and one tune after it
    if kind == "tune":
        limit = min((left - cost) / tunes, cap)
        limit = round(max(limit, 1.0), 1)
        need = f0 + k * elements + limit
    return Verdict(run=elapsed + need <= budget, limit=limit, f0=f0, b=b, k=k, slack=left - cost)


def read_steps(path):
    """The steps file: one "kind elements limit wall" line per step done."""
    steps = []
    try:
        with open(path) as f:
            for line in f:
                kind, elements, limit, wall = line.split()
                steps.append(Step(kind, float(elements), float(limit), float(wall)))
    except OSError:
        pass
    return steps
