"""Price feed formats: parse a file's bytes into price rows, and write k3planner's own format.

Pure Python, no Django: a parser turns bytes into `GpuOffer` / `ApiOffer` rows with the names
as the file spells them, plus a `Rejection` for every row it cannot use. Matching names to the
catalog happens later (pricing.matching), so a parser can be tested with nothing but a file.

A problem with one row rejects that row and is reported; a problem with the file (not CSV or
JSON, a missing column, a truncated end) raises `FeedError` and the whole run changes nothing.
"""

import csv
import datetime as dt
import io
import json
import re
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from functools import lru_cache

ON_DEMAND, SPOT, RESERVED = "on_demand", "spot", "reserved"
KINDS = (ON_DEMAND, SPOT, RESERVED)

# Sanity bounds. The dearest on-demand GPU-hour in the samples is AWS's B300 at $17.80
# ($142.416 for 8); $100 a GPU-hour is past any list price and catches a per-instance or
# per-month figure typed as per-GPU-hour. API: the dearest list price is about $600 per M output
# tokens (o1-pro), so $1,000 per M means a unit slip (per 1k tokens, or cents).
MAX_USD_PER_GPU_HOUR = Decimal(100)
MAX_USD_PER_M_TOKENS = Decimal(1000)
MAX_GPUS_PER_OFFER = 1024
# Stored precision: 6 decimal places of a dollar (SkyPilot's $21.957642 / 8 = 2.744705).
QUANTUM = Decimal("0.000001")
PER_MILLION = Decimal(1_000_000)

# Column names of k3planner's own CSV. Export writes exactly these; import requires the
# first three of each and defaults the rest.
GPU_COLUMNS = (
    "provider",
    "accelerator",
    "usd_per_gpu_hour",
    "kind",
    "term_months",
    "region",
    "zone",
    "gpu_count",
    "offer",
    "effective_date",
    "source_url",
    "note",
    "provider_kind",
)
API_COLUMNS = (
    "provider",
    "model_id",
    "usd_per_m_output",
    "usd_per_m_input_cache_miss",
    "usd_per_m_input_cache_hit",
    "context_tokens",
    "effective_date",
    "source_url",
    "note",
    "provider_kind",
)
JSON_FORMAT_TAG = "k3planner-prices"


class FeedError(Exception):
    """The file as a whole cannot be used; nothing from it may be stored."""


@dataclass(slots=True)
class GpuOffer:
    row: int
    provider: str
    accelerator: str
    usd_per_gpu_hour: Decimal
    kind: str = ON_DEMAND
    term_months: int = 0
    region: str = ""
    zone: str = ""
    gpu_count: int = 1
    offer: str = ""
    # Memory per GPU as the feed states it, in GB. SkyPilot's MiB are divided by 1024: vendors'
    # HBM "80 GB" is 80 GiB (81920 MiB), so this compares with the catalog's figure.
    memory_gb: float | None = None
    effective_date: dt.date | None = None
    source_url: str = ""
    note: str = ""
    provider_kind: str = ""


@dataclass(slots=True)
class ApiOffer:
    row: int
    provider: str
    model_id: str
    usd_per_m_input_cache_miss: Decimal
    usd_per_m_output: Decimal
    usd_per_m_input_cache_hit: Decimal | None = None
    context_tokens: int | None = None
    effective_date: dt.date | None = None
    source_url: str = ""
    note: str = ""
    provider_kind: str = ""


@dataclass(frozen=True)
class Rejection:
    row: int
    field: str
    reason: str

    def as_dict(self) -> dict:
        return {"row": self.row, "field": self.field, "reason": self.reason}


@dataclass
class Parsed:
    gpu: list[GpuOffer] = field(default_factory=list)
    api: list[ApiOffer] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    rows_read: int = 0
    rows_skipped: int = 0
    providers: dict[str, dict] = field(default_factory=dict)  # name -> {kind, url} declared
    dated: bool = False  # the format carries its own effective dates

    @property
    def rows_rejected(self) -> int:
        return len({r.row for r in self.rejections})


class RowError(Exception):
    def __init__(self, field: str, reason: str):
        super().__init__(reason)
        self.field = field
        self.reason = reason


# --- value readers: each raises RowError naming the field -------------------------------------


