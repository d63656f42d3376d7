"""The examples run, offline, and print what the docs say."""

import pathlib
import subprocess
import sys

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
README = pathlib.Path(__file__).resolve().parents[3] / "README.md"


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
