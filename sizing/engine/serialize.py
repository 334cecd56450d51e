"""Results as plain dicts and lists, for JSON.

`dataclasses.asdict` deep-copies every leaf; our results are frozen and hold only numbers,
strings, tuples and other frozen results, so a plain walk gives the same data several times
faster (the API serialises a whole ScenarioResult on every sizing call).
"""

from __future__ import annotations

from typing import Any

_LEAVES = frozenset({int, float, str, bool, type(None)})


def as_plain(obj: Any) -> Any:
    kind = type(obj)
    if kind in _LEAVES:
        return obj
    fields = getattr(kind, "__dataclass_fields__", None)
    if fields is not None:
        # Most values are numbers and strings: test them here rather than call for each.
        values = ((name, getattr(obj, name)) for name in fields)
        return {name: v if type(v) in _LEAVES else as_plain(v) for name, v in values}
    if isinstance(obj, tuple | list):
        return [v if type(v) in _LEAVES else as_plain(v) for v in obj]
    if isinstance(obj, dict):
        return {key: as_plain(value) for key, value in obj.items()}
    return obj
