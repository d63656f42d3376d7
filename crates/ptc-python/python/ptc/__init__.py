"""PTC-Lisp programs and PTC agents, in-process.

``ptc.run(program, data=..., tools=..., limits=...)`` runs one program of PTC-Lisp (a
sandboxed Clojure subset) and returns its value as Python objects; a ``ptc.Session`` keeps
what programs define from one to the next; ``start()``/``resume()`` hand each tool call to
the host; ``ptc.Agent`` runs the agent loop: a model writes programs, the sandbox runs them;
``ptc.Scripted`` is a model that answers with given replies, for offline runs. See
docs/python.md.
"""

from __future__ import annotations

from typing import Any, Optional

from ._errors import (
    AgentError,
    ConversionError,
    LimitError,
    ProgramError,
    ProgramFailed,
    PtcError,
)
from ._ptc import (
    Agent,
    Limits,
    Result,
    Session,
    Step,
    Suspended,
    ToolCall,
    Turn,
    __version__,
    run,
    view,
)
from ._models import Scripted
from ._tools import Tool, ToolsArg
from ._values import FrozenMap


async def run_async(
    program: str,
    *,
    data: Optional[Any] = None,
    tools: ToolsArg = None,
    limits: Optional[Any] = None,
) -> Result:
    """``await ptc.run_async(program, ...)``: ``ptc.run`` on the running event loop, awaiting
    ``async def`` tools (those a program calls at once, concurrently)."""
    return await Session(data=data, tools=tools, limits=limits).run_async(program)


__all__ = [
    "Agent",
    "AgentError",
    "ConversionError",
    "FrozenMap",
    "LimitError",
    "Limits",
    "ProgramError",
    "ProgramFailed",
    "PtcError",
    "Result",
    "Scripted",
    "Session",
    "Step",
    "Suspended",
    "Tool",
    "ToolCall",
    "Turn",
    "__version__",
    "run",
    "run_async",
    "view",
]
