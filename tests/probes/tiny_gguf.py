"""A tiny llama-architecture GGUF with random f32 weights that llama.cpp loads and samples from.

What llama.cpp needs (checked on these machines): the `llama` architecture, f32 tensors, and a
byte-level `gpt2` tokenizer — all 256 byte tokens in GPT-2's byte-to-unicode spelling, plus at
least one merge (the BPE loader refuses an empty merge list).
"""

from pathlib import Path

import gguf
import numpy as np

N_EMBD = 64
N_HEAD = 4
N_HEAD_KV = 2
N_LAYER = 2
N_FF = 128
N_CTX = 512


def _byte_tokens() -> list[str]:
    """GPT-2's bytes_to_unicode(): every byte as a printable character."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    chars, n = [], 0
    table = {}
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + n)
            n += 1
    chars = [table[b] for b in range(256)]
    return chars


def write_tiny_gguf(path: Path, *, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    merges = ["Ġ t", "Ġ a", "h e", "i n", "Ġt he"]
    tokens = _byte_tokens() + ["Ġt", "Ġa", "he", "in", "Ġthe", "<|endoftext|>"]
    eos = len(tokens) - 1
    vocab = len(tokens)

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("k3planner-tiny-test")
    writer.add_context_length(N_CTX)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_LAYER)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD_KV)
    writer.add_rope_dimension_count(N_EMBD // N_HEAD)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)

    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types([gguf.TokenType.NORMAL] * (vocab - 1) + [gguf.TokenType.CONTROL])
    writer.add_token_merges(merges)
    writer.add_bos_token_id(eos)
    writer.add_eos_token_id(eos)
    writer.add_add_bos_token(False)
    # A plain template, so the chat endpoint needs no guessing.
    writer.add_chat_template(
        "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}assistant:"
    )

    def tensor(name: str, *shape: int, scale: float = 0.2) -> None:
        writer.add_tensor(name, (rng.standard_normal(shape) * scale).astype(np.float32))

    head_dim = N_EMBD // N_HEAD
    tensor("token_embd.weight", vocab, N_EMBD)
    writer.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    tensor("output.weight", vocab, N_EMBD)
    for i in range(N_LAYER):
        writer.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        tensor(f"blk.{i}.attn_q.weight", N_EMBD, N_EMBD)
        tensor(f"blk.{i}.attn_k.weight", N_HEAD_KV * head_dim, N_EMBD)
        tensor(f"blk.{i}.attn_v.weight", N_HEAD_KV * head_dim, N_EMBD)
        tensor(f"blk.{i}.attn_output.weight", N_EMBD, N_EMBD)
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        tensor(f"blk.{i}.ffn_gate.weight", N_FF, N_EMBD)
        tensor(f"blk.{i}.ffn_up.weight", N_FF, N_EMBD)
        tensor(f"blk.{i}.ffn_down.weight", N_EMBD, N_FF)

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
