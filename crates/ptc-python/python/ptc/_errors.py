"""The exceptions of the ptc package."""

from __future__ import annotations

from typing import Any, Optional, Sequence


class PtcError(Exception):
    """The base of every exception the ptc package raises."""


class ConversionError(PtcError, TypeError):
    """A value that has no counterpart on the other side: a Python object that is not data,
    or a PTC-Lisp value (a function, a lazy sequence) that has no Python value. The message
    says where inside the value it is."""


class AgentError(PtcError):
    """An agent that cannot be built or cannot start a run: an unknown model spec, a tool
    signature that does not parse, an MCP server that cannot be reached, input data that does
    not match the signature, a checkpoint that cannot be resumed."""


class ProgramError(PtcError):
    """A program that could not be read, analysed or run.

    ``kind`` is the sandbox's stable error kind (``parse``, ``type``, ``undefined_symbol``,
    ``tool``, ``thrown``, ...), ``message`` what went wrong, written for the model that wrote
    the program; ``line`` and ``column`` (from 1) where, when known; ``data`` the map of an
    uncaught ``ex-info``; ``prints`` and ``tool_calls`` what the run did before it ended.
    """

    def __init__(
        self,
        kind: str,
        message: str,
        line: Optional[int] = None,
        column: Optional[int] = None,
        *,
        data: Any = None,
        prints: Sequence[str] = (),
        tool_calls: Sequence[Any] = (),
    ) -> None:
        where = f"{line}:{column}: " if line is not None else ""
        super().__init__(f"error[{kind}] {where}{message}")
        self.kind = kind
        self.message = message
        self.line = line
        self.column = column
        self.data = data
        self.prints = list(prints)
        self.tool_calls = list(tool_calls)


class LimitError(ProgramError):
    """A program stopped by a sandbox limit (``timeout``, ``step_limit``, ``depth_limit``,
    ``memory_limit``, ``tool_call_limit``, ``output_limit``, ``program_limit``): it may be
    correct, but too expensive. A program cannot catch these."""


class ProgramFailed(PtcError):
    """A program that gave up with ``(fail reason)``: ``reason`` is the value it gave (``text``
    as PTC-Lisp prints it), ``line`` and ``column`` where the ``fail`` form is."""

    def __init__(
        self,
        reason: Any,
        text: str,
        line: Optional[int] = None,
        column: Optional[int] = None,
        *,
        prints: Sequence[str] = (),
        tool_calls: Sequence[Any] = (),
    ) -> None:
        super().__init__(f"the program failed: {text}")
        self.reason = reason
        self.text = text
        self.line = line
        self.column = column
        self.prints = list(prints)
        self.tool_calls = list(tool_calls)
