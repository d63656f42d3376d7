"""ptc.Agent: a model as a spec or a Python function, Python and MCP tools, Steps, checkpoints."""

import asyncio
import http.server
import json
import logging
import pathlib
import sys
import threading
from typing import List, Optional

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
    headers = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        OpenAiServer.requests.append(body)
        OpenAiServer.headers.append(dict(self.headers.items()))
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


def test_headers_reach_the_model_server_and_bad_ones_are_refused():
    server = http.server.HTTPServer(("127.0.0.1", 0), OpenAiServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    OpenAiServer.headers.clear()
    try:
        url = f"http://127.0.0.1:{server.server_port}/v1"
        step = ptc.Agent("Multiply", llm=f"openai-compatible:{url}:tiny",
                         headers={"X-Title": "Weekly report", "api-key": "gateway-key"}).run()
    finally:
        server.shutdown()
    assert step.value == 42
    received = {name.lower(): value for name, value in OpenAiServer.headers[0].items()}
    assert (received["x-title"], received["api-key"]) == ("Weekly report", "gateway-key")
    with pytest.raises(ptc.AgentError, match="`X Title` is not a valid HTTP header name"):
        ptc.Agent("Multiply", llm=f"openai-compatible:{url}:tiny", headers={"X Title": "a"})


def test_mcp_servers_tools_are_the_agents_tools():
    command = f"{sys.executable} {HERE / 'mcp_server.py'}"
    with ptc.Agent("Add", llm=scripted(clojure("(return (:sum (tool/add 1 2)))")), mcp=[command]) as agent:
        assert agent.tool_names == ["add"]
        step = agent.run()
    assert step.value == 3, step.reason
    with pytest.raises(ptc.AgentError):
        ptc.Agent("x", llm=scripted(), mcp=["/no/such/server"])


def get_orders(customer_id: str, limit: int = 10, status: Optional[str] = None) -> List[dict]:
    """Orders of one customer, newest first.

    Args:
        customer_id: The customer's id, e.g. "c-17".
        limit (int): At most this many orders.
            Counted after filtering.
        status: Only orders in this status.

    Returns:
        The orders.
    """
    return [{"customer": customer_id, "limit": limit, "status": status}]


def test_a_tool_is_described_from_its_type_hints_and_docstring():
    tool = ptc.Tool(get_orders)
    assert tool.signature == "(customer_id :string, limit :int?, status :string?) -> [:map]"
    assert tool.description == (
        'Orders of one customer, newest first. Parameters: customer_id: The customer\'s id, e.g. '
        '"c-17"; limit: At most this many orders. Counted after filtering (default 10); status: '
        "Only orders in this status (default nil)."
    )
    assert tool.schema == {
        "type": "object",
        "properties": {
            "customer_id": {"type": "string", "description": 'The customer\'s id, e.g. "c-17".'},
            "limit": {"type": "integer", "default": 10,
                      "description": "At most this many orders. Counted after filtering."},
            "status": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None,
                       "description": "Only orders in this status."},
        },
        "required": ["customer_id"],
    }
    llm = scripted(clojure("(return [(tool/get_orders {:customer_id \"c1\" :limit 5})"
                           " (tool/get_orders \"c2\")])"))
    step = ptc.Agent("Orders", llm=llm, tools=[get_orders]).run()
    # What the model read, and a map bound by parameter name like a positional call.
    assert ("(tool/get_orders customer_id limit status) ; "
            "(customer_id :string, limit :int?, status :string?) -> [:map]") in llm.sent[0][1]["content"]
    assert "Counted after filtering (default 10)" in llm.sent[0][1]["content"]
    assert step.value == [[{"customer": "c1", "limit": 5, "status": None}],
                          [{"customer": "c2", "limit": 10, "status": None}]]


def test_numpy_docstrings_and_maps_that_are_not_arguments():
    def total(prices: "list[float]", rate: float = 0.0) -> float:
        """The sum of prices with a rate added.

        Parameters
        ----------
        prices : list of float
            The prices.
        rate : float
            Added to each,
            as a fraction.
        """
        return sum(p * (1 + rate) for p in prices)

    def count_keys(record: dict) -> int:
        """How many keys a record has."""
        return len(record)

    def echo(x):
        return x

    tool = ptc.Tool(total)
    assert tool.signature == "(prices [:float], rate :float?) -> :float"
    assert tool.description == ("The sum of prices with a rate added. Parameters: prices: The "
                                "prices; rate: Added to each, as a fraction (default 0.0).")
    assert ptc.Tool(echo).signature is None and ptc.Tool(echo).description == ""
    result = ptc.run(
        "[(tool/total {:prices [1.0 2.0] :rate 0.5}) (tool/count_keys {:record 1 :other 2})"
        " (tool/echo {:y 1}) (tool/echo {:x 1})]",
        tools=[total, count_keys, echo])
    # A map whose keys are not all parameter names, or for a function of one dict, is the
    # argument itself.
    assert result.value == [4.5, 2, {"y": 1}, 1]


