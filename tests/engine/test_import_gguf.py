"""GGUF header import: small files written with gguf.GGUFWriter, read back with exact bytes;
truncated and corrupted files always fail as SizingError("gguf", ...)."""

import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, GGUFWriter
from gguf.quants import quantize

from sizing.engine import SizingError
from sizing.engine.formats import WEIGHT_FORMATS
from sizing.engine.importers import model_from_gguf, read_gguf, weight_format_of_gguf_type
from sizing.engine.specs import FULL
from sizing.engine.validate import validate_model

Q8_0 = GGMLQuantizationType.Q8_0
VOCAB, HIDDEN, LAYERS, HEADS, KV_HEADS, FF = 64, 64, 2, 4, 2, 128
HEAD_DIM = HIDDEN // HEADS


def _tensor(writer, name, shape, kind, rng):
    data = rng.standard_normal(shape).astype(np.float32)
    if kind == "F32":
        writer.add_tensor(name, data)
    elif kind == "F16":
        writer.add_tensor(name, data.astype(np.float16))
    else:  # Q8_0 via gguf's reference quantizer: 32 weights -> 34 bytes
        writer.add_tensor(name, quantize(data, Q8_0), raw_dtype=Q8_0)
    return int(np.prod(shape)), kind


def write_llama(path: Path, *, experts: int = 0, used: int = 0, tied: bool = False) -> dict:
    """A tiny llama GGUF. Returns {type: elements} of what was written."""
    rng = np.random.default_rng(0)
    w = GGUFWriter(str(path), "llama")
    w.add_name("tiny-llama")
    w.add_block_count(LAYERS)
    w.add_context_length(2048)
    w.add_embedding_length(HIDDEN)
    w.add_feed_forward_length(FF)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    w.add_token_list([f"t{i}" for i in range(VOCAB)])
    if experts:
        w.add_expert_count(experts)
        w.add_expert_used_count(used)
    written: dict[str, int] = {}

    def add(name, shape, kind):
        n, k = _tensor(w, name, shape, kind, rng)
        written[k] = written.get(k, 0) + n

    # numpy shapes are (rows, cols); ggml reverses them. Q8_0 blocks run along the last axis.
    add("token_embd.weight", (VOCAB, HIDDEN), "F16")
    if not tied:
        add("output.weight", (VOCAB, HIDDEN), "Q8_0")
    add("output_norm.weight", (HIDDEN,), "F32")
    for i in range(LAYERS):
        add(f"blk.{i}.attn_norm.weight", (HIDDEN,), "F32")
        add(f"blk.{i}.attn_q.weight", (HEADS * HEAD_DIM, HIDDEN), "Q8_0")
        add(f"blk.{i}.attn_k.weight", (KV_HEADS * HEAD_DIM, HIDDEN), "Q8_0")
        add(f"blk.{i}.attn_v.weight", (KV_HEADS * HEAD_DIM, HIDDEN), "Q8_0")
        add(f"blk.{i}.attn_output.weight", (HIDDEN, HEADS * HEAD_DIM), "Q8_0")
        add(f"blk.{i}.ffn_norm.weight", (HIDDEN,), "F32")
        if experts:
            add(f"blk.{i}.ffn_gate_inp.weight", (experts, HIDDEN), "F32")
            add(f"blk.{i}.ffn_gate_exps.weight", (experts, FF, HIDDEN), "F16")
            add(f"blk.{i}.ffn_up_exps.weight", (experts, FF, HIDDEN), "F16")
            add(f"blk.{i}.ffn_down_exps.weight", (experts, HIDDEN, FF), "Q8_0")
        else:
            add(f"blk.{i}.ffn_gate.weight", (FF, HIDDEN), "Q8_0")
            add(f"blk.{i}.ffn_up.weight", (FF, HIDDEN), "Q8_0")
            add(f"blk.{i}.ffn_down.weight", (HIDDEN, FF), "Q8_0")
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return written


@pytest.fixture
def llama(tmp_path):
    path = tmp_path / "tiny.gguf"
    return path, write_llama(path)


def exact_bytes(elements: int, type_name: str) -> int:
    block, size = GGML_QUANT_SIZES[GGMLQuantizationType[type_name]]
    return elements // block * size


def test_reads_layout_and_metadata(llama):
    path, _ = llama
    m = model_from_gguf(path)
    assert m.name == "tiny-llama"
    assert (m.layers, m.hidden_size, m.attention_heads, m.vocab_size) == (2, 64, 4, 64)
    assert m.max_context_tokens == 2048
    (g,) = m.attention
    assert (g.kind, g.layers, g.kv_heads, g.head_dim) == (FULL, 2, KV_HEADS, HEAD_DIM)
    assert m.experts is None and m.active_params == m.total_params
    assert m.checkpoint_bytes == path.stat().st_size
    validate_model(m)


def test_tensor_groups_by_type_with_exact_bytes(llama):
    path, written = llama
    header = read_gguf(path)
    m = header.spec
    assert {g.name: g.params for g in m.tensor_groups} == written
    assert m.total_params == sum(written.values())
    for g in m.tensor_groups:
        want = exact_bytes(g.params, g.name)
        assert header.bytes_by_type[g.name] == want
        # formats.py prices the group at exactly ggml's block size.
        assert g.params * WEIGHT_FORMATS[g.weight_format].bits_per_weight / 8 == want
    assert {g.name: g.weight_format for g in m.tensor_groups} == {
        "Q8_0": "Q8_0",
        "F16": "fp16",
        "F32": "fp32",
    }
    assert m.weight_format == "Q8_0"  # the biggest group
    # Q8_0 is 8.5 bits: 34 bytes per 32 weights.
    assert header.bytes_by_type["Q8_0"] == written["Q8_0"] * 34 // 32
    assert header.tensor_count == 3 + LAYERS * 9 and header.architecture == "llama"


