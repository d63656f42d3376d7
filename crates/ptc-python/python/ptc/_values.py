"""Python values with no built-in counterpart."""

from __future__ import annotations

from typing import Any, Dict, Iterator, Mapping


class FrozenMap(Mapping[Any, Any]):
    """A map where Python needs a hashable value: an item of a set, or a key of a map. It
    reads like the dict it was made from, and cannot change."""

    __slots__ = ("_items", "_hash")

    def __init__(self, items: Mapping[Any, Any]) -> None:
        self._items: Dict[Any, Any] = dict(items)
        self._hash = hash(frozenset(self._items.items()))

    def __getitem__(self, key: Any) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenMap):
            return self._items == other._items
        if isinstance(other, Mapping):
            return self._items == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenMap({self._items!r})"

    def to_dict(self) -> Dict[Any, Any]:
        """The entries as a new dict."""
        return dict(self._items)