def test_run_options_reach_the_model_and_ptc_request_timeout_is_honoured(monkeypatch):
    import socket

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
    try:
        step = ptc.Agent("Say hello", llm=f"openai-compatible:{url}:tiny", request_timeout=0.5,
                         retries=0).run()
        assert (step.failure_kind, step.usage["llm_requests"]) == ("llm_error", 1)
        assert step.reason.endswith(
            f"did not answer within 0.5 s; raise the request timeout if the model is slow")
        monkeypatch.setenv("PTC_REQUEST_TIMEOUT", "700ms")
        monkeypatch.setenv("PTC_RETRIES", "1")
        step = ptc.Agent("Say hello", llm=f"openai-compatible:{url}:tiny").run()
        assert (step.failure_kind, step.usage["llm_requests"]) == ("llm_error", 2)
        assert "did not answer within 0.7 s" in step.reason
        monkeypatch.setenv("PTC_REQUEST_TIMEOUT", "soon")
        with pytest.raises(ptc.AgentError, match="PTC_REQUEST_TIMEOUT=soon is not a duration"):
            ptc.Agent("Say hello", llm=f"openai-compatible:{url}:tiny")
    finally:
        silent.close()
        monkeypatch.delenv("PTC_REQUEST_TIMEOUT")
        monkeypatch.delenv("PTC_RETRIES")
    OpenAiServer.requests.clear()
    server = http.server.HTTPServer(("127.0.0.1", 0), OpenAiServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/v1"
        step = ptc.Agent("Multiply", llm=f"openai-compatible:{url}:tiny", temperature=0.25,
                         max_tokens=321, deadline=60).run()
    finally:
        server.shutdown()
    assert step.value == 42
    sent = OpenAiServer.requests[0]
    assert (sent["temperature"], sent.get("max_tokens", sent.get("max_completion_tokens"))) == (0.25, 321)
    with pytest.raises(ValueError, match="deadline must be a number of seconds"):
        ptc.Agent("x", llm=scripted(), deadline=-1)


DURATION = r"[0-9.]+ (µs|ms|s)"


def test_on_turn_is_called_with_each_turn_before_the_next_request():
    happened = []
    replies = [clojure('(println "hi")'), clojure("(+ 1 :a)"), clojure("(return 3)")]

    def llm(messages):
        happened.append("request")
        return replies[sum(1 for h in happened if h == "request") - 1]

    def on_turn(turn):
        assert isinstance(turn, ptc.Turn)
        happened.append((turn.number, turn.program, turn.prints, turn.error,
                         turn.usage["llm_requests"], sorted(turn.usage)))

    step = ptc.Agent("Add", llm=llm, on_turn=on_turn).run()
    assert step.value == 3
    usage_keys = ["duration_us", "eval_duration_us", "llm_duration_us", "llm_requests"]
    assert happened == [
        "request",
        (1, '(println "hi")', ["hi"], None, 1, usage_keys),
        "request",
        (2, "(+ 1 :a)", [], {"kind": "type", "message": "+ expects numbers, got keyword :a",
                             "line": 1, "column": 1}, 1, usage_keys),
        "request",
        (3, "(return 3)", [], None, 1, usage_keys),
    ]
    assert sum(t.usage["llm_requests"] for t in step.turns) == step.usage["llm_requests"] == 3
    with pytest.raises(TypeError, match="on_turn must be a function of a ptc.Turn, got int"):
        ptc.Agent("x", llm=llm, on_turn=3)  # type: ignore[arg-type]


def test_an_exception_in_on_turn_stops_the_run_and_is_raised():
    def on_turn(turn):
        raise RuntimeError(f"stop after turn {turn.number}")

    llm = scripted(clojure("(def x 1)"), clojure("(return x)"))
    with pytest.raises(RuntimeError, match="^stop after turn 1$"):
        ptc.Agent("x", llm=llm, on_turn=on_turn).run()
    assert len(llm.sent) == 1


def test_on_turn_may_be_async_under_run_async():
    seen = []

    async def on_turn(turn):
        await asyncio.sleep(0)
        seen.append((turn.number, turn.program))

    async def main():
        agent = ptc.Agent("x", llm=scripted(clojure("(def x 1)"), clojure("(return x)")), on_turn=on_turn)
        return await agent.run_async()

    assert asyncio.run(main()).value == 1
    assert seen == [(1, "(def x 1)"), (2, "(return x)")]


def ptc_records(caplog):
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "ptc"]


