"""The sandbox's adversarial programs (crates/ptc-lisp/tests/adversarial), run through the
Python API against Python tools: each ends with the exception of the error the sandbox's own
test expects, and the process goes on."""

import asyncio
import pathlib
import re
from typing import List, Tuple

import pytest

import ptc

CASES = pathlib.Path(__file__).resolve().parents[2] / "ptc-lisp" / "tests" / "adversarial"

LIMIT_NAMES = {
    "timeout_ms": ("timeout", 1e-3),
    "tool_timeout_ms": ("tool_timeout", 1e-3),
    "max_steps": ("max_steps", 1),
    "max_call_depth": ("max_call_depth", 1),
    "max_memory_bytes": ("max_memory_bytes", 1),
    "max_value_depth": ("max_value_depth", 1),
    "max_tool_calls": ("max_tool_calls", 1),
    "max_output_bytes": ("max_output_bytes", 1),
    "max_print_chars": ("max_print_chars", 1),
}

# The Python tools word their failures as Python does; the sandbox's test, as its Rust tools.
RUST_WORDING = [
    (r"^tool/panics failed: IndexError: index out of range in the tool$",
     "tool/panics failed: the tool panicked: index out of range in the tool"),
    (r"^tool/hangs failed: TimeoutError: no answer within (\d+) ms \(the call was cancelled\)$",
     r"tool/hangs failed: no answer within \1 ms (the call was abandoned)"),
]


def as_rust_words(message: str) -> str:
    for pattern, replacement in RUST_WORDING:
        message = re.sub(pattern, replacement, message)
    return message


def echo(*args):
    return list(args)


def panics():
    raise IndexError("index out of range in the tool")


async def hangs():
    await asyncio.Event().wait()


def fails():
    raise RuntimeError("the service is down")


def big(n):
    return list(range(min(n, 10_000_000)))


TOOLS = [echo, panics, hangs, fails, big]


def expand(source: str) -> str:
    def repeat(match: "re.Match[str]") -> str:
        count, text = int(match.group(1)), match.group(2)
        text = text.replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")
        if "{i}" in text:
            return "".join(text.replace("{i}", str(i)) for i in range(count))
        return text * count

    return re.sub(r'\{\{repeat (\d+) "((?:[^"\\]|\\.)*)"\}\}', repeat, source)


def cases() -> List[Tuple[str, str, dict, str]]:
    found = []
    for path in sorted(CASES.glob("*.txt")):
        name, limits, source, expect = None, {}, [], None
        for line in path.read_text().splitlines() + [";; ==== end"]:
            if line.startswith(";; ==== "):
                if name is not None:
                    found.append((f"{path.name}:{name}", expand("\n".join(source) + "\n"), limits, expect))
                name, limits, source, expect = line[8:].strip(), {}, [], None
            elif line.startswith(";; limits:"):
                limits = dict(setting.split("=") for setting in line[10:].split())
            elif line.startswith(";; !!"):
                expect = line[6:]
            elif not line.startswith(";;") and name is not None:
                source.append(line)
    return found


def limits_for(settings: dict) -> ptc.Limits:
    given = {"timeout": 0.2, "max_memory_bytes": 16 << 20, "tool_timeout": 0.1}
    for key, value in settings.items():
        if key not in LIMIT_NAMES:
            return None  # reader limits have no Python setting: skipped below
        name, scale = LIMIT_NAMES[key]
        given[name] = int(value) * scale if scale != 1 else int(value)
    return ptc.Limits(**given)


ALL = cases()


def test_the_cases_are_found():
    assert len(ALL) >= 140


@pytest.mark.parametrize("name,source,settings,expect", ALL, ids=[c[0] for c in ALL])
def test_adversarial_program(name, source, settings, expect):
    limits = limits_for(settings)
    if limits is None:
        pytest.skip("a limit on the program text, which the Python API leaves at its default")
    with pytest.raises(ptc.ProgramError) as raised:
        ptc.run(source, tools=TOOLS, limits=limits)
    error = raised.value
    where = f"{error.line}:{error.column}: " if error.line is not None else ""
    if error.kind == "timeout":
        # Where a timeout strikes depends on the machine's speed, as in the sandbox's test.
        assert f"error[timeout] {error.message}" == re.sub(r"^error\[timeout\] (\d+:\d+: )?", "error[timeout] ", expect)
    else:
        assert f"error[{error.kind}] {where}{as_rust_words(error.message)}" == expect
