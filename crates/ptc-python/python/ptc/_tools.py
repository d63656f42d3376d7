"""Tools: Python functions a program calls as ``(tool/name arg ...)``."""

from __future__ import annotations

import collections.abc
import inspect
import re
import typing
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple, Union


class Tool:
    """A function programs call as ``(tool/name arg ...)``, with what the model is told
    about it.

    ``function`` gets the program's arguments positionally, as Python values (a PTC-Lisp map
    arrives as a dict), and returns data; it may be ``async def``. A call with one map whose
    keys are all the function's parameter names (and name every required one) binds them by
    name instead, as MCP tools take maps: ``(tool/get_orders {:customer_id "c1" :limit 5})``
    calls ``get_orders(customer_id="c1", limit=5)`` (a ``-`` in a key may stand for ``_``). A
    function of one parameter annotated as a dict or mapping always gets the map itself.
    Without a function, the host answers the tool's calls itself (``Session.start``).

    What the model is told comes from the function unless given: ``name`` defaults to the
    function's name; ``description`` to the first paragraph of its docstring, followed by
    what the ``Args:`` (Google style) or ``Parameters`` (NumPy style) section says of each
    parameter; ``params`` to its parameter names; ``signature`` (``"(city :string) ->
    {temp :float}"``, shown to the model and checked by agents) to one made from its type
    hints, a parameter with a default or ``Optional`` being optional (``limit :int?``).
    ``schema`` is the parameters as a JSON Schema object (types, defaults, descriptions,
    ``required``). A tool without a name (a lambda) takes the name of its key in a dict of
    tools.

    Args:
        function: What answers the tool's calls (plain or ``async def``), or None when the
            host answers them with ``Session.start`` and ``resume``.
        name: The name programs call it by, ``(tool/NAME ...)``; the function's by default.
        description: What the model reads about it; by default the docstring's first
            paragraph and what its ``Args:`` section says of each parameter.
        params: The parameter names shown to the model; the function's by default.
        signature: The signature shown to the model, e.g. ``"(city :string) -> {temp
            :float}"``; by default one made from the function's type hints.
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
        described = _describe(function)
        if description is None:
            description = described.description
        if params is None:
            params = _parameter_names(function)
        if signature is None:
            signature = described.signature
        self.function = function
        self.name: Optional[str] = name
        self.description = description
        self.params: List[str] = list(params)
        self.signature = signature
        self.schema: Dict[str, Any] = described.schema
        self._call = _by_name(function) if function is not None else None

    def __repr__(self) -> str:
        return f"Tool({self.name!r}, params={self.params!r})"


def _check_name(name: object) -> None:
    if not isinstance(name, str) or not name or any(c.isspace() or c in "()[]{}\"';" for c in name):
        raise ValueError(f"{name!r} cannot be a tool's name: use letters, digits and - _ ? ! *")


class _Described:
    """What a function says of itself: description, JSON Schema of its parameters, and a
    PTC signature from its type hints (None without hints)."""

    def __init__(self, description: str, schema: Dict[str, Any], signature: Optional[str]) -> None:
        self.description = description
        self.schema = schema
        self.signature = signature


_NO_SCHEMA: Dict[str, Any] = {"type": "object", "properties": {}}


def _describe(function: Optional[Callable[..., Any]]) -> _Described:
    if function is None:
        return _Described("", dict(_NO_SCHEMA), None)
    summary, arg_docs = _parse_docstring(inspect.getdoc(function) or "")
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return _Described(summary, dict(_NO_SCHEMA), None)
    try:
        hints = typing.get_type_hints(function)
    except Exception:  # noqa: BLE001 - a hint that cannot be resolved is no hint
        hints = {}
    passed = (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    )
    properties: Dict[str, Any] = {}
    required: List[str] = []
    fields: List[str] = []
    notes: List[str] = []
    for p in parameters:
        if p.kind not in passed:
            continue
        hint = hints.get(p.name, inspect.Parameter.empty)
        schema, ptc_type, nullable = _type_of(hint)
        has_default = p.default is not inspect.Parameter.empty
        if has_default and _jsonable(p.default):
            default_value = list(p.default) if isinstance(p.default, tuple) else p.default
            schema = dict(schema, default=default_value)
        if p.name in arg_docs:
            schema = dict(schema, description=arg_docs[p.name])
        properties[p.name] = schema
        optional = has_default or nullable
        if not optional:
            required.append(p.name)
        fields.append(f"{p.name} {ptc_type}{'?' if optional and not ptc_type.endswith('?') else ''}")
        note = arg_docs.get(p.name, "").rstrip(".")
        if has_default:
            default = "nil" if p.default is None else repr(p.default)
            note = f"{note} (default {default})" if note else f"default {default}"
        if note:
            notes.append(f"{p.name}: {note}")
    schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    description = summary
    if notes:
        listed = f"Parameters: {'; '.join(notes)}."
        description = f"{summary} {listed}" if summary else listed
    typed = any(p.name in hints for p in parameters) or "return" in hints
    signature = None
    if typed and all(_IDENTIFIER.match(p.name) for p in parameters if p.kind in passed):
        returns = _type_of(hints.get("return", inspect.Parameter.empty))[1]
        signature = f"({', '.join(fields)}) -> {returns}"
    return _Described(description, schema, signature)


_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-?!*]*$")


def _jsonable(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_jsonable(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _jsonable(v) for k, v in value.items())
    return False


def _type_of(hint: Any) -> Tuple[Dict[str, Any], str, bool]:
    """A type hint as a JSON Schema, a PTC signature type, and whether it admits None."""
    if hint is inspect.Parameter.empty or hint is Any:
        return {}, ":any", False
    if hint is type(None) or hint is None:
        return {"type": "null"}, ":any", True
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is Union or (origin is not None and getattr(origin, "__name__", "") == "UnionType"):
        members = [a for a in args if a is not type(None)]
        nullable = len(members) < len(args)
        if len(members) == 1:
            schema, ptc_type, _ = _type_of(members[0])
            if nullable:
                return {"anyOf": [schema, {"type": "null"}]}, f"{ptc_type}?", True
            return schema, ptc_type, False
        schemas = [_type_of(m)[0] for m in members] + ([{"type": "null"}] if nullable else [])
        return {"anyOf": schemas}, ":any", nullable
    if origin is typing.Literal:
        kinds = {type(a) for a in args}
        choices: Dict[str, Any] = {"enum": list(args)}
        if kinds == {str}:
            return dict(choices, type="string"), ":string", False
        if kinds == {int}:
            return dict(choices, type="integer"), ":int", False
        return choices, ":any", False
    simple = {
        str: ({"type": "string"}, ":string"),
        int: ({"type": "integer"}, ":int"),
        float: ({"type": "number"}, ":float"),
        bool: ({"type": "boolean"}, ":bool"),
    }
    if hint in simple:
        schema, ptc_type = simple[hint]
        return dict(schema), ptc_type, False
    base = origin or hint
    if isinstance(base, type) and issubclass(base, collections.abc.Mapping):
        return {"type": "object"}, ":map", False
    if isinstance(base, type) and issubclass(base, tuple):
        if len(args) == 2 and args[1] is Ellipsis:
            args = args[:1]
        elif args:
            return {"type": "array"}, "[:any]", False
    if (
        isinstance(base, type)
        and issubclass(base, (collections.abc.Sequence, collections.abc.Set))
        and not issubclass(base, (str, bytes))
    ):
        item_schema, item_type, _ = _type_of(args[0] if args else inspect.Parameter.empty)
        schema = {"type": "array", "items": item_schema} if item_schema else {"type": "array"}
        return schema, f"[{item_type}]", False
    return {}, ":any", False


_SECTION = re.compile(r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Returns|Return|Yields|Raises|Examples?|Notes?|See Also|Attributes)\s*:?\s*$")


def _parse_docstring(doc: str) -> Tuple[str, Dict[str, str]]:
    """The first paragraph of a docstring, on one line, and the text of each parameter that
    its ``Args:`` (Google style) or ``Parameters`` / ``----------`` (NumPy style) section
    describes."""
    lines = doc.splitlines()
    summary_lines: List[str] = []
    for line in lines:
        if not line.strip() or _SECTION.match(line.strip()):
            break
        summary_lines.append(line.strip())
    summary = " ".join(summary_lines)
    params: Dict[str, str] = {}
    i = 0
    while i < len(lines):
        header = lines[i].strip()
        match = _SECTION.match(header)
        numpy = match is not None and i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}
        if not match or match.group(1) not in ("Args", "Arguments", "Parameters", "Params", "Keyword Args", "Keyword Arguments"):
            i += 1
            continue
        if not numpy and not header.endswith(":"):
            i += 1
            continue
        i += 2 if numpy else 1
        section_indent: Optional[int] = None
        current: Optional[str] = None
        while i < len(lines):
            line = lines[i]
            stripped = line.strip()
            if not stripped:
                i += 1
                if numpy:
                    continue
                # A blank line inside a Google section ends the entry, not the section.
                continue
            indent = len(line) - len(line.lstrip())
            if _SECTION.match(stripped) and (numpy or indent == 0 or stripped.endswith(":")) and indent <= (section_indent or 0):
                break
            if numpy:
                entry = re.match(r"^([A-Za-z_*][\w*]*)\s*(?::\s*(.*))?$", stripped)
                if indent == 0 and entry:
                    current = entry.group(1).lstrip("*")
                    params[current] = ""
                elif current is not None:
                    params[current] = (params[current] + " " + stripped).strip()
                else:
                    break
            else:
                if section_indent is None:
                    section_indent = indent
                if indent < section_indent:
                    break
                entry = re.match(r"^([A-Za-z_*][\w*]*)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$", stripped)
                if indent == section_indent and entry:
                    current = entry.group(1).lstrip("*")
                    params[current] = entry.group(3).strip()
                elif current is not None:
                    params[current] = (params[current] + " " + stripped).strip()
            i += 1
    return summary, params


def _by_name(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function``, called with a single map by its parameter names when the map's keys are
    all parameter names and name every required one (see ``Tool``)."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return function
    named = {
        p.name: p
        for p in parameters
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    }
    required = {n for n, p in named.items() if p.default is inspect.Parameter.empty}
    if not named:
        return function
    if len(parameters) == 1 and len(named) == 1:
        only = parameters[0]
        try:
            hint = typing.get_type_hints(function).get(only.name, inspect.Parameter.empty)
        except Exception:  # noqa: BLE001
            hint = only.annotation
        base = typing.get_origin(hint) or hint
        if isinstance(base, type) and issubclass(base, collections.abc.Mapping):
            return function

    def key_name(key: Any) -> Optional[str]:
        if not isinstance(key, str):
            return None
        if key in named:
            return key
        underscored = key.replace("-", "_")
        return underscored if underscored in named else None

    def call(*args: Any) -> Any:
        if len(args) == 1 and isinstance(args[0], Mapping) and args[0]:
            names = {key: key_name(key) for key in args[0]}
            bound = {name: args[0][key] for key, name in names.items() if name is not None}
            if len(bound) == len(names) and required <= set(bound):
                return function(**bound)
        return function(*args)

    return call


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
                made[-1].schema = entry.schema
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
