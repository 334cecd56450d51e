"""Import a model from a GGUF file's header: exact bytes per tensor type, layout, experts.

gguf's GGUFReader memory-maps the file and parses the header (metadata and the tensor table);
tensor data is only mapped, never read, so a 400 GB file costs a header's worth of I/O. Bytes
per tensor = elements x type size / block size from ggml's block layouts (GGML_QUANT_SIZES), the
same arithmetic llama.cpp uses to lay the file out. ``gguf`` and ``numpy`` are imported here
only, so the rest of the engine stays standard-library.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from ..errors import SizingError
from ..formats import WEIGHT_FORMATS
from ..specs import FULL, LINEAR, MLA, AttentionGroup, ExpertSpec, ModelSpec, TensorGroup

# GGUF type names that formats.py spells differently; the rest keep their ggml name.
_FORMAT_OF_TYPE = {
    "F32": "fp32",
    "F16": "fp16",
    "BF16": "bf16",
    "MXFP4": "MXFP4_GGUF",
    "NVFP4": "nvfp4",  # 64 weights in 36 bytes = 4.5 bits, as NVFP4's 16 + fp8 scale
}
_EXPERT_TENSOR = re.compile(r"_exps\.")  # blk.N.ffn_{gate,up,down,gate_up}_exps.weight / .bias
_BLOCK = re.compile(r"^blk\.(\d+)\.")


def weight_format_of_gguf_type(type_name: str) -> str:
    name = _FORMAT_OF_TYPE.get(type_name, type_name)
    if name not in WEIGHT_FORMATS:
        raise SizingError("gguf", f"tensor type {type_name} has no weight format in formats.py")
    return name


@dataclass(frozen=True)
class GGUFHeader:
    spec: ModelSpec
    bytes_by_type: dict[str, int]  # exact tensor bytes per ggml type, from the block sizes
    tensor_count: int
    architecture: str


def _fail(path: str | os.PathLike[str], why: str) -> SizingError:
    return SizingError("gguf", f"{os.fspath(path)}: {why}")


class _Meta:
    def __init__(self, reader: Any):
        self.reader = reader

    def value(self, key: str) -> Any:
        field = self.reader.get_field(key)
        if field is None:
            return None
        return field.contents()

    def integer(self, key: str) -> int | None:
        value = self.value(key)
        if value is None:
            return None
        if isinstance(value, list):  # per-layer arrays: the widest layer
            value = max(value) if value else None
        if value is None or isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise SizingError("gguf", f"metadata {key} must be a whole number >= 0, got {value!r}")
        return value

    def per_layer(self, key: str, layers: int) -> list[int] | None:
        value = self.value(key)
        if value is None:
            return None
        values = value if isinstance(value, list) else [value] * layers
        if len(values) != layers or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values
        ):
            raise SizingError("gguf", f"metadata {key} must give one count per layer")
        return values

    def array_len(self, key: str) -> int | None:
        field = self.reader.get_field(key)
        return None if field is None else len(field.data)


def _attention(meta: _Meta, arch: str, layers: int, heads: int | None, hidden: int | None):
    kv_rank = meta.integer(f"{arch}.attention.kv_lora_rank")
    if kv_rank:
        rope = meta.integer(f"{arch}.rope.dimension_count")
        return (AttentionGroup(MLA, layers, kv_lora_rank=kv_rank, qk_rope_head_dim=rope),)
    kv_heads = meta.per_layer(f"{arch}.attention.head_count_kv", layers)
    head_dim = meta.integer(f"{arch}.attention.key_length")
    if head_dim is None and heads and hidden and hidden % heads == 0:
        head_dim = hidden // heads
    if kv_heads is None:
        kv_heads = [heads or 0] * layers  # llama.cpp's default: plain multi-head attention
    window = meta.integer(f"{arch}.attention.sliding_window")
    note = f"a sliding window of {window} on some layers is sized as full" if window else ""
    groups: dict[int, int] = {}
    for kv in kv_heads:
        groups[kv] = groups.get(kv, 0) + 1
    out = []
    for kv, n in groups.items():
        if kv == 0:
            # No KV heads: recurrent / linear layers whose state sizes GGUF keys do not give.
            out.append(AttentionGroup(LINEAR, n, note="recurrent layer; state size not in GGUF"))
        else:
            out.append(AttentionGroup(FULL, n, kv_heads=kv, head_dim=head_dim, note=note))
    return tuple(out)


def _guarded_reader() -> Any:
    """GGUFReader that refuses an array longer than the bytes left in the file.

    A corrupt array length (say 2^62) past the end of the file makes the stock reader loop
    once per element over empty reads, which never finishes. Every element takes at least
    one byte, so a length beyond the remaining bytes is corrupt.
    """
    import numpy as np
    from gguf import GGUFReader, GGUFValueType

    class Reader(GGUFReader):
        def _get_field_parts(self, orig_offs: int, raw_type: int) -> Any:
            if raw_type == GGUFValueType.ARRAY:
                length = self._get(orig_offs + 4, np.uint64)
                left = len(self.data) - orig_offs - 12
                if len(length) == 0 or int(length[0]) > max(left, 0):
                    raise ValueError(f"array at byte {orig_offs} runs past the end of the file")
            return super()._get_field_parts(orig_offs, raw_type)

    return Reader


def model_from_gguf(path: str | os.PathLike[str], *, name: str | None = None) -> ModelSpec:
    """A ModelSpec from a GGUF file. Any unreadable, truncated or corrupt file -> SizingError."""
    return read_gguf(path, name=name).spec


def read_gguf(path: str | os.PathLike[str], *, name: str | None = None) -> GGUFHeader:
    """The ModelSpec plus the exact bytes per tensor type."""
    try:
        from gguf import GGML_QUANT_SIZES  # lazily: the engine is stdlib-only
    except ImportError:
        raise SizingError("gguf", "reading GGUF needs the gguf package") from None
    try:
        size = os.path.getsize(path)
        reader = _guarded_reader()(path)  # header only: tensor data stays mapped, unread
    except FileNotFoundError:
        raise _fail(path, "no such file") from None
    except SizingError:
        raise
    except Exception as exc:  # corrupt input can fail anywhere in the parser
        raise _fail(path, f"not a readable GGUF file ({type(exc).__name__}: {exc})") from None
    try:
        return _build(reader, path, size, name, GGML_QUANT_SIZES)
    except SizingError:
        raise
    except Exception as exc:
        raise _fail(path, f"corrupt GGUF header ({type(exc).__name__}: {exc})") from None


def _build(reader: Any, path: Any, size: int, name: str | None, quant_sizes: Any) -> GGUFHeader:
    meta = _Meta(reader)
    arch = meta.value("general.architecture")
    if not isinstance(arch, str) or not arch:
        raise _fail(path, "general.architecture is missing")
    layers = meta.integer(f"{arch}.block_count")
    if not layers:
        raise _fail(path, f"{arch}.block_count is missing")
    if not reader.tensors:
        raise _fail(path, "the file holds no tensors")

    params_by_type: dict[str, int] = {}
    bytes_by_type: dict[str, int] = {}
    end = 0
    total = embed = expert = 0
    has_output = False
    moe_blocks: set[int] = set()
    for t in reader.tensors:
        block, type_size = quant_sizes[t.tensor_type]
        n = int(t.n_elements)
        if n % block:
            raise _fail(path, f"tensor {t.name} has {n} elements, not whole {block}-blocks")
        nbytes = n // block * type_size
        type_name = t.tensor_type.name
        params_by_type[type_name] = params_by_type.get(type_name, 0) + n
        bytes_by_type[type_name] = bytes_by_type.get(type_name, 0) + nbytes
        end = max(end, int(t.data_offset) + nbytes)
        total += n
        if t.name == "token_embd.weight":
            embed = n
        elif t.name == "output.weight":
            has_output = True
        if _EXPERT_TENSOR.search(t.name):
            expert += n
            if m := _BLOCK.match(t.name):
                moe_blocks.add(int(m.group(1)))
    if end > size:
        raise _fail(path, f"truncated: tensor data runs to byte {end:,}, the file has {size:,}")

    groups = tuple(
        TensorGroup(type_name, params, weight_format_of_gguf_type(type_name))
        for type_name, params in sorted(params_by_type.items(), key=lambda kv: -kv[1])
    )
    hidden = meta.integer(f"{arch}.embedding_length")
    heads = meta.integer(f"{arch}.attention.head_count")
    experts = None
    active = total
    routed = meta.integer(f"{arch}.expert_count")
    if routed and expert:
        used = meta.integer(f"{arch}.expert_used_count") or routed
        per_layer = len(moe_blocks) or layers
        experts = ExpertSpec(
            routed=routed,
            active=used,
            shared=meta.integer(f"{arch}.expert_shared_count") or 0,
            params_per_expert=expert // (routed * per_layer),
            moe_layers=per_layer,
        )
        # Same convention as the config importer: idle experts and the (untied) input
        # embedding table are not active.
        active = total - expert // routed * (routed - used) - (embed if has_output else 0)
    vocab = meta.array_len("tokenizer.ggml.tokens") or meta.integer(f"{arch}.vocab_size")
    label = name or meta.value("general.name") or arch
    spec = ModelSpec(
        name=str(label),
        total_params=total,
        active_params=active,
        layers=layers,
        attention=_attention(meta, arch, layers, heads, hidden),
        experts=experts,
        tensor_groups=groups,
        weight_format=groups[0].weight_format,
        attention_heads=heads,
        hidden_size=hidden,
        vocab_size=vocab,
        max_context_tokens=meta.integer(f"{arch}.context_length"),
        checkpoint_bytes=size,
        slug=re.sub(r"[^a-z0-9.]+", "-", str(label).lower()).strip("-"),
    )
    return GGUFHeader(spec, bytes_by_type, len(reader.tensors), arch)
