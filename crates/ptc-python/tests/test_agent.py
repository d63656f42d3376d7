"""ptc.Agent: a model as a spec or a Python function, Python and MCP tools, Steps, checkpoints."""

import asyncio
import http.server
import json
import pathlib
import sys
import threading

import pytest

import ptc

HERE = pathlib.Path(__file__).resolve().parent


def scripted(*replies):
    """A model function that answers with `replies` in turn, and records what it was sent."""
    sent = []

    def llm(messages):
        sent.append(messages)
        return replies[len(sent) - 1]

    llm.sent = sent
    return llm


def clojure(program):
    return f"```clojure\n{program}\n```"


def test_a_function_as_the_model_with_python_tools_and_a_signature():
    def get_ticket(ticket_id):
        """One ticket by id."""
        return {"id": ticket_id, "owner": "ada"}

    llm = scripted(clojure("(def t (tool/get_ticket data/ticket))"), clojure("(return {:owner (:owner t)})"))
    agent = ptc.Agent("Find the owner of ticket {{ticket}}", llm=llm, tools=[get_ticket],
                      data={"ticket": 42}, signature="{owner :string}")
    step = agent.run()
    assert step.success and step.value == {"owner": "ada"}
    assert step.text == '{:owner "ada"}'
    assert (step.failure_kind, step.reason) == (None, None)
    assert [t.number for t in step.turns] == [1, 2]
    first = step.turns[0]
    assert first.program == "(def t (tool/get_ticket data/ticket))"
    assert [(c.name, c.args, c.result) for c in first.tool_calls] == [("get_ticket", [42], {"id": 42, "owner": "ada"})]
    messages = llm.sent[0]
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "tool/get_ticket" in messages[1]["content"]
    assert "Find the owner of ticket 42" in messages[1]["content"]
    record = step.to_dict()
    assert record["outcome"] == {"returned": {"value": '{:owner "ada"}'}}
    assert json.loads(step.to_json(indent=2)) == record
    assert record["task"]["mission"] == "Find the owner of ticket 42"
    assert step.usage["llm_requests"] == 2


def test_a_failed_turn_is_shown_to_the_model_and_the_run_goes_on():
    llm = scripted(clojure("(+ 1 :a)"), clojure("(return 3)"))
    step = ptc.Agent("Add", llm=llm).run()
    assert step.value == 3
    assert step.turns[0].error["kind"] == "type"
    assert llm.sent[1][-1]["content"] == "Error: 1:1: + expects numbers, got keyword :a\n    (+ 1 :a)\n    ^\n\nTurns left: 4"


def test_failures_are_steps_not_exceptions():
    step = ptc.Agent("Give up", llm=scripted(clojure('(fail "no data")'))).run()
    assert (step.success, step.failure_kind, step.value) == (False, "failed", None)

    def broken(messages):
        raise ConnectionError("the model is down")

    step = ptc.Agent("Ask", llm=broken).run()
    assert step.failure_kind == "llm_error"
    assert "ConnectionError: the model is down" in step.reason

    step = ptc.Agent("Loop", llm=lambda messages: clojure("(println 1)"), max_turns=2).run()
    assert step.failure_kind == "max_turns_exceeded"


def test_async_model_and_tools_run_on_the_event_loop_concurrently():
    started = 0
    all_started = asyncio.Event()

    async def slow_square(x):
        nonlocal started
        started += 1
        if started == 5:
            all_started.set()
        await asyncio.wait_for(all_started.wait(), 10)
        return x * x

    async def llm(messages):
        await asyncio.sleep(0)
        return clojure("(return (reduce + (pmap tool/slow_square (range 5))))")

    async def main():
        agent = ptc.Agent("Squares", llm=llm, tools=[slow_square])
        return await asyncio.gather(agent.run_async(), agent.run_async())

    steps = asyncio.run(main())
    assert [s.value for s in steps] == [30, 30]


def test_run_data_and_agent_errors():
    agent = ptc.Agent("Count {{items}}", llm=scripted(clojure("(return (count data/items))")),
                      signature="(items [:int]) -> :int")
    assert agent.run(data={"items": [1, 2, 3]}).value == 3
    with pytest.raises(ptc.AgentError, match="the input data does not match the signature"):
        agent.run(data={"items": "three"})
    with pytest.raises(ptc.AgentError, match="gemini"):
        ptc.Agent("x", llm="gemini:pro")
    with pytest.raises(TypeError, match="llm must be a model spec"):
        ptc.Agent("x", llm=42)  # type: ignore[arg-type]
    with pytest.raises(ptc.AgentError):
        ptc.Agent("x", llm=scripted(), tools=[ptc.Tool(lambda: 1, name="t", signature="(((")])
    with pytest.raises(ptc.AgentError):
        ptc.Agent("x", llm=scripted(), compression="no-such-strategy")


def test_the_model_must_return_text():
    step = ptc.Agent("x", llm=lambda messages: 42).run()
    assert step.failure_kind == "llm_error"
    assert "the llm function must return the reply's text (a str), got int" in step.reason


def test_checkpoints_keep_turns_and_an_interrupted_run_resumes(tmp_path):
    checkpoint = tmp_path / "runs.jsonl"

    def first(messages):
        if len(messages) > 2:
            raise KeyboardInterrupt
        return clojure("(def x 40)")

    agent = ptc.Agent("Add up", llm=first)
    with pytest.raises(KeyboardInterrupt):
        agent.run(checkpoint=checkpoint, run_id="r1")
    with pytest.raises(ptc.AgentError, match="already holds run `r1`; pass resume=True"):
        agent.run(checkpoint=checkpoint, run_id="r1")
    resumed = ptc.Agent("Add up", llm=scripted(clojure("(return (+ x 2))")))
    step = resumed.run(checkpoint=checkpoint, run_id="r1", resume=True)
    assert step.value == 42 and len(step.turns) == 2
    with pytest.raises(ptc.AgentError, match="holds no run `r2` to resume"):
        resumed.run(checkpoint=checkpoint, run_id="r2", resume=True)
    sqlite = ptc.Agent("Add", llm=scripted(clojure("(return 1)"))).run(checkpoint=tmp_path / "runs.db")
    assert sqlite.value == 1


class OpenAiServer(http.server.BaseHTTPRequestHandler):
    """Answers chat completions with a fixed program, as an OpenAI-compatible server would."""

    requests = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        OpenAiServer.requests.append(body)
        answer = json.dumps({
            "id": "1", "object": "chat.completion", "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": clojure("(return (* 6 7))")}}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


def test_a_model_spec_reaches_an_openai_compatible_server():
    server = http.server.HTTPServer(("127.0.0.1", 0), OpenAiServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/v1"
        step = ptc.Agent("Multiply", llm=f"openai-compatible:{url}:tiny").run()
    finally:
        server.shutdown()
    assert step.value == 42
    assert OpenAiServer.requests[0]["model"] == "tiny"
    assert step.usage["tokens"]["input_tokens"] == 11


def test_mcp_servers_tools_are_the_agents_tools():
    command = f"{sys.executable} {HERE / 'mcp_server.py'}"
    with ptc.Agent("Add", llm=scripted(clojure("(return (:sum (tool/add 1 2)))")), mcp=[command]) as agent:
        assert agent.tool_names == ["add"]
        step = agent.run()
    assert step.value == 3, step.reason
    with pytest.raises(ptc.AgentError):
        ptc.Agent("x", llm=scripted(), mcp=["/no/such/server"])
