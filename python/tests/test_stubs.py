"""The type stubs say what the package takes: every function and method
they declare exists, with the same parameters in the same order."""

import ast
import inspect
from pathlib import Path

import rdarrow
from rdarrow import _rdarrow

STUBS = Path(rdarrow.__file__).parent


def _declared(stub):
    """(qualified name, parameter names) of each function in a stub."""
    tree = ast.parse((STUBS / stub).read_text())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            yield node.name, [a.arg for a in node.args.args]
        elif isinstance(node, ast.ClassDef):
            for f in node.body:
                if isinstance(f, ast.FunctionDef):
                    yield f"{node.name}.{f.name}", [a.arg for a in f.args.args]


def _actual(module, name):
    obj = module
    for part in name.split("."):
        obj = getattr(obj, part)
    return list(inspect.signature(obj).parameters)


def test_the_binding_stub_matches_the_binding():
    declared = dict(_declared("_rdarrow.pyi"))
    assert declared, "no functions in _rdarrow.pyi"
    for name, params in declared.items():
        assert _actual(_rdarrow, name) == params, name


def test_the_package_stub_matches_the_package():
    declared = dict(_declared("__init__.pyi"))
    assert "read_table" in declared
    for name in rdarrow.__all__:
        obj = getattr(rdarrow, name)
        if inspect.isfunction(obj):
            assert name in declared, f"{name} is not in __init__.pyi"
    for name, params in declared.items():
        actual = _actual(rdarrow, name)
        if name.endswith(".__init__") or "." in name:
            actual = ["self"] + actual if actual[:1] != ["self"] else actual
        assert actual == params, name
