"""The Python loops that drive runs: a suspended program's tool calls answered with Python
functions (on an event loop, for ``run_async``), and an agent's runs advanced step by step, its
model's and tools' functions called (or awaited) on the thread (or event loop) driving them."""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import math
import time
from typing import Any, Awaitable, Callable, List, Optional, Sequence, Tuple, Union

from ._ptc import Result, Session, Suspended

Settled = Tuple[bool, Any]


def _no_answer(timeout: float) -> TimeoutError:
    return TimeoutError(f"no answer within {timeout * 1000:.0f} ms (the call was cancelled)")


async def _settle_awaitable(awaitable: Awaitable[Any], timeout: float) -> Settled:
    try:
        if math.isinf(timeout):
            return True, await awaitable
        return True, await asyncio.wait_for(awaitable, timeout)
    except asyncio.TimeoutError:
        return False, _no_answer(timeout)
    except Exception as error:  # the tool's failure, which the program sees
        return False, error


async def _settle_call(
    name: str,
    function: Optional[Callable[..., Any]],
    args: Union[List[Any], BaseException],
    timeout: float,
) -> Settled:
    if isinstance(args, BaseException):
        return False, args
    if function is None:
        return False, LookupError(
            f"tool/{name} has no function to call: give it one, or answer its calls with "
            "start() and resume()"
        )
    try:
        result = function(*args)
    except Exception as error:
        return False, error
    if inspect.isawaitable(result):
        return await _settle_awaitable(result, timeout)
    return True, result


