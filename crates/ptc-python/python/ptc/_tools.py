"""Tools: Python functions a program calls as ``(tool/name arg ...)``."""

from __future__ import annotations

import inspect
from typing import Any, Callable, Iterable, List, Mapping, Optional, Union


class Tool:
    """A function programs call as ``(tool/name arg ...)``, with what the model is told
    about it.

    ``function`` gets the program's arguments positionally, as Python values (a PTC-Lisp map
    arrives as a dict), and returns data; it may be ``async def``. Without a function, the
    host answers the tool's calls itself (``Session.start``). ``name`` defaults to the
    function's name, ``description`` to the first paragraph of its docstring, ``params`` to
    its parameter names; ``signature`` (``"(city :string) -> {temp :float}"``) is checked by
    agents and shown to the model. A tool without a name (a lambda) takes the name of its key
    in a dict of tools.
    """

    def __init__(
        self,
        function: Optional[Callable[..., Any]] = None,
        *,
        name: Optional[str] = None,
        description: Optional[str] = None,
        params: Optional[Iterable[str]] = None,
        signature: Optional[str] = None,
    ) -> None:
        if function is not None and not callable(function):
            raise TypeError(f"a tool's function must be callable, got {type(function).__name__}")
        if name is None:
            name = getattr(function, "__name__", None)
            if name == "<lambda>":
                name = None
        if name is not None:
            _check_name(name)
        if description is None:
            doc = inspect.getdoc(function) if function is not None else None
            description = doc.split("\n\n")[0].replace("\n", " ") if doc else ""
        if params is None:
            params = _parameter_names(function)
        self.function = function
        self.name: Optional[str] = name
        self.description = description
        self.params: List[str] = list(params)
        self.signature = signature

    def __repr__(self) -> str:
        return f"Tool({self.name!r}, params={self.params!r})"


def _check_name(name: object) -> None:
    if not isinstance(name, str) or not name or any(c.isspace() or c in "()[]{}\"';" for c in name):
        raise ValueError(f"{name!r} cannot be a tool's name: use letters, digits and - _ ? ! *")


def _parameter_names(function: Optional[Callable[..., Any]]) -> List[str]:
    if function is None:
        return []
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return []
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in parameters if p.kind in positional]


ToolsArg = Union[None, Mapping[str, Union[Callable[..., Any], Tool]], Iterable[Union[Callable[..., Any], Tool]]]


def tools_from(tools: ToolsArg) -> List[Tool]:
    """The tools ``tools=`` gives: a dict of names to functions or Tools, or a list of
    functions and Tools."""
    if tools is None:
        return []
    made: List[Tool] = []
    if isinstance(tools, Mapping):
        for name, entry in tools.items():
            if isinstance(entry, Tool):
                made.append(Tool(entry.function, name=name, description=entry.description,
                                 params=entry.params, signature=entry.signature))
            else:
                made.append(Tool(entry, name=name))
    elif isinstance(tools, (str, bytes)) or not isinstance(tools, Iterable):
        raise TypeError(
            f"tools must be a dict of names to functions, or a list of functions and ptc.Tool, "
            f"got {type(tools).__name__}"
        )
    else:
        for entry in tools:
            tool = entry if isinstance(entry, Tool) else Tool(entry)
            if tool.name is None:
                raise TypeError("a tool needs a name: give name=, a named function, or a dict of tools")
            made.append(tool)
    seen = set()
    for tool in made:
        if tool.name in seen:
            raise ValueError(f"two tools are named {tool.name!r}")
        seen.add(tool.name)
    return made