def _decimal(value, name: str) -> Decimal | None:
    """None for empty; a finite Decimal otherwise. Floats go through str() to keep 1e-06 exact."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise RowError(name, f"not a number: {value!r}")
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        raise RowError(name, f"not a number: {_short(value)}") from None
    if not number.is_finite():
        raise RowError(name, f"not a finite number: {_short(value)}")
    return number


def _gpu_price(value, name: str, per: int = 1) -> Decimal | None:
    total = _decimal(value, name)
    if total is None:
        return None
    if total <= 0:
        raise RowError(name, f"price must be positive, got {total}")
    price = (total / per).quantize(QUANTUM, rounding=ROUND_HALF_EVEN)
    if price > MAX_USD_PER_GPU_HOUR:
        raise RowError(
            name, f"${price} per GPU-hour is beyond any list price (max {MAX_USD_PER_GPU_HOUR})"
        )
    if price <= 0:
        raise RowError(name, f"price rounds to zero: {total} for {per} GPUs")
    return price


def _token_price(value, name: str, scale: Decimal = Decimal(1)) -> Decimal | None:
    number = _decimal(value, name)
    if number is None:
        return None
    if number < 0:
        raise RowError(name, f"price must not be negative, got {number}")
    price = (number * scale).quantize(QUANTUM, rounding=ROUND_HALF_EVEN)
    if price > MAX_USD_PER_M_TOKENS:
        raise RowError(
            name,
            f"${price} per million tokens is beyond any list price (max {MAX_USD_PER_M_TOKENS})",
        )
    return price


def _count(value, name: str, default: int | None = None) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    number = _decimal(value, name)
    if number is None:
        return default
    if number != number.to_integral_value():
        raise RowError(name, f"not a whole number: {_short(value)}")
    return int(number)


def _gpu_count(value, name: str) -> int:
    count = _count(value, name, default=1)
    if count is None or count < 1 or count > MAX_GPUS_PER_OFFER:
        raise RowError(name, f"GPU count must be 1 to {MAX_GPUS_PER_OFFER}, got {_short(value)}")
    return count


def _date(value, name: str) -> dt.date | None:
    if value is None or not str(value).strip():
        return None
    try:
        return dt.date.fromisoformat(str(value).strip()[:10])
    except ValueError:
        raise RowError(name, f"not a date (YYYY-MM-DD): {_short(value)}") from None


def _short(value, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- file readers ----------------------------------------------------------------------------


def _text(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FeedError(f"not UTF-8 text (byte {exc.start}): is this the right file?") from None


def _csv_rows(data: bytes, required: tuple[str, ...]) -> tuple[list[str], list[tuple[int, list]]]:
    """Header and (line number, fields) pairs; '#' comment lines skipped, the file checked whole.

    A file whose last row is short and has no line end was cut off in transfer: that is a bad
    file, not a bad row, so the run fails rather than importing a silently partial feed.
    """
    text = _text(data)
    line = [0]  # physical number of the last line handed to the reader

    def lines():
        for number, text_line in enumerate(io.StringIO(text), 1):
            if text_line.startswith("#") or not text_line.strip():
                continue
            line[0] = number
            yield text_line

    reader = csv.reader(lines(), strict=True)
    try:
        header = [h.strip() for h in next(reader, [])]
        rows = [(line[0], fields) for fields in reader]
    except csv.Error as exc:
        raise FeedError(f"not valid CSV near line {line[0]}: {exc} (truncated?)") from None
    if not header:
        raise FeedError("the file is empty")
    missing = [c for c in required if c not in header]
    if missing:
        raise FeedError(
            f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}; "
            f"the header has {_short(', '.join(header), 200)}"
        )
    if rows and not text.endswith(("\n", "\r")) and len(rows[-1][1]) < len(header):
        raise FeedError(
            f"the file looks truncated: its last row has {len(rows[-1][1])} of {len(header)} "
            "fields and no line end"
        )
    return header, rows


def _json(data: bytes):
    try:
        return json.loads(_text(data))
    except json.JSONDecodeError as exc:
        raise FeedError(f"not valid JSON: {exc.msg} at line {exc.lineno} (truncated?)") from None


# --- k3planner's own CSV and JSON ------------------------------------------------------------


def parse_k3planner_csv(data: bytes, *, provider: str = "") -> Parsed:
    """GPU prices when the header has usd_per_gpu_hour, API prices when it has model_id."""
    text_head = _text(data[:4096]).lstrip().split("\n", 1)[0]
    if "usd_per_gpu_hour" in text_head:
        header, rows = _csv_rows(data, ("accelerator", "usd_per_gpu_hour"))
        build = _k3_gpu
    elif "model_id" in text_head:
        header, rows = _csv_rows(data, ("model_id", "usd_per_m_output"))
        build = _k3_api
    else:
        raise FeedError(
            "a k3planner CSV has a usd_per_gpu_hour column (GPU prices) "
            "or a model_id column (API prices)"
        )
    if "provider" not in header and not provider:
        raise FeedError("the file has no provider column; set the feed's provider")
    parsed = Parsed(dated="effective_date" in header)
    for number, fields in rows:
        parsed.rows_read += 1
        if len(fields) != len(header):
            parsed.rejections.append(
                Rejection(number, "", f"has {len(fields)} fields, the header has {len(header)}")
            )
            continue
        record = dict(zip(header, fields, strict=True))
        if not record.get("provider"):
            record["provider"] = provider
        try:
            build(parsed, number, record)
        except RowError as exc:
            parsed.rejections.append(Rejection(number, exc.field, exc.reason))
    return parsed


def _k3_gpu(parsed: Parsed, number: int, r: dict) -> None:
    provider = (r.get("provider") or "").strip()
    if not provider:
        raise RowError("provider", "empty")
    accelerator = (r.get("accelerator") or "").strip()
    if not accelerator:
        raise RowError("accelerator", "empty")
    kind = (r.get("kind") or ON_DEMAND).strip().lower().replace("-", "_")
    if kind not in KINDS:
        raise RowError("kind", f"must be one of {', '.join(KINDS)}, got {_short(r.get('kind'))}")
    term = _count(r.get("term_months"), "term_months", default=0)
    if term is None or term < 0:
        raise RowError("term_months", "must be 0 or more")
    if kind == RESERVED and term == 0:
        raise RowError("term_months", "a reserved price needs its term in months")
    price = _gpu_price(r.get("usd_per_gpu_hour"), "usd_per_gpu_hour")
    if price is None:
        raise RowError("usd_per_gpu_hour", "empty")
    parsed.gpu.append(
        GpuOffer(
            row=number,
            provider=provider,
            accelerator=accelerator,
            usd_per_gpu_hour=price,
            kind=kind,
            term_months=term,
            region=(r.get("region") or "").strip(),
            zone=(r.get("zone") or "").strip(),
            gpu_count=_gpu_count(r.get("gpu_count"), "gpu_count"),
            offer=(r.get("offer") or "").strip(),
            effective_date=_date(r.get("effective_date"), "effective_date"),
            source_url=(r.get("source_url") or "").strip(),
            note=(r.get("note") or "").strip(),
            provider_kind=(r.get("provider_kind") or "").strip(),
        )
    )


def _k3_api(parsed: Parsed, number: int, r: dict) -> None:
    provider = (r.get("provider") or "").strip()
    if not provider:
        raise RowError("provider", "empty")
    model_id = (r.get("model_id") or "").strip()
    if not model_id:
        raise RowError("model_id", "empty")
    output = _token_price(r.get("usd_per_m_output"), "usd_per_m_output")
    miss = _token_price(r.get("usd_per_m_input_cache_miss"), "usd_per_m_input_cache_miss")
    if output is None:
        raise RowError("usd_per_m_output", "empty")
    if miss is None:
        raise RowError("usd_per_m_input_cache_miss", "empty")
    context = _count(r.get("context_tokens"), "context_tokens")
    if context is not None and context < 1:
        raise RowError("context_tokens", "must be positive")
    parsed.api.append(
        ApiOffer(
            row=number,
            provider=provider,
            model_id=model_id,
            usd_per_m_input_cache_miss=miss,
            usd_per_m_output=output,
            usd_per_m_input_cache_hit=_token_price(
                r.get("usd_per_m_input_cache_hit"), "usd_per_m_input_cache_hit"
            ),
            context_tokens=context,
            effective_date=_date(r.get("effective_date"), "effective_date"),
            source_url=(r.get("source_url") or "").strip(),
            note=(r.get("note") or "").strip(),
            provider_kind=(r.get("provider_kind") or "").strip(),
        )
    )


def parse_k3planner_json(data: bytes, *, provider: str = "") -> Parsed:
    """{"format": "k3planner-prices", "providers": [...], "gpu_prices": [...], "api_prices": [...]}.

    Row objects take the same keys as the CSV columns. Rows are numbered through the file:
    GPU rows first (1, 2, …), then API rows.
    """
    doc = _json(data)
    if not isinstance(doc, dict) or doc.get("format") != JSON_FORMAT_TAG:
        raise FeedError(f'a k3planner JSON file is an object with "format": "{JSON_FORMAT_TAG}"')
    parsed = Parsed(dated=True)
    for p in doc.get("providers") or []:
        if isinstance(p, dict) and p.get("name"):
            parsed.providers[p["name"]] = {"kind": p.get("kind", ""), "url": p.get("url", "")}
    number = 0
    for key, build in (("gpu_prices", _k3_gpu), ("api_prices", _k3_api)):
        items = doc.get(key) or []
        if not isinstance(items, list):
            raise FeedError(f'"{key}" must be a list')
        for item in items:
            number += 1
            parsed.rows_read += 1
            if not isinstance(item, dict):
                parsed.rejections.append(Rejection(number, "", "not an object"))
                continue
            record = {k: ("" if v is None else v) for k, v in item.items()}
            record.setdefault("provider", provider)
            if not record["provider"]:
                record["provider"] = provider
            try:
                build(parsed, number, record)
            except RowError as exc:
                parsed.rejections.append(Rejection(number, exc.field, exc.reason))
    return parsed


def write_k3planner_gpu_csv(rows: list[dict]) -> str:
    """The GPU CSV that parse_k3planner_csv reads back (rows keyed by GPU_COLUMNS)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=GPU_COLUMNS, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def write_k3planner_api_csv(rows: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=API_COLUMNS, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def write_k3planner_json(
    *, gpu_rows: list[dict], api_rows: list[dict], providers: list[dict]
) -> str:
    doc = {
        "format": JSON_FORMAT_TAG,
        "version": 1,
        "providers": providers,
        "gpu_prices": [{k: r.get(k, "") for k in GPU_COLUMNS} for r in gpu_rows],
        "api_prices": [{k: r.get(k, "") for k in API_COLUMNS} for r in api_rows],
    }
    return json.dumps(doc, indent=1, default=str) + "\n"


# --- SkyPilot catalog vms.csv ----------------------------------------------------------------

# GpuInfo is a Python-literal dict (JSON in some clouds, lower-case keys in v6). Only the memory
# is read from it, with a regex: literal_eval on 100,000 rows costs seconds.
_MIB = re.compile(r"""['"]sizeinmib['"]\s*:\s*([0-9.]+)""", re.IGNORECASE)


@lru_cache(maxsize=4096)
def _gpuinfo_memory_gb(info: str) -> float | None:
    match = _MIB.search(info or "")
    if not match:
        return None
    value = float(match.group(1))
    # Shadeform's SizeInMiB holds GB (80, 141): no GPU has under 1 GiB of memory.
    return value if value < 1024 else value / 1024


def parse_skypilot_csv(data: bytes, *, provider: str = "") -> Parsed:
    """One row per instance and zone; Price and SpotPrice are USD an hour for the instance.

    Each row gives an on-demand and a spot price per GPU (price ÷ AcceleratorCount), either may
    be empty. CPU rows are skipped. GCP lists accelerators on their own rows (no InstanceType)
    priced apart from the host VM: such a row is not a whole offer, so it is rejected, not
    added up by guesswork.
    """
    if not provider:
        raise FeedError("a SkyPilot vms.csv does not name its cloud; set the feed's provider")
    header, rows = _csv_rows(
        data, ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")
    )
    parsed = Parsed()
    index = {name: i for i, name in enumerate(header)}
    col = index.get
    i_type, i_acc, i_count = col("InstanceType"), col("AcceleratorName"), col("AcceleratorCount")
    i_price, i_spot, i_region = col("Price"), col("SpotPrice"), col("Region")
    i_zone, i_info = col("AvailabilityZone"), col("GpuInfo")
    width = len(header)
    for number, f in rows:
        parsed.rows_read += 1
        if len(f) != width:
            parsed.rejections.append(
                Rejection(number, "", f"has {len(f)} fields, the header has {width}")
            )
            continue
        accelerator = f[i_acc].strip()
        if not accelerator:
            parsed.rows_skipped += 1  # a CPU instance
            continue
        instance = f[i_type].strip()
        if not instance:
            parsed.rejections.append(
                Rejection(
                    number,
                    "InstanceType",
                    f"{accelerator} ×{f[i_count]}: an accelerator priced apart from its host VM "
                    "(GCP), not a whole offer",
                )
            )
            continue
        try:
            count = _gpu_count(f[i_count], "AcceleratorCount")
            on_demand = _gpu_price(f[i_price], "Price", count)
            spot = _gpu_price(f[i_spot], "SpotPrice", count) if i_spot is not None else None
        except RowError as exc:
            parsed.rejections.append(Rejection(number, exc.field, exc.reason))
            continue
        if on_demand is None and spot is None:
            parsed.rows_skipped += 1  # listed without a price
            continue
        memory = _gpuinfo_memory_gb(f[i_info]) if i_info is not None else None
        region = f[i_region].strip()
        zone = f[i_zone].strip() if i_zone is not None else ""
        for kind, price, total in (
            (ON_DEMAND, on_demand, f[i_price]),
            (SPOT, spot, f[i_spot] if i_spot is not None else ""),
        ):
            if price is None:
                continue
            parsed.gpu.append(
                GpuOffer(
                    row=number,
                    provider=provider,
                    accelerator=accelerator,
                    usd_per_gpu_hour=price,
                    kind=kind,
                    region=region,
                    zone=zone,
                    gpu_count=count,
                    offer=instance,
                    memory_gb=memory,
                    note=f"${total.strip()}/h for {count} GPU" + ("s" if count > 1 else ""),
                )
            )
    return parsed


# --- gpuhunt ---------------------------------------------------------------------------------

GPUHUNT_COLUMNS = (
    "instance_name",
    "location",
    "price",
    "gpu_count",
    "gpu_name",
    "gpu_memory",
    "spot",
)
# The per-GPU price table in gpuhunt's provider modules (crusoe.py), written out as CSV.
GPUHUNT_TABLE_COLUMNS = ("gpuhunt_gpu_name", "vram_gb", "on_demand_per_gpu_hr")


def parse_gpuhunt_csv(data: bytes, *, provider: str = "") -> Parsed:
    """gpuhunt's offline catalog ({provider}.csv): one row per offer, price per instance-hour.

    Also reads a provider's per-GPU price table (gpu name, vram_gb, on_demand_per_gpu_hr,
    spot_per_gpu_hr), the shape of gpuhunt's provider modules before it expands them.
    """
    if not provider:
        raise FeedError("set the feed's provider (gpuhunt names it by the file: {provider}.csv)")
    head = _text(data[:8192])
    first = next((ln for ln in head.splitlines() if ln.strip() and not ln.startswith("#")), "")
    if all(c in first for c in GPUHUNT_TABLE_COLUMNS):
        return _gpuhunt_table(data, provider)
    header, rows = _csv_rows(data, GPUHUNT_COLUMNS)
    parsed = Parsed()
    width = len(header)
    for number, fields in rows:
        parsed.rows_read += 1
        if len(fields) != width:
            parsed.rejections.append(
                Rejection(number, "", f"has {len(fields)} fields, the header has {width}")
            )
            continue
        r = dict(zip(header, fields, strict=True))
        name = r["gpu_name"].strip()
        if not name or r["gpu_count"].strip() in ("", "0", "0.0"):
            parsed.rows_skipped += 1
            continue
        spot = r["spot"].strip().lower()
        try:
            if spot not in ("true", "false"):
                raise RowError("spot", f"must be True or False, got {_short(r['spot'])}")
            count = _gpu_count(r["gpu_count"], "gpu_count")
            price = _gpu_price(r["price"], "price", count)
            memory = _decimal(r["gpu_memory"], "gpu_memory")
        except RowError as exc:
            parsed.rejections.append(Rejection(number, exc.field, exc.reason))
            continue
        if price is None:
            parsed.rows_skipped += 1
            continue
        parsed.gpu.append(
            GpuOffer(
                row=number,
                provider=provider,
                accelerator=name,
                usd_per_gpu_hour=price,
                kind=SPOT if spot == "true" else ON_DEMAND,
                region=r["location"].strip(),
                gpu_count=count,
                offer=r["instance_name"].strip(),
                memory_gb=float(memory) if memory is not None else None,
                note=f"${r['price'].strip()}/h for {count} GPU" + ("s" if count > 1 else ""),
            )
        )
    return parsed


def _gpuhunt_table(data: bytes, provider: str) -> Parsed:
    header, rows = _csv_rows(data, GPUHUNT_TABLE_COLUMNS)
    parsed = Parsed()
    width = len(header)
    type_column = next((h for h in header if h.endswith("_gpu_type")), None)
    for number, fields in rows:
        parsed.rows_read += 1
        if len(fields) != width:
            parsed.rejections.append(
                Rejection(number, "", f"has {len(fields)} fields, the header has {width}")
            )
            continue
        r = dict(zip(header, fields, strict=True))
        try:
            memory = _decimal(r["vram_gb"], "vram_gb")
            on_demand = _gpu_price(r["on_demand_per_gpu_hr"], "on_demand_per_gpu_hr")
            spot = _gpu_price(r.get("spot_per_gpu_hr"), "spot_per_gpu_hr")
        except RowError as exc:
            parsed.rejections.append(Rejection(number, exc.field, exc.reason))
            continue
        if on_demand is None and spot is None:
            parsed.rows_skipped += 1
            continue
        offer = r[type_column].strip() if type_column else ""
        note = (r.get("note") or "").strip()
        for kind, price in ((ON_DEMAND, on_demand), (SPOT, spot)):
            if price is not None:
                parsed.gpu.append(
                    GpuOffer(
                        row=number,
                        provider=provider,
                        accelerator=r["gpuhunt_gpu_name"].strip(),
                        usd_per_gpu_hour=price,
                        kind=kind,
                        offer=offer,
                        memory_gb=float(memory) if memory is not None else None,
                        note=note,
                    )
                )
    return parsed


# --- LiteLLM model_prices_and_context_window.json -------------------------------------------

# Modes priced per token in and out; embeddings, images and audio are not LLM serving.
LITELLM_MODES = ("chat", "completion", "responses")


def parse_litellm_json(data: bytes, *, provider: str = "") -> Parsed:
    """USD per token, converted to per million. Tiered prices (*_above_200k_tokens), batch,
    flex and priority variants are not imported: the base price is the one a plan starts from.
    """
    doc = _json(data)
    if not isinstance(doc, dict):
        raise FeedError("LiteLLM's file is an object of model name -> prices")
    parsed = Parsed()
    for number, (key, entry) in enumerate(doc.items(), 1):
        parsed.rows_read += 1
        if key == "sample_spec" or not isinstance(entry, dict):
            parsed.rows_skipped += 1
            continue
        if entry.get("mode", "chat") not in LITELLM_MODES:
            parsed.rows_skipped += 1
            continue
        name = str(entry.get("litellm_provider") or provider or "").strip()
        try:
            if not name:
                raise RowError("litellm_provider", "empty")
            miss = _token_price(
                entry.get("input_cost_per_token"), "input_cost_per_token", PER_MILLION
            )
            output = _token_price(
                entry.get("output_cost_per_token"), "output_cost_per_token", PER_MILLION
            )
            hit_value = entry.get(
                "cache_read_input_token_cost", entry.get("input_cost_per_token_cache_hit")
            )
            hit = _token_price(hit_value, "cache_read_input_token_cost", PER_MILLION)
            if miss is None:
                raise RowError("input_cost_per_token", "missing")
            if output is None:
                raise RowError("output_cost_per_token", "missing")
            if miss == 0 and output == 0:
                raise RowError(
                    "output_cost_per_token",
                    "zero price (a local or free model): nothing to plan with",
                )
            context = entry.get("max_input_tokens")
            context = _count(context, "max_input_tokens") if context not in (None, "") else None
        except RowError as exc:
            parsed.rejections.append(Rejection(number, exc.field, f"{key}: {exc.reason}"))
            continue
        model_id = key[len(name) + 1 :] if key.startswith(name + "/") else key
        parsed.api.append(
            ApiOffer(
                row=number,
                provider=name,
                model_id=model_id,
                usd_per_m_input_cache_miss=miss,
                usd_per_m_output=output,
                usd_per_m_input_cache_hit=hit,
                context_tokens=context if context and context > 0 else None,
                note="LiteLLM USD per token × 1,000,000",
            )
        )
    return parsed


PARSERS = {
    "k3planner_csv": parse_k3planner_csv,
    "k3planner_json": parse_k3planner_json,
    "gpuhunt_csv": parse_gpuhunt_csv,
    "skypilot_csv": parse_skypilot_csv,
    "litellm_json": parse_litellm_json,
}


def parse(format: str, data: bytes, *, provider: str = "") -> Parsed:
    try:
        parser = PARSERS[format]
    except KeyError:
        raise FeedError(f"unknown feed format {format!r}") from None
    return parser(data, provider=provider)
