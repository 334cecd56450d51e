"""Typed reads from a JSON-like dict. Every failure is a SizingError naming the key."""

from __future__ import annotations

from typing import Any

from ..errors import SizingError

_MISSING: Any = object()

# Beyond any real config: 2^27 tokens of context, a 134M-wide dimension. A bound for every
# integer, so an absurd value is an error naming its key, never a huge allocation.
MAX_INTEGER = 2**27
# Counts the importer loops over (one entry a layer, an expert): far tighter bounds, so a
# config claiming a billion layers cannot make an import (or an API call) run out of memory.
MAX_BY_KEY = {
    "num_hidden_layers": 10_000,
    "num_layers": 10_000,
    "n_layers": 10_000,
    "first_k_dense_replace": 10_000,
    "num_nextn_predict_layers": 1_000,
    "full_attention_interval": 10_000,
    "decoder_sparse_step": 10_000,
    "num_experts": 100_000,
    "n_routed_experts": 100_000,
    "num_local_experts": 100_000,
    "n_shared_experts": 100_000,
}


def _describe(value: object) -> str:
    return f"{value!r} ({type(value).__name__})"


class Fields:
    """A config dict (or a nested part of one) whose errors name the full dotted key."""

    def __init__(self, data: object, prefix: str = "", what: str = "config"):
        if not isinstance(data, dict):
            raise SizingError(prefix or what, f"must be a JSON object, got {_describe(data)}")
        self.data: dict[str, Any] = data
        self.prefix = prefix

    def key(self, name: str) -> str:
        return f"{self.prefix}.{name}" if self.prefix else name

    def has(self, name: str) -> bool:
        return self.data.get(name) is not None

    def raw(self, name: str, default: Any = None) -> Any:
        value = self.data.get(name)
        return default if value is None else value

    def integer(self, name: str, default: Any = _MISSING, *, minimum: int = 1) -> int:
        value = self.data.get(name)
        if value is None:
            if default is _MISSING:
                raise SizingError(self.key(name), "is required and missing from the config")
            return default
        return self.check_int(self.key(name), value, minimum, MAX_BY_KEY.get(name, MAX_INTEGER))

    def opt_integer(self, name: str, *, minimum: int = 1) -> int | None:
        return self.integer(name, None, minimum=minimum)

    @staticmethod
    def check_int(key: str, value: object, minimum: int, maximum: int = MAX_INTEGER) -> int:
        # bool is an int subclass in Python; true/false is never a size.
        if isinstance(value, bool) or not isinstance(value, int):
            raise SizingError(key, f"must be an integer, got {_describe(value)}")
        if value < minimum:
            bound = "positive" if minimum == 1 else f"at least {minimum}"
            raise SizingError(key, f"must be {bound}, got {value}")
        if value > maximum:
            raise SizingError(key, f"must be at most {maximum:,}, got {value:,}")
        return value

    def flag(self, name: str, default: bool) -> bool:
        value = self.data.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise SizingError(self.key(name), f"must be true or false, got {_describe(value)}")
        return value

    def text(self, name: str, default: str | None = None) -> str | None:
        value = self.data.get(name)
        if value is None:
            return default
        if not isinstance(value, str):
            raise SizingError(self.key(name), f"must be a string, got {_describe(value)}")
        return value

    def int_list(
        self, name: str, default: list[int] | None = None, *, minimum: int = 0
    ) -> list[int]:
        value = self.data.get(name)
        if value is None:
            if default is None:
                raise SizingError(self.key(name), "is required and missing from the config")
            return list(default)
        if not isinstance(value, list):
            raise SizingError(self.key(name), f"must be a list, got {_describe(value)}")
        return [self.check_int(f"{self.key(name)}[{i}]", v, minimum) for i, v in enumerate(value)]

    def str_list(self, name: str) -> list[str]:
        value = self.data.get(name)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise SizingError(self.key(name), f"must be a list of strings, got {_describe(value)}")
        return list(value)

    def sub(self, name: str) -> Fields:
        """A nested object that must be there."""
        found = self.opt_sub(name)
        if found is None:
            raise SizingError(self.key(name), "is required and missing from the config")
        return found

    def opt_sub(self, name: str) -> Fields | None:
        value = self.data.get(name)
        return None if value is None else Fields(value, self.key(name))