def test_tensor_bytes_fit_inside_the_file(llama):
    path, _ = llama
    header = read_gguf(path)
    assert sum(header.bytes_by_type.values()) < path.stat().st_size


def test_moe_experts_and_active_parameters(tmp_path):
    path = tmp_path / "moe.gguf"
    written = write_llama(path, experts=4, used=2)
    m = model_from_gguf(path, name="tiny-moe")
    assert m.name == "tiny-moe"
    e = m.experts
    assert (e.routed, e.active, e.shared, e.moe_layers) == (4, 2, 0, LAYERS)
    assert e.params_per_expert == 3 * FF * HIDDEN
    expert_params = LAYERS * 4 * 3 * FF * HIDDEN
    embed = VOCAB * HIDDEN
    assert m.total_params == sum(written.values())
    assert m.active_params == m.total_params - expert_params // 2 - embed
    validate_model(m)


def test_tied_embeddings_stay_active(tmp_path):
    path = tmp_path / "tied.gguf"
    write_llama(path, experts=4, used=1, tied=True)
    m = model_from_gguf(path)
    assert m.active_params == m.total_params - LAYERS * 3 * 3 * FF * HIDDEN


def test_every_ggml_type_has_a_weight_format_at_its_block_size():
    for t, (block, size) in GGML_QUANT_SIZES.items():
        fmt = WEIGHT_FORMATS[weight_format_of_gguf_type(t.name)]
        assert fmt.bits_per_weight == size * 8 / block, t.name


# --- broken files: only ever SizingError("gguf", ...) -----------------------------------------


def gguf_error(path) -> SizingError:
    with pytest.raises(SizingError) as info:
        model_from_gguf(path)
    assert info.value.field == "gguf"
    return info.value


def test_missing_empty_and_directory(tmp_path):
    assert "no such file" in gguf_error(tmp_path / "nope.gguf").reason
    (tmp_path / "empty.gguf").write_bytes(b"")
    gguf_error(tmp_path / "empty.gguf")
    gguf_error(tmp_path)


def test_not_gguf(tmp_path):
    path = tmp_path / "model.safetensors"
    path.write_bytes(b'{"__metadata__": {}}' + bytes(200))
    gguf_error(path)


def test_truncated_tensor_data(llama, tmp_path):
    path, _ = llama
    data = path.read_bytes()
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(data[: len(data) - 100])
    gguf_error(cut)


def test_truncated_anywhere_in_the_header(llama, tmp_path):
    path, _ = llama
    data = path.read_bytes()
    header_end = read_gguf(path).spec.checkpoint_bytes - sum(read_gguf(path).bytes_by_type.values())
    cut = tmp_path / "cut.gguf"
    for end in range(1, header_end, 7):
        cut.write_bytes(data[:end])
        gguf_error(cut)


def test_corrupted_bytes(llama, tmp_path):
    path, _ = llama
    data = bytearray(path.read_bytes())
    bad = tmp_path / "bad.gguf"
    rng = np.random.default_rng(1)
    # Flip bytes across the header: counts, lengths, type codes, offsets.
    for pos in rng.integers(4, 600, size=60):
        broken = bytearray(data)
        broken[pos] ^= 0xFF
        bad.write_bytes(bytes(broken))
        try:
            model_from_gguf(bad)
        except SizingError as e:
            assert e.field == "gguf"
    data[:4] = b"GGUX"
    bad.write_bytes(bytes(data))
    gguf_error(bad)


def test_a_corrupt_array_length_fails_fast(tmp_path):
    # A uint32 array claiming 2^62 elements: the stock reader would loop over empty reads
    # for ever. Run in a child process so a regression times out instead of hanging the suite.
    key = b"llama.x"
    data = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", len(key)) + key
    data += struct.pack("<IIQ", 9, 4, 2**62) + bytes(64)  # ARRAY of UINT32
    path = tmp_path / "huge-array.gguf"
    path.write_bytes(data)
    code = (
        "from sizing.engine import SizingError\n"
        "from sizing.engine.importers import model_from_gguf\n"
        "try:\n"
        f"    model_from_gguf({str(path)!r})\n"
        "except SizingError as e:\n"
        "    print(e.field, e.reason)\n"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60
    )
    assert out.stdout.startswith("gguf ") and "past the end" in out.stdout, out.stderr


def test_a_header_without_architecture(tmp_path):
    path = tmp_path / "noarch.gguf"
    w = GGUFWriter(str(path), "llama")
    w.kv_data[0].pop("general.architecture")
    w.add_tensor("x", np.zeros((4,), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    assert "general.architecture" in gguf_error(path).reason


def test_the_engine_imports_without_gguf_or_numpy():
    code = (
        "import sys, sizing.engine, sizing.engine.importers;"
        "print(sorted(m for m in ('gguf', 'numpy') if m in sys.modules))"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert out.stdout.strip() == "[]", out.stderr