def await_all(awaitables: Sequence[Awaitable[Any]], timeout: float) -> List[Settled]:
    """Awaits the coroutines of ``async def`` tools called by ``run()`` together, on an event
    loop of their own, each within ``timeout`` seconds."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        for awaitable in awaitables:
            close = getattr(awaitable, "close", None)
            if close is not None:
                close()
        raise RuntimeError(
            "an async def tool was called by run() while an event loop runs in this thread: "
            "use await session.run_async(...) (or ptc.run_async) instead"
        )

    async def settle() -> List[Settled]:
        return list(await asyncio.gather(*(_settle_awaitable(a, timeout) for a in awaitables)))

    return asyncio.run(settle())


async def run_async(session: Session, program: str) -> Result:
    """Runs ``program`` in ``session``, awaiting the calls it makes at once concurrently."""
    step: Union[Result, Suspended] = session.start(program)
    while isinstance(step, Suspended):
        tasks = [
            asyncio.ensure_future(_settle_call(name, function, args, timeout))
            for name, function, args, timeout in step._pending()
        ]
        try:
            outcomes = await asyncio.gather(*tasks)
        except BaseException:
            # Cancelled (or interrupted): stop the calls; dropping the run ends it.
            for task in tasks:
                task.cancel()
            raise
        for ok, payload in outcomes:
            if not isinstance(step, Suspended):
                raise RuntimeError("the run ended before every call it made was answered")
            step = step.resume(payload) if ok else step.resume_error(payload)
    return step


_LOGGER = logging.getLogger("ptc")

# A reply or a tool's answer for an agent run: (ok, value, seconds), ok None for a call given
# up at its timeout; or "deadline", for a wait the run's deadline ended.
Answer = Union[Tuple[Optional[bool], Any, float], str]


def _open(agent: Any, data: Any, checkpoint: Any, run_id: str, resume: bool, waker: Any) -> Any:
    return agent._open(data, checkpoint, run_id, resume, _LOGGER.getEffectiveLevel(), waker)


def _log(run: Any) -> None:
    """Logs what the run logged since it was last asked, on the ``ptc`` logger."""
    for level, message in run._logs():
        _LOGGER.log(level, message)


def _timed(function: Callable[..., Any], args: Any, timeout: float) -> Answer:
    """Calls ``function`` now (awaiting a coroutine on an event loop of its own, within
    ``timeout`` seconds), and says how long it took."""
    started = time.monotonic()
    if isinstance(args, BaseException):
        return False, args, 0.0
    try:
        result = function(*args)
    except Exception as error:
        return False, error, time.monotonic() - started
    if inspect.isawaitable(result):
        ok, result = await_all([result], timeout)[0]
        return ok, result, time.monotonic() - started
    return True, result, time.monotonic() - started


def run_agent(agent: Any, data: Any, checkpoint: Any, run_id: str, resume: bool) -> Any:
    """Runs ``agent``, advancing its run and calling the model's and the tools' functions on
    this thread as the run asks for them."""
    run = _open(agent, data, checkpoint, run_id, resume, None)
    answer: Any = None
    try:
        while True:
            request = run.step(answer)
            _log(run)
            kind = request[0]
            if kind == "done":
                return request[1]
            if kind == "llm":
                answer = _timed(request[1], [request[2]], math.inf)
            elif kind == "tools":
                answer = [_timed(function, args, timeout) for _, function, args, timeout in request[1]]
            else:  # "turn", for on_turn
                answer = None
                result = request[1](request[2])
                if inspect.isawaitable(result):
                    ok, error = await_all([result], math.inf)[0]
                    if not ok:
                        raise error
    except BaseException:
        # Ctrl-C, or on_turn raised: the run ends interrupted (and stays resumable).
        run.stop()
        _log(run)
        raise


async def _model_reply(function: Callable[..., Any], messages: Any, remaining: Optional[float]) -> Answer:
    started = time.monotonic()
    try:
        result = function(messages)
        if inspect.isawaitable(result):
            result = await (result if remaining is None else asyncio.wait_for(result, remaining))
    except asyncio.TimeoutError as error:
        if remaining is not None and time.monotonic() - started >= remaining:
            return "deadline"
        return False, error, time.monotonic() - started
    except Exception as error:
        return False, error, time.monotonic() - started
    return True, result, time.monotonic() - started


async def _tool_answer(function: Callable[..., Any], args: Any, timeout: float) -> Answer:
    started = time.monotonic()
    if isinstance(args, BaseException):
        return False, args, 0.0
    try:
        result = function(*args)
        if inspect.isawaitable(result):
            if math.isinf(timeout):
                result = await result
            else:
                try:
                    result = await asyncio.wait_for(result, timeout)
                except asyncio.TimeoutError:
                    if time.monotonic() - started < timeout:
                        raise
                    return None, None, time.monotonic() - started
    except Exception as error:
        return False, error, time.monotonic() - started
    return True, result, time.monotonic() - started


async def run_agent_async(agent: Any, data: Any, checkpoint: Any, run_id: str, resume: bool) -> Any:
    """Runs ``agent`` on the running event loop, advancing its run and awaiting the model's
    and the tools' functions there (calls the run makes at once, concurrently)."""
    loop = asyncio.get_running_loop()
    woken = asyncio.Event()
    run = _open(agent, data, checkpoint, run_id, resume, functools.partial(loop.call_soon_threadsafe, woken.set))
    answer: Any = None
    tasks: List["asyncio.Future[Answer]"] = []
    try:
        while True:
            request = run.step(answer)
            _log(run)
            kind = request[0]
            answer = None
            if kind == "done":
                return request[1]
            if kind == "wait":
                # For the runtime: a model named by its spec, MCP servers' tools.
                await woken.wait()
                woken.clear()
            elif kind == "llm":
                answer = await _model_reply(request[1], request[2], request[3])
            elif kind == "tools":
                tasks = [asyncio.ensure_future(_tool_answer(function, args, timeout))
                         for _, function, args, timeout in request[1]]
                remaining = request[2]
                try:
                    answer = await asyncio.wait_for(asyncio.gather(*tasks), remaining)
                except asyncio.TimeoutError:
                    answer = "deadline"
                answer = answer if isinstance(answer, str) else list(answer)
                tasks = []
            else:  # "turn", for on_turn
                result = request[1](request[2])
                if inspect.isawaitable(result):
                    await result
    except BaseException:
        # Cancelled, or on_turn raised: the calls in flight stop, and the run ends interrupted
        # (and stays resumable).
        for task in tasks:
            task.cancel()
        run.stop()
        _log(run)
        raise
