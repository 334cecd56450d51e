"""Key figures of a scenario: the compare table (best per row marked), CSV and JSON exports.

Its own module rather than services.py: it only formats results, it writes nothing.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from scenarios.models import Scenario
from sizing.engine.evaluate import ScenarioResult
from sizing.engine.fmt import fmt_bytes, fmt_duration, fmt_int, fmt_tokens, fmt_usd, sig

LOW, HIGH = "low", "high"  # which end of a row is best


@dataclass(frozen=True)
class Figure:
    key: str
    label: str
    unit: str
    better: str | None  # LOW, HIGH or None (not a ranking row)
    value: Callable[[ScenarioResult], Any]
    text: Callable[[Any], str] = str

    @property
    def label_unit(self) -> str:
        """The unit to print beside the label; money, bytes and times carry their own."""
        shown = self.unit in ("GPUs", "tokens/s", "tokens/month")
        return self.unit if shown and self.unit not in self.label else ""


def _t1(attr):
    return lambda r: None if r.tier1 is None else getattr(r.tier1, attr)


def _speed(attr):
    return lambda r: None if r.speed is None else getattr(r.speed, attr)


def _layout(r: ScenarioResult) -> str | None:
    lay = r.layout
    if not lay.fits:
        return None
    split = f"TP {lay.tp}" + (f" × EP {lay.ep}" if lay.ep > 1 else "")
    return split + (f" × PP {lay.pp}" if lay.pp > 1 else "")


FIGURES: tuple[Figure, ...] = (
    Figure("model", "Model", "", None, lambda r: r.model_name),
    Figure("accelerator", "Accelerator", "", None, lambda r: r.accelerator_name),
    Figure("weights_bytes", "Weights", "bytes", LOW, lambda r: r.weights_bytes, fmt_bytes),
    Figure(
        "min_gpus_for_weights", "Weights-only floor", "GPUs", None,
        lambda r: r.min_gpus_for_weights, fmt_int,
    ),
    Figure(
        "gpus", "Recommended GPUs", "GPUs", LOW,
        lambda r: r.layout.gpus if r.layout.fits else None, fmt_int,
    ),
    Figure("nodes", "Nodes", "", None, lambda r: r.layout.nodes if r.layout.fits else None),
    Figure("layout", "Parallelism", "", None, _layout),
    Figure(
        "tokens_per_s", "Decode throughput", "tokens/s", HIGH,
        lambda r: r.decode_tokens_per_s, fmt_int,
    ),
    Figure(
        "tokens_per_s_per_user", "Per user", "tokens/s", HIGH,
        _speed("tokens_per_s_per_user"), sig,
    ),
    Figure(
        "tokens_per_s_per_usd_per_hour", "Tokens/s per dollar-hour", "(tokens/s)/(USD/h)", HIGH,
        lambda r: r.tokens_per_s_per_usd_per_hour, sig,
    ),
    Figure("usd_per_gpu_hour", "GPU-hour price", "USD", LOW, _t1("usd_per_gpu_hour"), fmt_usd),
    Figure(
        "gpu_hours_per_month", "GPU-hours a month", "h", LOW,
        _t1("gpu_hours_per_month"), fmt_int,
    ),
    Figure(
        "tier1_usd_per_month", "Tier 1: rent, a month", "USD", LOW,
        lambda r: r.tier1_usd_per_month, fmt_usd,
    ),
    Figure(
        "usd_per_m_output", "Rent per M output tokens", "USD", LOW,
        _t1("usd_per_m_output"), fmt_usd,
    ),
    Figure("cold_start_s", "Cold start", "s", LOW, _t1("cold_start_s"), fmt_duration),
    Figure("cold_start_usd", "Cold start cost", "USD", LOW, _t1("cold_start_usd"), fmt_usd),
    Figure(
        "tier2_fits", "Tier 2: fits on one card", "", None,
        lambda r: "yes" if r.tier2.runs_scenario_model else "no",
    ),
    Figure(
        "tier3_usd_per_month", "Tier 3: API, a month", "USD", LOW,
        lambda r: r.tier3_usd_per_month, fmt_usd,
    ),
    Figure(
        "break_even_output_tokens_per_month", "Break-even output", "tokens/month", LOW,
        lambda r: r.break_even_output_tokens_per_month, fmt_tokens,
    ),
)  # fmt: skip


def figure_values(result: ScenarioResult) -> dict[str, Any]:
    """Raw key figures by key (None: unknown or not applicable)."""
    return {f.key: f.value(result) for f in FIGURES}


@dataclass(frozen=True)
class Cell:
    text: str
    value: Any
    best: bool


@dataclass(frozen=True)
class Row:
    figure: Figure
    cells: tuple[Cell, ...]


def comparison_rows(results: Sequence[ScenarioResult]) -> list[Row]:
    """One row per key figure, one cell per scenario; the best value in ranking rows is marked
    (ties all marked; nothing marked when fewer than two scenarios have a value)."""
    rows = []
    for f in FIGURES:
        values = [f.value(r) for r in results]
        known = [v for v in values if v is not None]
        best = None
        if f.better and len(known) >= 2 and len(set(known)) > 1:
            best = min(known) if f.better == LOW else max(known)
        cells = tuple(
            Cell("unknown" if v is None else f.text(v), v, best is not None and v == best)
            for v in values
        )
        rows.append(Row(f, cells))
    return rows


def scenario_data(scenario: Scenario, result: ScenarioResult) -> dict[str, Any]:
    """Everything about a saved scenario as JSON-able data: inputs, snapshot, figures."""
    return {
        "id": scenario.pk,
        "name": scenario.name,
        "owner": scenario.owner.get_username(),
        "visibility": scenario.visibility,
        "team": scenario.team.name if scenario.team_id else None,
        "tags": scenario.tag_list,
        "notes": scenario.notes,
        "created": scenario.created.isoformat(),
        "updated": scenario.updated.isoformat(),
        "prices_as_of": scenario.prices_as_of.isoformat() if scenario.prices_as_of else None,
        "figures": figure_values(result),
        "verdicts": {
            "single_gpu": result.verdicts.single_gpu,
            "tier1": result.verdicts.tier1,
            "tier2": result.verdicts.tier2,
            "tier3": result.verdicts.tier3,
            "break_even": result.verdicts.break_even,
        },
        "launch": {
            "sglang": result.layout.sglang_command,
            "vllm": result.layout.vllm_command,
            "note": result.layout.launch_note,
        },
        "inputs": scenario.inputs,
        "snapshot": scenario.snapshot,
    }


def _csv(rows: list[list[Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows(rows)
    return out.getvalue()


def _raw(value: Any) -> Any:
    return "" if value is None else value


def scenario_csv(scenario: Scenario, result: ScenarioResult) -> str:
    """figure, value, unit rows (raw numbers, empty when unknown), then the verdicts."""
    rows: list[list[Any]] = [["figure", "value", "unit"]]
    rows.append(["name", scenario.name, ""])
    rows.append(["prices_as_of", _raw(scenario.prices_as_of), "date"])
    for f in FIGURES:
        rows.append([f.key, _raw(f.value(result)), f.unit])
    v = result.verdicts
    for key in ("single_gpu", "tier1", "tier2", "tier3", "break_even"):
        rows.append([f"verdict_{key}", getattr(v, key), ""])
    return _csv(rows)


def comparison_csv(scenarios: Sequence[Scenario], results: Sequence[ScenarioResult]) -> str:
    """One row per figure, one column per scenario (raw values), best-of-row column last."""
    rows: list[list[Any]] = [["figure", "unit", *(s.name for s in scenarios), "best"]]
    rows.append(["prices_as_of", "date", *(_raw(s.prices_as_of) for s in scenarios), ""])
    for row in comparison_rows(results):
        best = [s.name for s, c in zip(scenarios, row.cells, strict=True) if c.best]
        rows.append(
            [row.figure.key, row.figure.unit, *(_raw(c.value) for c in row.cells), "; ".join(best)]
        )
    return _csv(rows)
