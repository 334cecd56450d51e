"""Read a feed's bytes from a URL or a file, with timeouts and a size cap.

Every failure is a FeedError that says what happened in words a run log can show.
"""

import os
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from pricing.feeds import FeedError

MAX_BYTES = 64 * 1024 * 1024  # SkyPilot's largest vms.csv (AWS) is a few tens of MB
CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 30.0  # between two chunks
TOTAL_TIMEOUT_S = 120.0  # a server that drips bytes forever is stopped here
USER_AGENT = "k3planner-price-feed/1"
# A file modified this recently may still be being written (its writer between two writes, or
# preempted inside one): it is read, then checked again after this long.
SETTLE_S = 0.1


def is_url(location: str) -> bool:
    return urlsplit(location).scheme in ("http", "https")


def fetch(
    location: str,
    *,
    roots: list[Path],
    base: Path,
    max_bytes: int = MAX_BYTES,
    timeout_s: float = READ_TIMEOUT_S,
    total_timeout_s: float = TOTAL_TIMEOUT_S,
) -> tuple[bytes, str]:
    """(content, file name). A relative path is read from `base`; a file outside `roots` is
    refused, so a feed cannot read the server's other files into a run log."""
    if is_url(location):
        return _fetch_url(location, max_bytes, timeout_s, total_timeout_s), _url_name(location)
    if "://" in location:
        raise FeedError(f"only http(s) URLs and file paths are feeds, not {location!r}")
    return _read_file(location, roots, base, max_bytes)


def _url_name(url: str) -> str:
    return Path(urlsplit(url).path).name or urlsplit(url).netloc


def _fetch_url(url: str, max_bytes: int, timeout_s: float, total_timeout_s: float) -> bytes:
    timeout = httpx.Timeout(timeout_s, connect=min(CONNECT_TIMEOUT_S, timeout_s))
    deadline = time.monotonic() + total_timeout_s
    chunks, size = [], 0
    try:
        with (
            httpx.Client(
                timeout=timeout,
                follow_redirects=True,
                max_redirects=5,
                headers={"User-Agent": USER_AGENT},
            ) as client,
            client.stream("GET", url) as response,
        ):
            if response.status_code != 200:
                raise FeedError(f"HTTP {response.status_code} from {url}")
            declared = response.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > max_bytes:
                raise FeedError(f"{url} is {int(declared):,} bytes, over the {max_bytes:,} cap")
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    raise FeedError(f"{url} sent more than the {max_bytes:,} byte cap; stopped")
                if time.monotonic() > deadline:
                    raise FeedError(f"{url} took over {total_timeout_s:g} s; stopped")
                chunks.append(chunk)
    except httpx.TimeoutException as exc:
        raise FeedError(
            f"timed out after {timeout_s:g} s fetching {url} ({type(exc).__name__})"
        ) from None
    except httpx.HTTPError as exc:
        # Connection refused, reset, a body shorter than its Content-Length, a redirect loop.
        raise FeedError(f"could not fetch {url}: {type(exc).__name__}: {exc}") from None
    return b"".join(chunks)


def _read_file(location: str, roots: list[Path], base: Path, max_bytes: int) -> tuple[bytes, str]:
    path = Path(location)
    if not path.is_absolute():
        path = base / path
    path = path.resolve()
    if not any(path.is_relative_to(root.resolve()) for root in roots):
        raise FeedError(f"{location} is outside the feed folders ({', '.join(map(str, roots))})")
    try:
        with path.open("rb") as f:
            before = os.fstat(f.fileno())
            if before.st_size > max_bytes:
                raise FeedError(
                    f"{location} is {before.st_size:,} bytes, over the {max_bytes:,} cap"
                )
            data = f.read(max_bytes + 1)
            stamps = {_stamp(before), _stamp(os.fstat(f.fileno()))}
            if time.time() - before.st_mtime < SETTLE_S:
                time.sleep(SETTLE_S)
                stamps.add(_stamp(os.fstat(f.fileno())))
    except FileNotFoundError:
        raise FeedError(f"no such file: {location}") from None
    except OSError as exc:
        raise FeedError(f"cannot read {location}: {exc.strerror}") from None
    # A file rewritten in place while it is read can yield whole rows of a half-written version,
    # which parse cleanly: a file written to during the read (or just after) is refused.
    if len(stamps) > 1 or len(data) != before.st_size:
        raise FeedError(
            f"{location} changed while it was read; run the feed again once it is written "
            "(writing a new file and renaming it over the old one avoids this)"
        )
    return data, path.name


def _stamp(st: os.stat_result) -> tuple[int, int, int]:
    return st.st_size, st.st_mtime_ns, st.st_ino
