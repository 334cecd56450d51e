"""Weight formats and element dtypes: bytes per weight with scales included.

Sources: OCP Microscaling Formats (MX) v1.0 spec (MXFP4: 32 x 4-bit + one 8-bit E8M0 scale);
NVIDIA NVFP4 (16 x 4-bit + one fp8 E4M3 scale, plus a per-tensor fp32 scale we ignore);
ggml's block layouts in ggml-common.h (block sizes and byte counts below).
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import SizingError


@dataclass(frozen=True)
class WeightFormat:
    name: str
    bits_per_weight: float
    description: str

    @property
    def bytes_per_weight(self) -> float:
        return self.bits_per_weight / 8


def _f(name: str, bits: float, description: str) -> WeightFormat:
    return WeightFormat(name, bits, description)


WEIGHT_FORMATS: dict[str, WeightFormat] = {
    f.name: f
    for f in (
        _f("fp32", 32, "32-bit float"),
        _f("bf16", 16, "bfloat16, 2 bytes a weight"),
        _f("fp16", 16, "float16, 2 bytes a weight"),
        _f("fp8", 8, "fp8 (E4M3/E5M2), 1 byte a weight; per-channel scales negligible"),
        _f("int8", 8, "int8 with per-channel scales (negligible)"),
        _f("mxfp4", 4.25, "MXFP4: 4 bits + one 8-bit scale per 32 weights = 0.53125 B"),
        _f("nvfp4", 4.5, "NVFP4: 4 bits + one fp8 scale per 16 weights = 0.5625 B"),
        _f("int4-g128", 4.125, "int4 with one fp16 scale per 128 weights (GPTQ/AWQ) ~ 0.516 B"),
        # GGUF block types: bits = block bytes * 8 / block weights (ggml-common.h).
        _f("Q8_0", 8.5, "GGUF Q8_0: 32 weights in 34 bytes"),
        _f("Q6_K", 6.5625, "GGUF Q6_K: 256 weights in 210 bytes"),
        _f("Q5_K", 5.5, "GGUF Q5_K: 256 weights in 176 bytes"),
        _f("Q5_0", 5.5, "GGUF Q5_0: 32 weights in 22 bytes"),
        _f("Q4_K", 4.5, "GGUF Q4_K: 256 weights in 144 bytes"),
        _f("Q4_0", 4.5, "GGUF Q4_0: 32 weights in 18 bytes"),
        _f("Q4_1", 5.0, "GGUF Q4_1: 32 weights in 20 bytes"),
        _f("Q3_K", 3.4375, "GGUF Q3_K: 256 weights in 110 bytes"),
        _f("Q2_K", 2.625, "GGUF Q2_K: 256 weights in 84 bytes"),
        _f("MXFP4_GGUF", 4.25, "GGUF MXFP4: 32 weights in 17 bytes"),
        # The rest of ggml's types (gguf.GGML_QUANT_SIZES), so any GGUF file can be sized.
        _f("Q5_1", 6.0, "GGUF Q5_1: 32 weights in 24 bytes"),
        _f("Q8_1", 10.0, "GGUF Q8_1: 32 weights in 40 bytes"),
        _f("Q8_K", 9.125, "GGUF Q8_K: 256 weights in 292 bytes"),
        _f("IQ4_NL", 4.5, "GGUF IQ4_NL: 32 weights in 18 bytes"),
        _f("IQ4_XS", 4.25, "GGUF IQ4_XS: 256 weights in 136 bytes"),
        _f("IQ3_S", 3.4375, "GGUF IQ3_S: 256 weights in 110 bytes"),
        _f("IQ3_XXS", 3.0625, "GGUF IQ3_XXS: 256 weights in 98 bytes"),
        _f("IQ2_S", 2.5625, "GGUF IQ2_S: 256 weights in 82 bytes"),
        _f("IQ2_XS", 2.3125, "GGUF IQ2_XS: 256 weights in 74 bytes"),
        _f("IQ2_XXS", 2.0625, "GGUF IQ2_XXS: 256 weights in 66 bytes"),
        _f("IQ1_M", 1.75, "GGUF IQ1_M: 256 weights in 56 bytes"),
        _f("IQ1_S", 1.5625, "GGUF IQ1_S: 256 weights in 50 bytes"),
        _f("TQ2_0", 2.0625, "GGUF TQ2_0 (ternary): 256 weights in 66 bytes"),
        _f("TQ1_0", 1.6875, "GGUF TQ1_0 (ternary): 256 weights in 54 bytes"),
        _f("Q1_0", 1.125, "GGUF Q1_0: 128 weights in 18 bytes"),
        _f("F64", 64, "GGUF F64: 64-bit float"),
        _f("I64", 64, "GGUF I64: 64-bit integer"),
        _f("I32", 32, "GGUF I32: 32-bit integer"),
        _f("I16", 16, "GGUF I16: 16-bit integer"),
        _f("I8", 8, "GGUF I8: 8-bit integer"),
        # The article's idealised rows, only when a user asks for them.
        _f("4-bit", 4, "idealised 4-bit, 0.5 B a weight, no scales (the article's table)"),
        _f("2-bit", 2, "idealised 2-bit, 0.25 B a weight, no scales (the article's table)"),
    )
}

# KV cache / state element dtypes, bytes per element.
KV_DTYPE_BYTES: dict[str, float] = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0}


def weight_format(name: str, field: str = "weight_format") -> WeightFormat:
    try:
        return WEIGHT_FORMATS[name]
    except KeyError:
        known = ", ".join(WEIGHT_FORMATS)
        raise SizingError(field, f"unknown weight format {name!r}; known: {known}") from None


def kv_dtype_bytes(name: str, field: str = "kv_dtype") -> float:
    try:
        return KV_DTYPE_BYTES[name]
    except KeyError:
        known = ", ".join(KV_DTYPE_BYTES)
        raise SizingError(field, f"unknown KV dtype {name!r}; known: {known}") from None
