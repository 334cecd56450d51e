"""The engine's one exception type. The edges (forms, API, commands) turn it into field errors."""


class SizingError(ValueError):
    """Bad or impossible input. `field` names the input at fault, `reason` says why."""

    def __init__(self, field: str, reason: str):
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}")
