"""Models that need no provider: for tests, examples and offline runs."""

from __future__ import annotations

from typing import Any, Dict, Iterable, List


class Scripted:
    """A model that answers each request with the next of ``replies``, for tests and examples
    that run offline: pass it as an agent's ``llm``. ``requests`` keeps the messages each
    request sent (dicts of ``role`` and ``content``, the system prompt first). A request past
    the last reply fails, which ends the run as ``llm_error``.

    Args:
        replies: The replies' texts, in the order they answer, e.g.
            ``["```clojure\\n(return 42)\\n```"]``.
    """

    def __init__(self, replies: Iterable[str]) -> None:
        self.replies: List[str] = list(replies)
        self.requests: List[List[Dict[str, Any]]] = []

    def __call__(self, messages: List[Dict[str, Any]]) -> str:
        self.requests.append(messages)
        if len(self.requests) > len(self.replies):
            raise LookupError(
                f"the script's {len(self.replies)} replies are used up; request "
                f"{len(self.requests)} has none"
            )
        return self.replies[len(self.requests) - 1]

    def __repr__(self) -> str:
        return f"<Scripted: {len(self.replies)} replies, {len(self.requests)} requests>"
