"""start()/resume(): the host answers each tool call; run_async awaits coroutine tools."""

import asyncio
import signal
import threading
import time
import _thread

import pytest

import ptc


def test_start_hands_each_call_to_the_host():
    session = ptc.Session(tools=[ptc.Tool(name="fetch", params=["id"])])
    step = session.start("(def got (tool/fetch 1)) (+ (:n got) (tool/fetch 2))")
    assert isinstance(step, ptc.Suspended)
    assert (step.name, step.args, step.calls) == ("fetch", [1], [("fetch", [1])])
    step = step.resume({"n": 40})
    assert isinstance(step, ptc.Suspended)
    assert step.args == [2]
    result = step.resume(2)
    assert isinstance(result, ptc.Result)
    assert result.value == 42
    assert [c.args for c in result.tool_calls] == [[1], [2]]
    assert session["got"] == {"n": 40}


def test_a_program_that_calls_no_tool_finishes_at_start():
    result = ptc.Session(tools=[ptc.Tool(name="t")]).start("(+ 1 2)")
    assert isinstance(result, ptc.Result) and result.value == 3


def test_pmap_calls_wait_together_and_are_answered_in_order():
    step = ptc.Session(tools=[ptc.Tool(name="f")]).start("(pmap tool/f [1 2 3])")
    assert isinstance(step, ptc.Suspended)
    assert step.calls == [("f", [1]), ("f", [2]), ("f", [3])]
    for n in (1, 2):
        step = step.resume(n * 10)
        assert isinstance(step, ptc.Suspended)
        assert step.calls[0] == ("f", [n + 1])
    result = step.resume(30)
    assert isinstance(result, ptc.Result) and result.value == [10, 20, 30]


def test_resume_error_fails_the_call_and_an_answered_call_cannot_be_answered_again():
    step = ptc.Session(tools=[ptc.Tool(name="f")]).start(
        "(try (tool/f) (catch Exception e (ex-message e)))"
    )
    assert isinstance(step, ptc.Suspended)
    result = step.resume_error("the service is down")
    assert isinstance(result, ptc.Result)
    assert result.value == "tool/f failed: the service is down"
    with pytest.raises(RuntimeError, match="already answered"):
        step.resume(1)
    step = ptc.Session(tools=[ptc.Tool(name="f")]).start("(tool/f)")
    assert isinstance(step, ptc.Suspended)
    with pytest.raises(ptc.ProgramError) as raised:
        step.resume_error(KeyError("k"))
    assert raised.value.message == "tool/f failed: KeyError: 'k'"
    assert isinstance(raised.value.__cause__, KeyError)


def test_a_tool_without_a_function_in_run_is_a_clear_error():
    with pytest.raises(ptc.ProgramError, match="tool/f has no function to call"):
        ptc.run("(tool/f)", tools=[ptc.Tool(name="f")])


def test_run_async_awaits_the_calls_of_pmap_concurrently():
    # pmap runs up to eight calls at a time: the first eight are all awaited at once.
    started = 0
    in_flight = 0
    most_in_flight = 0
    eight_started = asyncio.Event()

    async def overlap(x):
        nonlocal started, in_flight, most_in_flight
        started += 1
        in_flight += 1
        most_in_flight = max(most_in_flight, in_flight)
        if started == 8:
            eight_started.set()
        await asyncio.wait_for(eight_started.wait(), 10)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return x

    async def main():
        return await ptc.run_async("(reduce + (pmap tool/overlap (range 20)))", tools=[overlap])

    assert asyncio.run(main()).value == sum(range(20))
    assert (started, most_in_flight) == (20, 8)


def test_run_async_runs_concurrently_with_other_runs():
    gate = asyncio.Event()

    async def opens(x):
        gate.set()
        return x

    async def waits(x):
        await asyncio.wait_for(gate.wait(), 10)
        return x

    async def main():
        tools = [opens, waits]
        return await asyncio.gather(
            ptc.run_async("(tool/waits 1)", tools=tools), ptc.run_async("(tool/opens 2)", tools=tools)
        )

    assert [r.value for r in asyncio.run(main())] == [1, 2]


def test_sync_and_async_tools_mix_in_run_async():
    async def main():
        return await ptc.Session(tools={"a": lambda: 1, "b": asyncio.sleep}).run_async("[(tool/a) (tool/b 0 2)]")

    assert asyncio.run(main()).value == [1, 2]


