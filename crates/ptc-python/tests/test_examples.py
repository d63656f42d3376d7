"""The examples run, offline, and print what the docs say."""

import pathlib
import re
import subprocess
import sys

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
README = pathlib.Path(__file__).resolve().parents[3] / "README.md"
PYTHON_DOC = pathlib.Path(__file__).resolve().parents[3] / "docs" / "python.md"


def block(text, heading, language="python"):
    """The first ``language`` code block after ``heading`` in ``text``."""
    fence = f"```{language}\n"
    start = text.index(fence, text.index(heading)) + len(fence)
    return text[start:text.index("\n```\n", start) + 1]


def run_verbatim(program):
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done


def run(name):
    done = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_quickstart():
    assert run("quickstart.py") == (
        "{'sent': True, 'to': 'buyer@example.com', 'count': 2}\n"
        "['picked 2']\n"
        "[('send_email', ['buyer@example.com', ['desk', 'lamp']])]\n"
    )


def test_host_tools():
    assert run("host_tools.py") == (
        "the program asks lookup ['a']\n"
        "the program asks lookup ['b']\n"
        "alpha-beta\n"
        "12\n"
    )


def test_agent_function():
    assert run("agent_function.py") == (
        "{'owners': ['ada']}\n"
        "[['2 open'], []]\n"
        "{'returned': {'value': '{:owners [\"ada\"]}'}}\n"
    )


def test_pydantic_ai_code_tool():
    assert run("pydantic_ai_code_tool.py") == "Open orders: {:count 2, :total 200.0}\n"


def test_the_readme_python_example():
    text = README.read_text()
    start = text.index("```python\n", text.index("## Python")) + len("```python\n")
    program = text[start:text.index("```", start)]
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "{'count': 2, 'names': ['desk', 'lamp']}\n"


def test_the_python_docs_progress_example():
    text = PYTHON_DOC.read_text()
    done = run_verbatim(block(text, "### Progress"))
    assert done.stdout == block(text, "### Progress", "text")
    duration = r"[0-9.]+ (µs|ms|s)"
    turn = rf"ptc INFO turn {{}} of 5: ok; 0 tokens in, 0 out; {duration} \(model {duration}, program {duration}\)"
    lines = done.stderr.splitlines()
    assert len(lines) == 2, done.stderr
    assert re.fullmatch(turn.format(1), lines[0]), lines[0]
    assert re.fullmatch(turn.format(2), lines[1]), lines[1]


def test_the_python_docs_agent_example_runs_offline():
    text = PYTHON_DOC.read_text()
    done = run_verbatim(block(text, "## Agents"))
    assert done.stdout == block(text, "## Agents", "text")
    assert done.stderr == ""
