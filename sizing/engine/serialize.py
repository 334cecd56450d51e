"""Results as plain dicts and lists, for JSON.

`dataclasses.asdict` deep-copies every leaf; our results are frozen and hold only numbers,
strings, tuples and other frozen results, so a plain walk gives the same data several times
faster (the API serialises a whole ScenarioResult on every sizing call).
"""

from __future__ import annotations

from typing import Any


def as_plain(obj: Any) -> Any:
    fields = getattr(obj, "__dataclass_fields__", None)
    if fields is not None:
        return {name: as_plain(getattr(obj, name)) for name in fields}
    if isinstance(obj, tuple | list):
        return [as_plain(item) for item in obj]
    if isinstance(obj, dict):
        return {key: as_plain(value) for key, value in obj.items()}
    return obj