def test_a_coroutine_tool_that_never_finishes_is_cancelled_at_the_tool_timeout():
    cancelled = []

    async def hangs():
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    limits = ptc.Limits(tool_timeout=0.05)
    for runner in (lambda: ptc.run("(tool/hangs)", tools=[hangs], limits=limits),
                   lambda: asyncio.run(ptc.run_async("(tool/hangs)", tools=[hangs], limits=limits))):
        with pytest.raises(ptc.ProgramError) as raised:
            runner()
        assert raised.value.message == "tool/hangs failed: TimeoutError: no answer within 50 ms (the call was cancelled)"
    assert cancelled == [True, True]


def test_run_with_an_async_tool_inside_a_running_loop_says_to_use_run_async():
    async def tool():
        return 1

    async def main():
        return ptc.run("(tool/tool)", tools=[tool])

    with pytest.raises(RuntimeError, match="use await session.run_async"):
        asyncio.run(main())


def test_cancelling_run_async_ends_the_run():
    async def hangs():
        await asyncio.Event().wait()

    async def main():
        task = asyncio.ensure_future(ptc.run_async("(tool/hangs)", tools=[hangs]))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


@pytest.fixture
def sigint_raises():
    """Ctrl-C raising KeyboardInterrupt, as in an interactive Python: a process started in the
    background by a shell inherits SIGINT ignored, and then `interrupt_main` does nothing."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def interrupt_soon():
    timer = threading.Timer(0.2, _thread.interrupt_main)
    timer.start()
    return timer


def test_keyboard_interrupt_stops_a_running_program(sigint_raises):
    timer = interrupt_soon()
    with pytest.raises(KeyboardInterrupt):
        ptc.run("(loop [i 0] (recur (inc i)))", limits={"timeout": 60, "max_steps": 10**15})
    timer.join()


def test_keyboard_interrupt_in_a_tool_stops_the_run():
    def interrupted():
        raise KeyboardInterrupt

    session = ptc.Session(tools=[interrupted])
    with pytest.raises(KeyboardInterrupt):
        session.run("(try (tool/interrupted) (catch Exception e :caught))")
    # The session still works.
    assert session.run("(+ 1 1)").value == 2


def test_keyboard_interrupt_in_a_tool_session_stops_the_computation(sigint_raises):
    timer = interrupt_soon()
    with pytest.raises(KeyboardInterrupt):
        ptc.run("(tool/t) (loop [i 0] (recur (inc i)))", tools={"t": lambda: 1},
                limits={"timeout": 60, "max_steps": 10**15})
    timer.join()


def test_a_rust_panic_becomes_a_python_exception():
    from ptc import _ptc

    with pytest.raises(BaseException) as raised:
        _ptc._panic("a bug")
    assert type(raised.value).__name__ == "PanicException"
    assert "a bug" in str(raised.value)



def test_a_thousand_concurrent_runs_with_a_one_second_async_tool_take_under_three_seconds():
    async def slow(x):
        await asyncio.sleep(1.0)
        return 2 * x

    async def main():
        started = time.perf_counter()
        results = await asyncio.gather(
            *(ptc.run_async(f"(+ 1 (tool/slow {i}))", tools={"slow": slow}) for i in range(1000))
        )
        return [r.value for r in results], time.perf_counter() - started

    values, elapsed = asyncio.run(main())
    assert values == [2 * i + 1 for i in range(1000)]
    assert 1.0 <= elapsed < 3.0


def test_the_gil_is_released_while_a_program_evaluates():
    # A program that evaluates for about half a second in another thread: this thread keeps
    # running Python meanwhile, at its own pace.
    program = "(loop [i 0] (recur (inc i)))"
    done = threading.Event()
    outcome = []

    def evaluate():
        try:
            ptc.run(program, limits={"timeout": 0.5, "max_steps": 10**15})
        except ptc.LimitError as error:
            outcome.append(error.kind)
        done.set()

    worker = threading.Thread(target=evaluate)
    ticks = [time.perf_counter()]
    worker.start()
    while not done.is_set():
        time.sleep(0.005)
        ticks.append(time.perf_counter())
    worker.join()
    assert outcome == ["timeout"]
    assert ticks[-1] - ticks[0] >= 0.5
    # Held for the run, the GIL would stop this thread for the whole half second.
    assert max(b - a for a, b in zip(ticks, ticks[1:])) < 0.25
