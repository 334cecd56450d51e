"""Fuzzing the importers with hypothesis: whatever a config.json or a GGUF file holds, the
import gives a valid model or one SizingError naming the field, never another exception."""

import json
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from sizing.engine import SizingError
from sizing.engine.importers import model_from_gguf, model_from_hf_config
from sizing.engine.validate import validate_model

CONFIGS = Path(__file__).resolve().parents[2] / "sizing" / "catalog" / "configs"
REAL = {p.stem: json.loads(p.read_text()) for p in sorted(CONFIGS.glob("*.json"))}
# No "explain" phase: tracing every line of a failing import can take gigabytes.
PHASES = [Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink]
FUZZ = settings(
    max_examples=300,
    deadline=None,
    phases=PHASES,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)

junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.lists(st.integers(min_value=-5, max_value=5), max_size=4),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


def import_or_error(config) -> None:
    try:
        spec = model_from_hf_config(config, name="fuzz")
    except SizingError as exc:
        assert exc.field and exc.reason
        return
    validate_model(spec)  # an accepted config is a model the engine can size


@FUZZ
@given(
    slug=st.sampled_from(sorted(REAL)),
    edits=st.lists(st.tuples(st.integers(min_value=0, max_value=200), junk), max_size=4),
    drops=st.lists(st.integers(min_value=0, max_value=200), max_size=3),
)
def test_a_real_config_with_wrong_or_missing_values_never_crashes(slug, edits, drops):
    config = dict(REAL[slug])
    keys = sorted(config)
    for i, value in edits:
        config[keys[i % len(keys)]] = value
    for i in drops:
        config.pop(keys[i % len(keys)], None)
    import_or_error(config)


@FUZZ
@given(st.one_of(junk, st.dictionaries(st.text(max_size=20), junk, max_size=8)))
def test_anything_at_all_is_refused_cleanly(value):
    import_or_error(value if isinstance(value, dict) else {"architectures": value})


GGUF_FUZZ = settings(max_examples=200, deadline=None, phases=PHASES)


def test_a_billion_layers_is_refused_not_allocated():
    config = {**REAL["llama-3.1-8b"], "num_hidden_layers": 10**9}
    try:
        model_from_hf_config(config, name="huge")
    except SizingError as exc:
        assert exc.field == "num_hidden_layers" and "at most 10,000" in exc.reason
    else:
        raise AssertionError("a billion layers was accepted")


def tiny_gguf_bytes(tmp: Path) -> bytes:
    from test_import_gguf import write_llama

    path = tmp / "tiny.gguf"
    write_llama(path)
    return path.read_bytes()


@GGUF_FUZZ
@given(data=st.data())
def test_a_truncated_or_corrupted_gguf_is_a_sizing_error(data, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gguf")
    original = tiny_gguf_bytes(tmp)
    blob = bytearray(original)
    cut = data.draw(st.integers(min_value=0, max_value=len(blob)))
    flips = data.draw(
        st.lists(st.tuples(st.integers(0, max(0, cut - 1)), st.integers(0, 255)), max_size=6)
    )
    blob = blob[:cut]
    for pos, byte in flips:
        if blob:
            blob[pos % len(blob)] = byte
    path = tmp / "fuzzed.gguf"
    path.write_bytes(bytes(blob))
    try:
        spec = model_from_gguf(path)
    except SizingError as exc:
        assert exc.field == "gguf"
        return
    validate_model(spec)
