"""Importers: a ModelSpec from a Hugging Face config.json, a safetensors index or a GGUF header.

Only the GGUF reader needs third-party code (gguf, numpy), imported inside it when called.
"""

from .gguf_header import GGUFHeader, model_from_gguf, read_gguf, weight_format_of_gguf_type
from .hf_config import (
    SUPPORTED_ARCHITECTURES,
    ParamCount,
    count_hf_params,
    import_hf_config,
    model_from_hf_config,
)
from .safetensors_index import (
    SafetensorsIndex,
    model_from_safetensors_index,
    read_safetensors_index,
)

__all__ = [
    "SUPPORTED_ARCHITECTURES",
    "GGUFHeader",
    "ParamCount",
    "SafetensorsIndex",
    "count_hf_params",
    "import_hf_config",
    "model_from_gguf",
    "model_from_hf_config",
    "model_from_safetensors_index",
    "read_gguf",
    "read_safetensors_index",
    "weight_format_of_gguf_type",
]
