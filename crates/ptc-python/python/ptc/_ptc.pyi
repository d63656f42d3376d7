"""Type stubs of the extension module (checked against it by mypy's stubtest in the tests)."""

from os import PathLike
from typing import Any, Callable, Coroutine, Dict, List, Optional, Tuple, Union, final

from ._tools import ToolsArg

__version__: str

_DataArg = Optional[Dict[str, Any]]
_LimitsArg = Union[None, "Limits", Dict[str, Any]]
_PathArg = Union[str, "PathLike[str]", None]

@final
class Limits:
    """The sandbox limits of every run; each argument left out keeps its default."""

    def __new__(
        cls,
        *,
        timeout: Optional[float] = None,
        max_steps: Optional[int] = None,
        max_call_depth: Optional[int] = None,
        max_memory_bytes: Optional[int] = None,
        max_value_depth: Optional[int] = None,
        max_tool_calls: Optional[int] = None,
        tool_timeout: Optional[float] = None,
        max_output_bytes: Optional[int] = None,
        max_print_chars: Optional[int] = None,
    ) -> Limits: ...
    @property
    def timeout(self) -> float: ...
    @property
    def max_steps(self) -> int: ...
    @property
    def max_call_depth(self) -> int: ...
    @property
    def max_memory_bytes(self) -> int: ...
    @property
    def max_value_depth(self) -> int: ...
    @property
    def max_tool_calls(self) -> int: ...
    @property
    def tool_timeout(self) -> float: ...
    @property
    def max_output_bytes(self) -> int: ...
    @property
    def max_print_chars(self) -> int: ...

@final
class ToolCall:
    """One tool call a program made."""

    @property
    def name(self) -> str: ...
    @property
    def args(self) -> List[Any]: ...
    @property
    def result(self) -> Any: ...
    @property
    def error(self) -> Optional[str]: ...
    @property
    def duration(self) -> float: ...

@final
class Result:
    """A program that ran to its end or returned."""

    @property
    def value(self) -> Any: ...
    @property
    def text(self) -> str: ...
    @property
    def returned(self) -> bool: ...
    @property
    def prints(self) -> List[str]: ...
    @property
    def tool_calls(self) -> List[ToolCall]: ...
    @property
    def steps(self) -> int: ...
    def _repr_html_(self) -> str: ...

@final
class Suspended:
    """A run waiting for the host to answer a tool call."""

    @property
    def name(self) -> str: ...
    @property
    def args(self) -> List[Any]: ...
    @property
    def calls(self) -> List[Tuple[str, List[Any]]]: ...
    def resume(self, value: Any) -> Union[Result, Suspended]: ...
    def resume_error(self, error: Union[str, BaseException]) -> Union[Result, Suspended]: ...
    def _pending(
        self,
    ) -> List[Tuple[str, Optional[Callable[..., Any]], Union[List[Any], BaseException], float]]: ...

@final
class Session:
    """Runs programs and keeps what they define."""

    def __new__(
        cls, *, data: _DataArg = None, tools: ToolsArg = None, limits: _LimitsArg = None
    ) -> Session: ...
    def run(self, program: str) -> Result: ...
    def start(self, program: str) -> Union[Result, Suspended]: ...
    def run_async(self, program: str) -> Coroutine[Any, Any, Result]: ...
    @property
    def names(self) -> List[str]: ...
    @property
    def limits(self) -> Limits: ...
    def reset(self) -> None: ...
    def __contains__(self, key: str, /) -> bool: ...
    def __getitem__(self, key: str, /) -> Any: ...

def run(
    program: str, *, data: _DataArg = None, tools: ToolsArg = None, limits: _LimitsArg = None
) -> Result:
    """Runs one program in a new session and returns its ``ptc.Result``."""

@final
class Turn:
    """One turn of an agent run."""

    @property
    def number(self) -> int: ...
    @property
    def program(self) -> str: ...
    @property
    def success(self) -> bool: ...
    @property
    def value(self) -> Any: ...
    @property
    def error(self) -> Optional[Dict[str, Any]]: ...
    @property
    def prints(self) -> List[str]: ...
    @property
    def tool_calls(self) -> List[ToolCall]: ...
    @property
    def reply(self) -> str: ...
    @property
    def usage(self) -> Dict[str, Any]: ...

@final
class Step:
    """How an agent run ended, with its turns and what it cost."""

    @property
    def success(self) -> bool: ...
    @property
    def value(self) -> Any: ...
    @property
    def text(self) -> Optional[str]: ...
    @property
    def failure_kind(self) -> Optional[str]: ...
    @property
    def reason(self) -> Optional[str]: ...
    @property
    def turns(self) -> List[Turn]: ...
    @property
    def usage(self) -> Dict[str, Any]: ...
    def to_json(self, indent: Optional[int] = None) -> str: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def _repr_html_(self) -> str: ...

def view(step: Step, path: Union[str, "PathLike[str]"], compression: Optional[str] = None) -> "PathLike[str]":
    """Writes the run's page (one self-contained HTML file) to ``path`` and returns the path."""

_Messages = List[Dict[str, str]]
_LlmFunction = Callable[[_Messages], Union[str, Coroutine[Any, Any, str]]]

@final
class _AgentRun:
    def step(self, answer: Any = None) -> Tuple[Any, ...]: ...
    def stop(self) -> None: ...
    def _logs(self) -> List[Tuple[int, str]]: ...

@final
class Agent:
    """An agent: a mission, a model, tools, data and a signature."""

    def __new__(
        cls,
        mission: str,
        *,
        llm: Union[str, _LlmFunction],
        tools: ToolsArg = None,
        data: _DataArg = None,
        signature: Optional[str] = None,
        compression: Union[None, bool, str] = None,
        max_turns: Optional[int] = None,
        limits: _LimitsArg = None,
        mcp: Optional[List[str]] = None,
        mcp_config: _PathArg = None,
        request_timeout: Optional[float] = None,
        headers: Optional[Dict[str, str]] = None,
        retries: Optional[int] = None,
        deadline: Optional[float] = None,
        temperature: Optional[float] = None,
        max_tokens: Optional[int] = None,
        on_turn: Optional[Callable[[Turn], Any]] = None,
        trace: Union[bool, str, None] = None,
        prompt_limit: Union[int, Dict[str, int], None] = None,
    ) -> Agent: ...
    def run(
        self,
        *,
        data: _DataArg = None,
        checkpoint: _PathArg = None,
        run_id: str = "run",
        resume: bool = False,
    ) -> Step: ...
    def run_async(
        self,
        *,
        data: _DataArg = None,
        checkpoint: _PathArg = None,
        run_id: str = "run",
        resume: bool = False,
    ) -> Coroutine[Any, Any, Step]: ...
    def _open(
        self,
        data: _DataArg,
        checkpoint: _PathArg,
        run_id: str,
        resume: bool,
        log_level: int,
        waker: Optional[Callable[[], Any]],
    ) -> _AgentRun: ...
    @property
    def tool_names(self) -> List[str]: ...
    def close(self) -> None: ...
    def __enter__(self) -> Agent: ...
    def __exit__(self, *args: object) -> None: ...


def _panic(message: str) -> None: ...
