"""Small helpers shared by the probe tests."""

import socket


def free_port() -> int:
    """A port nothing listens on right now (the OS picked it and we let it go)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def closed_port() -> int:
    """A loopback port where a connection is refused."""
    return free_port()