def test_each_turn_is_logged_at_info_on_the_ptc_logger(caplog):
    import re

    caplog.set_level(logging.INFO, logger="ptc")
    llm = scripted(clojure("(+ 1 :a)"), clojure("(return 3)"))
    assert ptc.Agent("Add", llm=llm).run().value == 3
    records = ptc_records(caplog)
    assert [level for level, _ in records] == ["INFO", "INFO"]
    assert re.fullmatch(rf"turn 1 of 5: error\[type\]; 0 tokens in, 0 out; {DURATION} "
                        rf"\(model {DURATION}, program {DURATION}\)", records[0][1]), records[0][1]
    assert re.fullmatch(rf"turn 2 of 5: ok; 0 tokens in, 0 out; {DURATION} "
                        rf"\(model {DURATION}, program {DURATION}\)", records[1][1]), records[1][1]
    caplog.clear()
    caplog.set_level(logging.WARNING, logger="ptc")
    assert ptc.Agent("Add", llm=scripted(clojure("(return 3)"))).run().value == 3
    assert ptc_records(caplog) == []


class RateLimitedOnce(http.server.BaseHTTPRequestHandler):
    """Answers the first request with 429 (retry at once), the others with a program."""

    requests = 0

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        RateLimitedOnce.requests += 1
        if RateLimitedOnce.requests == 1:
            answer = b'{"error": {"message": "slow down"}}'
            self.send_response(429)
            self.send_header("Retry-After", "0")
        else:
            answer = json.dumps({
                "id": "1", "object": "chat.completion", "model": "tiny",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": clojure("(return 42)")}}],
                "usage": {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16},
            }).encode()
            self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


def test_retries_are_logged_at_warning(caplog):
    import re

    caplog.set_level(logging.WARNING, logger="ptc")
    server = http.server.HTTPServer(("127.0.0.1", 0), RateLimitedOnce)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    spec = f"openai-compatible:http://127.0.0.1:{server.server_port}/v1:tiny"
    try:
        step = ptc.Agent("Multiply", llm=spec).run()
    finally:
        server.shutdown()
    assert step.value == 42
    assert ptc_records(caplog) == [(
        "WARNING",
        f"model call attempt 1 of 4 failed: {spec} is rate limiting requests (HTTP 429): slow "
        "down; wait, or lower the request rate; retrying in 0 µs",
    )]
    caplog.clear()
    caplog.set_level(logging.INFO, logger="ptc")
    server = http.server.HTTPServer(("127.0.0.1", 0), RateLimitedOnce)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        assert ptc.Agent("Multiply", llm=f"openai-compatible:http://127.0.0.1:{server.server_port}/v1:tiny").run().value == 42
    finally:
        server.shutdown()
    assert [level for level, _ in ptc_records(caplog)] == ["INFO", "INFO"]
    assert re.fullmatch(rf"model call completed in {DURATION}", ptc_records(caplog)[0][1])
    assert re.fullmatch(rf"turn 1 of 5: ok; 11 tokens in, 5 out; {DURATION} "
                        rf"\(model {DURATION}, program {DURATION}\)", ptc_records(caplog)[1][1])


def test_a_model_that_does_not_answer_is_reported_within_ten_seconds(caplog):
    import socket

    caplog.set_level(logging.INFO, logger="ptc")
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    spec = f"openai-compatible:http://127.0.0.1:{silent.getsockname()[1]}/v1:tiny"
    try:
        step = ptc.Agent("Say hello", llm=spec, request_timeout=10.5, retries=0).run()
    finally:
        silent.close()
    assert step.failure_kind == "llm_error"
    records = ptc_records(caplog)
    assert records[0] == ("INFO", "waiting for the model: 10 s (attempt 1; abandoned at 10 s)")
    assert records[1:] == [(
        "WARNING",
        f"model call attempt 1 of 1 failed: {spec} did not answer within 10.5 s; raise the "
        "request timeout if the model is slow",
    )]


def test_a_scripted_model_answers_in_turn_and_keeps_the_requests():
    model = ptc.Scripted([clojure("(def x 1)")])
    step = ptc.Agent("Count", llm=model).run()
    assert (step.failure_kind, len(step.turns)) == ("llm_error", 1)
    assert step.reason.endswith("LookupError: the script's 1 replies are used up; request 2 has none")
    assert [[m["role"] for m in r] for r in model.requests] == [
        ["system", "user"], ["system", "user", "assistant", "user"]]
    assert model.requests[1][2]["content"] == clojure("(def x 1)")
    assert repr(model) == "<Scripted: 1 replies, 2 requests>"


