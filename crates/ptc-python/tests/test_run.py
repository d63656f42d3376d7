"""ptc.run and ptc.Session: values, prints, tool calls, errors, limits, the namespace."""

import pytest

import ptc


def test_run_returns_the_value_prints_and_tool_calls():
    def get_user(user_id):
        """A user by id."""
        return {"id": user_id, "name": "Ada"}

    result = ptc.run(
        '(println "looking up" data/id) (:name (tool/get_user data/id))',
        data={"id": 7},
        tools=[get_user],
    )
    assert result.value == "Ada"
    assert result.prints == ["looking up 7"]
    assert not result.returned
    [call] = result.tool_calls
    assert (call.name, call.args, call.result, call.error) == ("get_user", [7], {"id": 7, "name": "Ada"}, None)
    assert call.duration >= 0
    assert ptc.run("(return 5) 6").returned


def test_errors_carry_kind_message_line_and_column():
    with pytest.raises(ptc.ProgramError) as caught:
        ptc.run('(println "a")\n  (+ 1 "x")')
    error = caught.value
    assert (error.kind, error.line, error.column) == ("type", 2, 3)
    assert error.message.startswith("+ expects numbers")
    assert str(error) == f"error[type] 2:3: {error.message}"
    assert error.prints == ["a"]
    assert not isinstance(error, ptc.LimitError)

    with pytest.raises(ptc.ProgramError) as caught:
        ptc.run("(foo 1)")
    assert caught.value.kind == "undefined_symbol"

    with pytest.raises(ptc.ProgramError) as caught:
        ptc.run("(+ 1 2")
    assert caught.value.kind == "parse"

    with pytest.raises(ptc.ProgramError) as caught:
        ptc.run('(throw (ex-info "no stock" {:sku "A1"}))')
    assert (caught.value.kind, caught.value.data) == ("thrown", {"sku": "A1"})


def test_fail_raises_program_failed_with_the_reason():
    with pytest.raises(ptc.ProgramFailed) as caught:
        ptc.run('(println "checking")\n(fail {:why "no data"})')
    failed = caught.value
    assert failed.reason == {"why": "no data"}
    assert (failed.line, failed.column) == (2, 1)
    assert failed.prints == ["checking"]
    assert str(failed) == 'the program failed: {:why "no data"}'


def test_limits_stop_programs_with_limit_errors():
    with pytest.raises(ptc.LimitError) as caught:
        ptc.run("(loop [i 0] (recur (inc i)))", limits=ptc.Limits(timeout=0.05))
    assert caught.value.kind == "timeout"
    with pytest.raises(ptc.LimitError) as caught:
        ptc.run("(loop [i 0] (recur (inc i)))", limits={"max_steps": 1000})
    assert caught.value.kind == "step_limit"
    with pytest.raises(ptc.LimitError) as caught:
        ptc.run("(defn f [n] (f (inc n))) (f 0)", limits={"max_call_depth": 50})
    assert caught.value.kind == "depth_limit"
    limits = ptc.Limits(timeout=2, tool_timeout=float("inf"), max_tool_calls=3)
    assert (limits.timeout, limits.tool_timeout, limits.max_tool_calls, limits.max_steps) == (2.0, float("inf"), 3, 50_000_000)
    assert repr(ptc.Limits()).startswith("Limits(timeout=1, max_steps=50000000")


def test_a_session_keeps_what_successful_programs_define():
    session = ptc.Session(data={"prices": [3, 10, 25]})
    session.run('(defn expensive? "Over ten" [p] (> p 10)) (def picked (filter expensive? data/prices))')
    assert session.run("(count picked)").value == 1
    assert session.names == ["expensive?", "picked"]
    assert session["picked"] == [25]
    assert "picked" in session and "other" not in session
    with pytest.raises(ptc.ProgramError):
        session.run("(def lost 1) (undefined-thing)")
    assert "lost" not in session
    with pytest.raises(ptc.ConversionError):
        session["expensive?"]
    session.reset()
    assert session.names == []


def test_tools_as_a_dict_and_as_tool_objects():
    tools = {
        "add": lambda a, b: a + b,
        "search": ptc.Tool(lambda q: [q], description="Searches", params=["query"]),
    }
    assert ptc.run("(tool/add 1 2)", tools=tools).value == 3
    assert ptc.run('(tool/search "x")', tools=tools).value == ["x"]
    tool = ptc.Tool(lambda q: q, name="find")
    assert (tool.name, tool.params, tool.description) == ("find", ["q"], "")


def test_a_tool_error_is_the_programs_to_catch_and_the_cause_of_the_error_that_ends_it():
    def broken(x):
        raise ValueError(f"bad {x}")

    caught = ptc.run("(try (tool/broken 1) (catch Exception e (ex-message e)))", tools=[broken])
    assert caught.value == "tool/broken failed: ValueError: bad 1"
    with pytest.raises(ptc.ProgramError) as raised:
        ptc.run("(tool/broken 2)", tools=[broken])
    assert raised.value.kind == "tool"
    assert raised.value.message == "tool/broken failed: ValueError: bad 2"
    assert isinstance(raised.value.__cause__, ValueError)
    [call] = raised.value.tool_calls
    assert call.error == "ValueError: bad 2"


def test_a_tool_that_returns_something_that_is_not_data():
    with pytest.raises(ptc.ProgramError) as raised:
        ptc.run("(tool/odd)", tools={"odd": lambda: object()})
    assert raised.value.message == (
        "tool/odd failed: it returned something that is not data: the value tool/odd returned: "
        "a object is not data: pass None, bool, int, float, str, dict, list, tuple, set, "
        "frozenset, Fraction, Decimal, date, datetime or UUID (convert other objects first, e.g. "
        "a dataclass with dataclasses.asdict)"
    )
    assert isinstance(raised.value.__cause__, ptc.ConversionError)


def test_pmap_calls_every_tool_and_keeps_the_order():
    seen = []

    def square(x):
        seen.append(x)
        return x * x

    assert ptc.run("(pmap tool/square [1 2 3 4])", tools=[square]).value == [1, 4, 9, 16]
    assert sorted(seen) == [1, 2, 3, 4]


def test_async_tools_in_run_are_awaited_on_a_loop_of_their_own():
    async def double(x):
        return 2 * x

    assert ptc.run("(reduce + (pmap tool/double [1 2 3]))", tools=[double]).value == 12


def test_wrong_arguments_are_python_errors():
    with pytest.raises(TypeError):
        ptc.run(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="data must be a dict of names to values, got list"):
        ptc.run("1", data=[1])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="data's keys name data/ values and must be str"):
        ptc.run("1", data={1: 2})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="limits must be a ptc.Limits or a dict"):
        ptc.run("1", limits=5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timeout must be a number of seconds, 0 or more"):
        ptc.Limits(timeout=-1)
    with pytest.raises(TypeError, match="tools must be a dict of names to functions"):
        ptc.run("1", tools="search")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="a tool needs a name"):
        ptc.run("1", tools=[lambda: 1])
    with pytest.raises(ValueError, match="two tools are named 'f'"):
        ptc.run("1", tools=[ptc.Tool(lambda: 1, name="f"), ptc.Tool(lambda: 2, name="f")])
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        ptc.Limits(time=1)  # type: ignore[call-arg]
