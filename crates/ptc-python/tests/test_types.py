"""The type stubs are right: mypy --strict accepts the package and the examples, and stubtest
finds the stubs of the extension module true to it; and help() on the public callables
describes every parameter."""

import pathlib
import subprocess
import sys

import pytest

import ptc

PACKAGE = pathlib.Path(__file__).resolve().parents[1]


def mypy(*args):
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, cwd=PACKAGE, timeout=600)


def test_mypy_strict_accepts_the_package_and_the_examples():
    done = mypy("mypy", "--strict", "--no-incremental", "-p", "ptc")
    assert done.returncode == 0, done.stdout + done.stderr
    done = mypy("mypy", "--no-incremental", "--check-untyped-defs", "examples")
    assert done.returncode == 0, done.stdout + done.stderr


def test_stubtest_finds_the_stubs_true_to_the_module():
    done = mypy("mypy.stubtest", "ptc._ptc", "--ignore-missing-stub")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("public", [ptc.run, ptc.Agent, ptc.Tool, ptc.Scripted])
def test_help_describes_every_parameter(public):
    import inspect

    doc = inspect.getdoc(public) or ""
    names = [n for n in inspect.signature(public).parameters if n not in ("self", "cls")]
    assert names, public
    documented = doc.split("Args:", 1)[1] if "Args:" in doc else ""
    missing = [n for n in names if f"\n    {n}:" not in "\n" + documented]
    assert not missing, f"{public.__name__} does not describe {missing}:\n{doc}"