def test_trace_keeps_the_turns_of_the_steps_it_names():
    returned = (clojure("(def xs [1 2 3])"), clojure("(return (reduce + xs))"))
    failed = (clojure("(def xs [1 2 3])"), clojure('(fail "no")'))
    kept = []
    for trace in (True, False, "on_error"):
        for replies in (returned, failed):
            step = ptc.Agent("Add up", llm=scripted(*replies), trace=trace).run()
            kept.append((step.success, len(step.turns), step.usage["llm_requests"]))
    assert kept == [
        (True, 2, 2), (False, 2, 2),
        (True, 0, 2), (False, 0, 2),
        (True, 0, 2), (False, 2, 2),
    ]
    with pytest.raises(ValueError) as error:
        ptc.Agent("Add up", llm=scripted(), trace="sometimes")
    assert str(error.value) == "`sometimes` is not a trace mode; write always, never or on-error"


def test_prompt_limit_cuts_the_system_prompt_with_a_note():
    model = scripted(clojure("(return 1)"))
    ptc.Agent("One", llm=model, prompt_limit={"max_chars": 40}).run()
    assert model.sent[0][0]["content"] == (
        "You solve tasks by writing PTC-Lisp prog\n\n[System prompt cut to its first 40 of "
        "4549 characters by its size limit; the rest was left out.]")
    model = scripted(clojure("(return 1)"))
    ptc.Agent("One", llm=model).run()
    assert len(model.sent[0][0]["content"]) == 4549
    with pytest.raises(TypeError) as error:
        ptc.Agent("One", llm=model, prompt_limit={"chars": 40})
    assert str(error.value) == (
        "prompt_limit must be a number of characters or {\"max_chars\": N}, got {'chars': 40}")


def test_usage_gives_the_system_prompt_the_memory_kept_and_the_compression():
    model = scripted(
        clojure("(def xs [1 2 3])\n(println (count xs))"),
        clojure("(def total (reduce + xs))"),
        clojure("(return total)"))
    step = ptc.Agent("Add up", llm=model, compression="single-user-coalesced", trace=False).run()
    usage = step.usage
    compression = usage.pop("compression")
    durations = [usage.pop(k) for k in ("duration_us", "llm_duration_us", "eval_duration_us")
                 if k in usage]
    assert all(isinstance(d, int) for d in durations)
    assert usage == {
        "llm_requests": 3,
        "system_prompt_chars": 4428,
        "system_prompt_tokens": 1107,
        "definitions_kept": 2,
        "memory_kept_bytes": 80,
    }
    assert (compression["strategy"], compression["compressed"], compression["turns"],
            compression["turns_compressed"], compression["prints_shown"]) == (
        "single-user-coalesced", True, 2, 2, 1)
    assert step.turns == []
    assert len(model.sent[0][0]["content"]) == 4428


def test_the_deadline_cuts_off_the_model_function_the_run_waits_for(caplog):
    import time

    caplog.set_level(logging.WARNING, logger="ptc")

    async def hangs(messages):
        await asyncio.sleep(30)
        return clojure("(return 1)")

    async def main():
        return await ptc.Agent("Wait", llm=hangs, deadline=0.2).run_async()

    started = time.monotonic()
    step = asyncio.run(main())
    assert time.monotonic() - started < 10
    assert (step.failure_kind, step.reason, step.usage["llm_requests"], step.turns) == (
        "timeout", "the run did not finish within its deadline of 200 ms; turn 1 was cut off", 1, [])
    assert ptc_records(caplog) == [("WARNING", "the run's deadline of 200 ms passed during turn 1")]

    def slow(messages):
        time.sleep(0.3)
        return clojure("(return 1)")

    step = ptc.Agent("Wait", llm=slow, deadline=0.2).run()
    assert (step.failure_kind, step.reason) == (
        "timeout", "the run did not finish within its deadline of 200 ms; turn 1 was cut off")


def test_run_async_awaits_a_model_named_by_its_spec_and_mcp_servers_tools():
    server = http.server.HTTPServer(("127.0.0.1", 0), OpenAiServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    command = f"{sys.executable} {HERE / 'mcp_server.py'}"

    async def main():
        url = f"http://127.0.0.1:{server.server_port}/v1"
        by_spec = ptc.Agent("Multiply", llm=f"openai-compatible:{url}:tiny")
        def double(x):
            return 2 * x

        # The MCP server's call and the Python function's, made at once.
        program = "(return (vec (pcalls #(:sum (tool/add 1 2)) #(tool/double 4))))"
        with ptc.Agent("Add", llm=scripted(clojure(program)), tools=[double],
                       mcp=[command]) as with_mcp:
            return await asyncio.gather(by_spec.run_async(), with_mcp.run_async())

    try:
        multiplied, added = asyncio.run(main())
    finally:
        server.shutdown()
    assert (multiplied.value, multiplied.usage["tokens"]["input_tokens"]) == (42, 11)
    assert (added.value, [c.name for c in added.turns[0].tool_calls]) == ([3, 8], ["add", "double"])
