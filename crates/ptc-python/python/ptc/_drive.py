"""Answering a suspended run's tool calls with Python functions, on an event loop."""

from __future__ import annotations

import asyncio
import inspect
import logging
import math
import queue
import time
from typing import Any, Awaitable, Callable, Dict, List, Optional, Sequence, Tuple, Union

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

# Events a run hands its driver that ask for no answer.
_NOTICES = ("turn", "log")


def _start_agent(
    agent: Any, deliver: Callable[[Any], None], data: Any, checkpoint: Any, run_id: str, resume: bool
) -> Any:
    return agent._start(deliver, data, checkpoint, run_id, resume, _LOGGER.getEffectiveLevel())


def _notice(event: Any) -> Any:
    """Logs a ``log`` event; calls ``on_turn`` for a ``turn`` event and returns what it
    returned (an awaitable, for an ``async def`` one)."""
    if event[0] == "log":
        _LOGGER.log(event[1], event[2])
        return None
    return event[1](event[2])


def _outcome(result: Any) -> Any:
    if isinstance(result, BaseException):
        raise result
    return result


def run_agent(agent: Any, data: Any, checkpoint: Any, run_id: str, resume: bool) -> Any:
    """Runs ``agent``, calling the model's and the tools' functions on this thread as the run
    asks for them."""
    events: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
    handle = _start_agent(agent, events.put, data, checkpoint, run_id, resume)
    try:
        while True:
            try:
                # In slices, so that Ctrl-C is seen while the run waits for a model.
                event = events.get(timeout=0.1)
            except queue.Empty:
                continue
            kind = event[0]
            if kind == "done":
                return _outcome(event[1])
            if kind == "cancel":
                continue
            if kind in _NOTICES:
                result = _notice(event)
                if inspect.isawaitable(result):
                    ok, error = await_all([result], math.inf)[0]
                    if not ok:
                        raise error
                continue
            _, _, function, payload, responder = event
            ok, value = _call_now(function, _arguments(kind, payload))
            if ok:
                responder.ok(value)
            else:
                responder.error(value)
    except BaseException:
        handle.stop()
        _wait_for_end(events)
        raise


def _wait_for_end(events: "queue.SimpleQueue[Any]") -> None:
    """Waits (a few seconds at most) for a stopped run to end, answering nothing, so that
    its checkpoint is complete when the caller goes on."""
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        try:
            event = events.get(timeout=0.05)
        except queue.Empty:
            continue
        if event[0] == "done":
            return
        if event[0] == "log":
            _notice(event)
        elif event[0] not in ("cancel", "turn"):
            event[-1].error("the run was stopped")


def _arguments(kind: str, payload: Any) -> Any:
    """A tool's arguments as they are (or the error of converting them); a model's one
    argument, the messages."""
    return payload if kind == "tool" or isinstance(payload, BaseException) else [payload]


def _call_now(function: Callable[..., Any], args: Any) -> Settled:
    if isinstance(args, BaseException):
        return False, args
    try:
        result = function(*args)
    except Exception as error:
        return False, error
    if inspect.isawaitable(result):
        return await_all([result], math.inf)[0]
    return True, result


async def run_agent_async(agent: Any, data: Any, checkpoint: Any, run_id: str, resume: bool) -> Any:
    """Runs ``agent`` on the running event loop, awaiting the model's and the tools' functions
    there (calls the run makes at once, concurrently)."""
    loop = asyncio.get_running_loop()
    events: "asyncio.Queue[Any]" = asyncio.Queue()

    def deliver(event: Any) -> None:
        loop.call_soon_threadsafe(events.put_nowait, event)

    handle = _start_agent(agent, deliver, data, checkpoint, run_id, resume)
    tasks: Dict[int, "asyncio.Task[None]"] = {}

    async def answer(function: Callable[..., Any], args: Any, responder: Any) -> None:
        if isinstance(args, BaseException):
            responder.error(args)
            return
        try:
            result = function(*args)
            if inspect.isawaitable(result):
                result = await result
        except Exception as error:
            responder.error(error)
            return
        responder.ok(result)

    try:
        while True:
            event = await events.get()
            kind = event[0]
            if kind == "done":
                return _outcome(event[1])
            if kind == "cancel":
                task = tasks.pop(event[1], None)
                if task is not None:
                    task.cancel()
                continue
            if kind in _NOTICES:
                result = _notice(event)
                if inspect.isawaitable(result):
                    await result
                continue
            _, request_id, function, payload, responder = event
            task = loop.create_task(answer(function, _arguments(kind, payload), responder))
            tasks[request_id] = task

            def forget(_: "asyncio.Task[None]", request_id: int = request_id) -> None:
                tasks.pop(request_id, None)

            task.add_done_callback(forget)
    except BaseException:
        handle.stop()
        for task in tasks.values():
            task.cancel()
        try:
            await asyncio.wait_for(_drain(events), 5.0)
        except BaseException:
            pass
        raise


async def _drain(events: "asyncio.Queue[Any]") -> None:
    """Waits for a stopped run's end, failing the calls it still makes."""
    while True:
        event = await events.get()
        if event[0] == "done":
            return
        if event[0] == "log":
            _notice(event)
        elif event[0] not in ("cancel", "turn"):
            event[-1].error("the run was stopped")
