"""Reads the family descriptors kernels/<folder>/family.json (kernels/README.md says what each key
means): the shapes a family is checked, benchmarked and launched at, its dims as expressions of a
transformer's tokens and hidden size, and which backends it has sources for."""
import ast
import json
import operator
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The operators a transformer expression may use (kernels/README.md): + - * // on integers.
_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv}
_NAMES = ("tokens", "hidden")


def shape_text(shape):
    """{"rows": 37, "cols": 1001} -> "rows=37,cols=1001", as ktune's --shape takes it."""
    return ",".join(f"{name}={value}" for name, value in shape.items())


def parse_shape(text):
    """"m=4096,n=4096" -> {"m": 4096, "n": 4096}."""
    return {name: int(value) for name, value in (item.split("=", 1) for item in text.split(",") if item)}


class UnevenDivision(ValueError):
    """A // in a transformer expression left a remainder: the family cannot take that size."""


def evaluate(expression, exact=False, **names):
    """The integer value of a transformer expression such as "hidden // 128", with only the names
    tokens and hidden, integer constants and + - * //; anything else is an error. With exact, a //
    that leaves a remainder raises UnevenDivision."""
    def walk(node):
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            left, right = walk(node.left), walk(node.right)
            if exact and isinstance(node.op, ast.FloorDiv) and left % right:
                raise UnevenDivision(f"{expression} leaves a remainder")
            return _OPERATORS[type(node.op)](left, right)
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.Name) and node.id in _NAMES and node.id in names:
            return names[node.id]
        raise ValueError(f"transformer expression {expression!r}: only integers, tokens, hidden and + - * // allowed")
    return walk(ast.parse(expression, mode="eval"))


class Family:
    """One descriptor."""

    def __init__(self, folder, descriptor):
        self.folder = folder
        self.descriptor = descriptor
        self.name = descriptor["family"]
        self.test_only = bool(descriptor.get("test_only", False))
        self.sources = descriptor.get("sources", {})
        shapes = descriptor.get("shapes", {})
        self.odd_shapes = shapes.get("odd", [])
        self.bench_shape = shapes.get("bench")
        self.launch_shapes = shapes.get("launch", [])
        self.recorded_shapes = shapes.get("recorded", [])
        self.wide_shape = shapes.get("wide")
        self.transformer_dims = descriptor.get("transformer")

    def has_backend(self, backend):
        """Whether the family has sources for this backend (cuda also serves hip)."""
        return bool(self.sources.get(backend))

    def transformer_shape(self, tokens, hidden, exact=False):
        """The family's dims at a transformer's tokens x hidden ({} if it has no mapping); with
        exact, UnevenDivision when a dim's // leaves a remainder (hidden 1000 has no heads of 128)."""
        return {dim: evaluate(expression, exact=exact, tokens=tokens, hidden=hidden)
                for dim, expression in (self.transformer_dims or {}).items()}

    def uneven_at(self, tokens, hidden):
        """Why the family cannot take tokens x hidden ("heads: hidden // 128 leaves a remainder"),
        or None."""
        for dim, expression in (self.transformer_dims or {}).items():
            try:
                evaluate(expression, exact=True, tokens=tokens, hidden=hidden)
            except UnevenDivision as e:
                return f"{dim}: {e}"
        return None

    def __repr__(self):
        return f"Family({self.name!r})"


def load(root=ROOT):
    """Every family of kernels/*/family.json, by name, in the order of their folder names."""
    kernels = os.path.join(root, "kernels")
    families = {}
    for folder in sorted(os.listdir(kernels)):
        path = os.path.join(kernels, folder, "family.json")
        if os.path.isfile(path):
            with open(path) as f:
                family = Family(folder, json.load(f))
            families[family.name] = family
    return families


def with_backend(backend, root=ROOT, test_only=False):
    """The families with sources for `backend`, the fault-injection family only with test_only."""
    return [f for f in load(root).values() if f.has_backend(backend) and f.test_only == test_only]
