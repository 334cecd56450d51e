"""Import a model from a Hugging Face ``config.json``: parameters, attention layout, experts.

Parameters are counted tensor by tensor from each architecture's modeling code (the
``transformers`` classes, or the vendor's remote code for Kimi-Linear and MiniMax-M2), so the
totals match what the checkpoint holds. Conventions, the same for every architecture:

* total = every weight of the served model: embeddings, the LM head unless tied, attention
  (projections, biases, norms, sinks), MLP / MoE (routed experts, shared experts, router and its
  score-correction bias), the per-layer norms and the final norm.
* multi-token-prediction (MTP) modules are not counted: servers load them only for speculative
  decoding. DeepSeek-V3's 671B leaves its MTP module out (685B with it; ``include_mtp=True``
  adds it as the checkpoint stores it). Without MTP, Qwen3-Next counts 79.7B (published 80B;
  81B with it); GLM-4.5's one MTP layer (~4B) moves its total within 1% of 355B either way.
* active, for a mixture of experts = total - the routed experts a token does not use - the input
  embedding table (a token reads one row of it: a lookup, not a matmul); the LM head is active.
  This is gpt-oss's and DeepSeek's published convention (gpt-oss-120b 5.13B, DeepSeek-V3 36.6B
  "including 0.9B for the output head"). Qwen and Mistral also count the embedding table, so
  their published active figures run ~0.1-0.6B above ours. For a dense model active = total.
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ..errors import SizingError
from ..formats import WEIGHT_FORMATS, weight_format
from ..specs import FULL, LINEAR, MLA, SLIDING, AttentionGroup, ExpertSpec, ModelSpec, TensorGroup
from ._fields import Fields

# ---------------------------------------------------------------------------------------------
# Tensors


@dataclass(frozen=True)
class _Tensor:
    """One weight (or ``count`` identical ones, e.g. the experts of a layer): out x in."""

    path: str  # representative HF module path, matched against quantization ignore lists
    role: str  # embed / head / attention / mlp / expert / shared_expert / router / norm
    rows: int  # out_features (or the length of a vector)
    cols: int = 1  # in_features
    count: int = 1
    linear: bool = False  # a matmul weight a quantizer converts (not a norm, bias or router)

    @property
    def params(self) -> int:
        return self.rows * self.cols * self.count


def _vec(path: str, role: str, n: int, count: int = 1) -> _Tensor:
    return _Tensor(path, role, n, 1, count)


def _lin(path: str, role: str, out_f: int, in_f: int, count: int = 1) -> _Tensor:
    return _Tensor(path, role, out_f, in_f, count, linear=True)


@dataclass(frozen=True)
class ParamCount:
    """What was counted, for the UI and the tests."""

    total: int
    active: int
    by_role: tuple[tuple[str, int], ...]
    notes: tuple[str, ...] = ()


@dataclass
class _Model:
    """What an architecture reader produces, before formats are assigned."""

    tensors: list[_Tensor] = field(default_factory=list)
    layer_attention: list[AttentionGroup] = field(default_factory=list)
    experts: ExpertSpec | None = None
    notes: list[str] = field(default_factory=list)
    max_context: int | None = None
    heads: int | None = None

    def add(self, *tensors: _Tensor) -> None:
        self.tensors.extend(tensors)


# ---------------------------------------------------------------------------------------------
# Shared building blocks


@dataclass(frozen=True)
class _Base:
    hidden: int
    layers: int
    vocab: int
    heads: int
    tied: bool


def _base(c: Fields) -> _Base:
    return _Base(
        hidden=c.integer("hidden_size"),
        layers=c.integer("num_hidden_layers"),
        vocab=c.integer("vocab_size"),
        heads=c.integer("num_attention_heads"),
        tied=c.flag("tie_word_embeddings", False),
    )


def _embeddings(m: _Model, b: _Base) -> None:
    # Tied: the one matrix is also the LM head, which every token multiplies by.
    m.add(_Tensor("model.embed_tokens", "head" if b.tied else "embed", b.vocab, b.hidden))
    if not b.tied:
        m.add(_Tensor("lm_head", "head", b.vocab, b.hidden))
    m.add(_vec("model.norm", "norm", b.hidden))


def _layer_norms(m: _Model, b: _Base, i: int) -> None:
    m.add(_vec(f"model.layers.{i}.input_layernorm", "norm", b.hidden))
    m.add(_vec(f"model.layers.{i}.post_attention_layernorm", "norm", b.hidden))


def _kv_heads(c: Fields, heads: int) -> int:
    kv = c.integer("num_key_value_heads", heads)  # HF's default: plain multi-head attention
    if heads % kv:
        raise SizingError(
            "num_key_value_heads", f"{kv} does not divide num_attention_heads ({heads})"
        )
    return kv


def _head_dim(c: Fields, b: _Base) -> int:
    if c.has("head_dim"):
        return c.integer("head_dim")
    if b.hidden % b.heads:
        raise SizingError(
            "head_dim",
            f"missing, and hidden_size ({b.hidden}) is not a multiple of "
            f"num_attention_heads ({b.heads})",
        )
    return b.hidden // b.heads


def _gqa(
    m: _Model,
    b: _Base,
    i: int,
    kv: int,
    hd: int,
    *,
    qkv_bias: bool = False,
    o_bias: bool = False,
    q_out_factor: int = 1,
    qk_norm: int = 0,
    k_norm: int | None = None,
) -> None:
    """q/k/v/o projections of grouped-query attention (MHA and MQA are special cases)."""
    p = f"model.layers.{i}.self_attn"
    q_out, kv_out = b.heads * hd, kv * hd
    m.add(
        _lin(f"{p}.q_proj", "attention", q_out * q_out_factor, b.hidden),
        _lin(f"{p}.k_proj", "attention", kv_out, b.hidden),
        _lin(f"{p}.v_proj", "attention", kv_out, b.hidden),
        _lin(f"{p}.o_proj", "attention", b.hidden, q_out),
    )
    if qkv_bias:
        m.add(
            _vec(f"{p}.q_proj.bias", "attention", q_out * q_out_factor),
            _vec(f"{p}.k_proj.bias", "attention", kv_out),
            _vec(f"{p}.v_proj.bias", "attention", kv_out),
        )
    if o_bias:
        m.add(_vec(f"{p}.o_proj.bias", "attention", b.hidden))
    if qk_norm:
        m.add(_vec(f"{p}.q_norm", "attention", qk_norm))
        m.add(_vec(f"{p}.k_norm", "attention", qk_norm if k_norm is None else k_norm))


def _glu(
    m: _Model, prefix: str, role: str, hidden: int, inter: int, count: int = 1, names: str = "hf"
) -> None:
    """A gated (SwiGLU) MLP: gate/up hidden->inter, down inter->hidden."""
    hf = ("gate_proj", "up_proj", "down_proj")
    gate, up, down = ("w1", "w3", "w2") if names == "mixtral" else hf
    m.add(
        _lin(f"{prefix}.{gate}", role, inter, hidden, count),
        _lin(f"{prefix}.{up}", role, inter, hidden, count),
        _lin(f"{prefix}.{down}", role, hidden, inter, count),
    )


def _moe_spec(
    routed: int,
    active: int,
    shared: int,
    per_expert: int,
    layers: int,
    key: str = "num_experts_per_tok",
) -> ExpertSpec:
    if active > routed:
        raise SizingError(key, f"{active} experts per token but only {routed} routed experts")
    return ExpertSpec(routed, active, shared, per_expert, layers)


def _full(kv: int, hd: int) -> AttentionGroup:
    return AttentionGroup(FULL, 1, kv_heads=kv, head_dim=hd)


def _sliding(kv: int, hd: int, window: int) -> AttentionGroup:
    return AttentionGroup(SLIDING, 1, kv_heads=kv, head_dim=hd, window_tokens=window)


def _layer_kinds(c: Fields, b: _Base, default: str = "full_attention") -> list[str]:
    """Per-layer attention kind: ``layer_types`` when present, else Qwen/Mistral sliding rules."""
    if c.has("layer_types"):
        kinds = c.data["layer_types"]
        if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds):
            raise SizingError("layer_types", "must be a list of strings")
        if len(kinds) != b.layers:
            raise SizingError(
                "layer_types", f"has {len(kinds)} entries for {b.layers} num_hidden_layers"
            )
        return list(kinds)
    if not c.has("use_sliding_window"):
        # Mistral / Mixtral: a non-null sliding_window applies to every layer.
        kind = "sliding_attention" if c.has("sliding_window") else default
        return [kind] * b.layers
    if not c.flag("use_sliding_window", False):
        return [default] * b.layers
    # Qwen2/Qwen3: the first max_window_layers layers keep full attention.
    first_full = c.integer("max_window_layers", b.layers, minimum=0)
    return ["full_attention" if i < first_full else "sliding_attention" for i in range(b.layers)]


def _gqa_attention(c: Fields, kinds: list[str], kv: int, hd: int) -> list[AttentionGroup]:
    out = []
    for kind in kinds:
        if kind == "full_attention":
            out.append(_full(kv, hd))
        elif kind == "sliding_attention":
            out.append(_sliding(kv, hd, c.integer("sliding_window")))
        else:
            raise SizingError("layer_types", f"attention kind {kind!r} is not supported here")
    return out


# ---------------------------------------------------------------------------------------------
# Architectures


def _llama_like(c: Fields, arch: str) -> _Model:
    """Llama, Mistral, Qwen2, Qwen3 and their MoE siblings Mixtral and Qwen3-MoE."""
    b = _base(c)
    m = _Model(heads=b.heads, max_context=c.opt_integer("max_position_embeddings"))
    kv, hd = _kv_heads(c, b.heads), _head_dim(c, b)
    _embeddings(m, b)
    qwen2 = arch == "Qwen2ForCausalLM"  # Qwen2 hard-codes a bias on q, k and v (not o)
    qwen3 = arch in ("Qwen3ForCausalLM", "Qwen3MoeForCausalLM")
    attn_bias = c.flag("attention_bias", False)
    mlp_bias = c.flag("mlp_bias", False)

    moe_layers: set[int] = set()
    routed = active = inter_e = 0
    if arch == "MixtralForCausalLM":
        routed = c.integer("num_local_experts")
        active = c.integer("num_experts_per_tok")
        inter_e = c.integer("intermediate_size")
        moe_layers = set(range(b.layers))
    elif arch == "Qwen3MoeForCausalLM":
        routed = c.integer("num_experts")
        active = c.integer("num_experts_per_tok")
        inter_e = c.integer("moe_intermediate_size")
        step = c.integer("decoder_sparse_step", 1)
        dense_only = set(c.int_list("mlp_only_layers", []))
        moe_layers = {i for i in range(b.layers) if i not in dense_only and (i + 1) % step == 0}

    inter = c.integer("intermediate_size") if len(moe_layers) < b.layers else 0
    for i in range(b.layers):
        bias = attn_bias or qwen2
        _gqa(m, b, i, kv, hd, qkv_bias=bias, o_bias=attn_bias, qk_norm=hd if qwen3 else 0)
        _layer_norms(m, b, i)
        if i in moe_layers:
            names = "mixtral" if arch == "MixtralForCausalLM" else "hf"
            p = f"model.layers.{i}." + ("block_sparse_moe" if names == "mixtral" else "mlp")
            m.add(_Tensor(f"{p}.gate", "router", routed, b.hidden))
            _glu(m, f"{p}.experts.0", "expert", b.hidden, inter_e, routed, names)
        else:
            _glu(m, f"model.layers.{i}.mlp", "mlp", b.hidden, inter)
            if mlp_bias:
                m.add(_vec(f"model.layers.{i}.mlp.bias", "mlp", 2 * inter + b.hidden))
    if moe_layers:
        m.experts = _moe_spec(routed, active, 0, 3 * b.hidden * inter_e, len(moe_layers))
    m.layer_attention = _gqa_attention(c, _layer_kinds(c, b), kv, hd)
    return m


def _mla_attention(m: _Model, c: Fields, b: _Base, i: int) -> AttentionGroup:
    """DeepSeek-V3 multi-head latent attention (also Kimi K2 and Kimi-Linear's full layers)."""
    p = f"model.layers.{i}.self_attn"
    nope, rope = c.integer("qk_nope_head_dim"), c.integer("qk_rope_head_dim")
    v_dim, kv_rank = c.integer("v_head_dim"), c.integer("kv_lora_rank")
    q_rank = c.opt_integer("q_lora_rank")
    q_out = b.heads * (nope + rope)
    if q_rank is None:
        m.add(_lin(f"{p}.q_proj", "attention", q_out, b.hidden))
    else:
        m.add(
            _lin(f"{p}.q_a_proj", "attention", q_rank, b.hidden),
            _vec(f"{p}.q_a_layernorm", "attention", q_rank),
            _lin(f"{p}.q_b_proj", "attention", q_out, q_rank),
        )
    m.add(
        _lin(f"{p}.kv_a_proj_with_mqa", "attention", kv_rank + rope, b.hidden),
        _vec(f"{p}.kv_a_layernorm", "attention", kv_rank),
        _lin(f"{p}.kv_b_proj", "attention", b.heads * (nope + v_dim), kv_rank),
        _lin(f"{p}.o_proj", "attention", b.hidden, b.heads * v_dim),
    )
    return AttentionGroup(MLA, 1, kv_lora_rank=kv_rank, qk_rope_head_dim=rope)


def _deepseek_moe(
    m: _Model, b: _Base, i: int, routed: int, inter_e: int, shared_inter: int, corr_bias: bool
) -> None:
    p = f"model.layers.{i}.mlp"
    m.add(_Tensor(f"{p}.gate", "router", routed, b.hidden))
    if corr_bias:
        m.add(_vec(f"{p}.gate.e_score_correction_bias", "router", routed))
    _glu(m, f"{p}.experts.0", "expert", b.hidden, inter_e, routed)
    if shared_inter:
        _glu(m, f"{p}.shared_experts", "shared_expert", b.hidden, shared_inter)


def _deepseek_v3(c: Fields, arch: str, include_mtp: bool = False) -> _Model:
    """DeepSeek-V3 / R1 and Kimi K2 (same modeling code, different sizes)."""
    b = _base(c)
    m = _Model(heads=b.heads, max_context=c.opt_integer("max_position_embeddings"))
    _embeddings(m, b)
    routed = c.integer("n_routed_experts")
    active = c.integer("num_experts_per_tok")
    inter_e = c.integer("moe_intermediate_size")
    shared = c.integer("n_shared_experts", 0, minimum=0)
    first_dense = c.integer("first_k_dense_replace", 0, minimum=0)
    freq = c.integer("moe_layer_freq", 1)
    inter = c.integer("intermediate_size")
    corr_bias = c.text("topk_method", "") == "noaux_tc"

    def is_moe(i: int) -> bool:
        return i >= first_dense and i % freq == 0

    def layer(i: int) -> AttentionGroup:
        group = _mla_attention(m, c, b, i)
        _layer_norms(m, b, i)
        if is_moe(i):
            _deepseek_moe(m, b, i, routed, inter_e, inter_e * shared, corr_bias)
        else:
            _glu(m, f"model.layers.{i}.mlp", "mlp", b.hidden, inter)
        return group

    m.layer_attention = [layer(i) for i in range(b.layers)]
    moe = sum(1 for i in range(b.layers) if is_moe(i))
    m.experts = _moe_spec(routed, active, shared, 3 * b.hidden * inter_e, moe)

    mtp = c.integer("num_nextn_predict_layers", 0, minimum=0)
    if mtp and include_mtp:
        # DeepSeek's checkpoint stores each MTP module as layer N: a full decoder layer plus
        # enorm, hnorm, eh_proj, and its own copies of embed_tokens and shared_head (norm, head).
        before = len(m.tensors)
        for j in range(b.layers, b.layers + mtp):
            layer(j)
            p = f"model.layers.{j}"
            m.add(
                _vec(f"{p}.enorm", "mtp", b.hidden),
                _vec(f"{p}.hnorm", "mtp", b.hidden),
                _lin(f"{p}.eh_proj", "mtp", b.hidden, 2 * b.hidden),
                _Tensor(f"{p}.embed_tokens", "mtp", b.vocab, b.hidden),
                _vec(f"{p}.shared_head.norm", "mtp", b.hidden),
                _Tensor(f"{p}.shared_head.head", "mtp", b.vocab, b.hidden),
            )
        # Speculative-decoding weights: in the total, never in the active count.
        m.tensors[before:] = [_as_mtp(t) for t in m.tensors[before:]]
        m.notes.append(f"{mtp} MTP module(s) counted in the total (include_mtp=True)")
    elif mtp:
        m.notes.append(f"{mtp} MTP module(s) not counted (speculative decoding only)")
    return m


def _as_mtp(t: _Tensor) -> _Tensor:
    return _Tensor(t.path, "mtp", t.rows, t.cols, t.count, t.linear)


def _glm4_moe(c: Fields, arch: str) -> _Model:
    """GLM-4.5 / 4.6 / 4.7 and GLM-4.5-Air: GQA with q/k/v bias, DeepSeek-style MoE."""
    b = _base(c)
    m = _Model(heads=b.heads, max_context=c.opt_integer("max_position_embeddings"))
    kv, hd = _kv_heads(c, b.heads), _head_dim(c, b)
    _embeddings(m, b)
    routed = c.integer("n_routed_experts")
    active = c.integer("num_experts_per_tok")
    inter_e = c.integer("moe_intermediate_size")
    shared = c.integer("n_shared_experts", 0, minimum=0)
    first_dense = c.integer("first_k_dense_replace", 0, minimum=0)
    inter = c.integer("intermediate_size")
    qk_norm = hd if c.flag("use_qk_norm", False) else 0
    for i in range(b.layers):
        _gqa(m, b, i, kv, hd, qkv_bias=c.flag("attention_bias", False), qk_norm=qk_norm)
        _layer_norms(m, b, i)
        if i >= first_dense:
            _deepseek_moe(m, b, i, routed, inter_e, inter_e * shared, corr_bias=True)
        else:
            _glu(m, f"model.layers.{i}.mlp", "mlp", b.hidden, inter)
    m.experts = _moe_spec(routed, active, shared, 3 * b.hidden * inter_e, b.layers - first_dense)
    m.layer_attention = [_full(kv, hd)] * b.layers
    mtp = c.integer("num_nextn_predict_layers", 0, minimum=0)
    if mtp:
        m.notes.append(f"{mtp} MTP layer(s) not counted (speculative decoding only)")
    return m


def _gpt_oss(c: Fields, arch: str) -> _Model:
    """gpt-oss: GQA with biases and per-head attention sinks, MoE with biased experts."""
    b = _base(c)
    m = _Model(heads=b.heads, max_context=c.opt_integer("max_position_embeddings"))
    kv, hd = _kv_heads(c, b.heads), _head_dim(c, b)
    _embeddings(m, b)
    routed = c.integer("num_local_experts")
    # Both keys are in gpt-oss's config; experts_per_token is the original name.
    k_key = "num_experts_per_tok" if c.has("num_experts_per_tok") else "experts_per_token"
    active = c.integer(k_key)
    inter = c.integer("intermediate_size")
    bias = c.flag("attention_bias", True)
    for i in range(b.layers):
        _gqa(m, b, i, kv, hd, qkv_bias=bias, o_bias=bias)
        p = f"model.layers.{i}"
        m.add(_vec(f"{p}.self_attn.sinks", "attention", b.heads))
        _layer_norms(m, b, i)
        m.add(
            _Tensor(f"{p}.mlp.router", "router", routed, b.hidden),
            _vec(f"{p}.mlp.router.bias", "router", routed),
            # gate and up are fused: gate_up_proj is [E, hidden, 2 x inter].
            _lin(f"{p}.mlp.experts.gate_up_proj", "expert", 2 * inter, b.hidden, routed),
            _vec(f"{p}.mlp.experts.gate_up_proj_bias", "expert", 2 * inter, routed),
            _lin(f"{p}.mlp.experts.down_proj", "expert", b.hidden, inter, routed),
            _vec(f"{p}.mlp.experts.down_proj_bias", "expert", b.hidden, routed),
        )
    per_expert = 3 * b.hidden * inter + 2 * inter + b.hidden
    m.experts = _moe_spec(routed, active, 0, per_expert, b.layers, k_key)
    m.layer_attention = _gqa_attention(c, _layer_kinds(c, b), kv, hd)
    return m


def _minimax_m2(c: Fields, arch: str) -> _Model:
    """MiniMax-M2 (vendor remote code): GQA with q/k norms, 256-expert MoE, no shared expert."""
    b = _base(c)
    m = _Model(heads=b.heads, max_context=c.opt_integer("max_position_embeddings"))
    kv, hd = _kv_heads(c, b.heads), _head_dim(c, b)
    _embeddings(m, b)
    routed = c.integer("num_local_experts")
    active = c.integer("num_experts_per_tok")
    inter_e = c.integer("intermediate_size")
    shared_inter = c.integer("shared_intermediate_size", 0, minimum=0)
    if shared_inter:
        raise SizingError("shared_intermediate_size", "MiniMax shared experts are not supported")
    kinds = c.int_list("attn_type_list", [1] * b.layers)
    if len(kinds) != b.layers or any(k != 1 for k in kinds):
        # 0 is MiniMax-01's lightning (linear) attention; M2 uses softmax attention throughout.
        raise SizingError("attn_type_list", "only full softmax attention (1) layers are supported")
    per_layer_norm = c.text("qk_norm_type", "per_layer") == "per_layer"
    q_norm = (b.heads * hd if per_layer_norm else hd) if c.flag("use_qk_norm", False) else 0
    k_norm = kv * hd if per_layer_norm else hd
    for i in range(b.layers):
        _gqa(m, b, i, kv, hd, qk_norm=q_norm, k_norm=k_norm)
        _layer_norms(m, b, i)
        p = f"model.layers.{i}.block_sparse_moe"
        m.add(_Tensor(f"{p}.gate", "router", routed, b.hidden))
        if c.flag("use_routing_bias", False):
            m.add(_vec(f"{p}.e_score_correction_bias", "router", routed))
        _glu(m, f"{p}.experts.0", "expert", b.hidden, inter_e, routed, names="mixtral")
    m.experts = _moe_spec(routed, active, 0, 3 * b.hidden * inter_e, b.layers)
    m.layer_attention = [_full(kv, hd)] * b.layers
    if c.flag("use_mtp", False):
        m.notes.append(
            f"{c.integer('num_mtp_modules', 0, minimum=0)} MTP module(s) not counted "
            "(speculative decoding only)"
        )
    return m


def _qwen3_next(c: Fields, arch: str) -> _Model:
    """Qwen3-Next: Gated DeltaNet layers with a gated full-attention layer every N, MoE."""
    b = _base(c)
    m = _Model(heads=b.heads, max_context=c.opt_integer("max_position_embeddings"))
    kv, hd = _kv_heads(c, b.heads), _head_dim(c, b)
    _embeddings(m, b)
    interval = c.integer("full_attention_interval")
    k_heads, v_heads = c.integer("linear_num_key_heads"), c.integer("linear_num_value_heads")
    k_dim, v_dim = c.integer("linear_key_head_dim"), c.integer("linear_value_head_dim")
    kernel = c.integer("linear_conv_kernel_dim")
    if v_heads % k_heads:
        raise SizingError(
            "linear_num_value_heads", f"{v_heads} is not a multiple of linear_num_key_heads"
        )
    key_total, value_total = k_heads * k_dim, v_heads * v_dim
    conv_dim = 2 * key_total + value_total  # q, k and v all pass the short convolution
    routed = c.integer("num_experts")
    active = c.integer("num_experts_per_tok")
    inter_e = c.integer("moe_intermediate_size")
    shared_inter = c.integer("shared_expert_intermediate_size", 0, minimum=0)
    step = c.integer("decoder_sparse_step", 1)
    dense_only = set(c.int_list("mlp_only_layers", []))
    moe_layers = [i for i in range(b.layers) if i not in dense_only and (i + 1) % step == 0]
    inter = c.integer("intermediate_size") if len(moe_layers) < b.layers else 0

    linear_state = AttentionGroup(
        LINEAR,
        1,
        state_heads=v_heads,
        state_key_dim=k_dim,
        state_value_dim=v_dim,
        # vLLM keeps kernel-1 past inputs per conv channel.
        conv_state_elements=conv_dim * (kernel - 1),
        note="Gated DeltaNet",
    )
    for i in range(b.layers):
        p = f"model.layers.{i}"
        if (i + 1) % interval == 0:
            # The output gate doubles q_proj; q/k norms are per head.
            bias = c.flag("attention_bias", False)
            _gqa(m, b, i, kv, hd, q_out_factor=2, qk_norm=hd, qkv_bias=bias)
            m.layer_attention.append(_full(kv, hd))
        else:
            la = f"{p}.linear_attn"
            m.add(
                _lin(f"{la}.in_proj_qkvz", "attention", 2 * key_total + 2 * value_total, b.hidden),
                _lin(f"{la}.in_proj_ba", "attention", 2 * v_heads, b.hidden),
                _Tensor(f"{la}.conv1d", "attention", conv_dim, kernel),
                _vec(f"{la}.dt_bias", "attention", v_heads),
                _vec(f"{la}.A_log", "attention", v_heads),
                _vec(f"{la}.norm", "attention", v_dim),
                _lin(f"{la}.out_proj", "attention", b.hidden, value_total),
            )
            m.layer_attention.append(linear_state)
        _layer_norms(m, b, i)
        if i in moe_layers:
            m.add(_Tensor(f"{p}.mlp.gate", "router", routed, b.hidden))
            _glu(m, f"{p}.mlp.experts.0", "expert", b.hidden, inter_e, routed)
            if shared_inter:
                _glu(m, f"{p}.mlp.shared_expert", "shared_expert", b.hidden, shared_inter)
                m.add(_Tensor(f"{p}.mlp.shared_expert_gate", "shared_expert", 1, b.hidden))
        else:
            _glu(m, f"{p}.mlp", "mlp", b.hidden, inter)
    m.experts = _moe_spec(
        routed, active, 1 if shared_inter else 0, 3 * b.hidden * inter_e, len(moe_layers)
    )
    m.notes.append("MTP layer shipped with the checkpoint not counted (speculative decoding only)")
    return m


def _kimi_linear(c: Fields, arch: str) -> _Model:
    """Kimi-Linear (vendor remote code): KDA linear layers, MLA full layers, DeepSeek-style MoE."""
    b = _base(c)
    ctx = c.opt_integer("max_position_embeddings") or c.opt_integer("model_max_length")
    m = _Model(heads=b.heads, max_context=ctx)
    _embeddings(m, b)
    la = c.sub("linear_attn_config")
    heads, dim = la.integer("num_heads"), la.integer("head_dim")
    kernel = la.integer("short_conv_kernel_size")
    # 1-based layer numbers, as the vendor's is_kda_layer() reads them.
    kda = set(la.int_list("kda_layers", minimum=1))
    if any(n > b.layers for n in kda):
        raise SizingError("linear_attn_config.kda_layers", f"numbers a layer > {b.layers}")
    routed = c.integer("num_experts")
    active = c.integer("num_experts_per_token")
    inter_e = c.integer("moe_intermediate_size")
    shared = c.integer("num_shared_experts", 0, minimum=0)
    first_dense = c.integer("first_k_dense_replace", 0, minimum=0)
    freq = c.integer("moe_layer_freq", 1)
    inter = c.integer("intermediate_size")
    proj = heads * dim
    kda_state = AttentionGroup(
        LINEAR,
        1,
        state_heads=heads,
        state_key_dim=dim,
        state_value_dim=dim,
        conv_state_elements=3 * proj * (kernel - 1),  # q, k and v short convolutions
        note="Kimi Delta Attention",
    )
    moe_layers = 0
    for i in range(b.layers):
        p = f"model.layers.{i}.self_attn"
        if i + 1 in kda:
            m.add(
                _lin(f"{p}.q_proj", "attention", proj, b.hidden),
                _lin(f"{p}.k_proj", "attention", proj, b.hidden),
                _lin(f"{p}.v_proj", "attention", proj, b.hidden),
                _Tensor(f"{p}.q_conv1d", "attention", proj, kernel),
                _Tensor(f"{p}.k_conv1d", "attention", proj, kernel),
                _Tensor(f"{p}.v_conv1d", "attention", proj, kernel),
                _vec(f"{p}.A_log", "attention", heads),
                _lin(f"{p}.f_a_proj", "attention", dim, b.hidden),
                _lin(f"{p}.f_b_proj", "attention", proj, dim),
                _vec(f"{p}.dt_bias", "attention", proj),
                _lin(f"{p}.b_proj", "attention", heads, b.hidden),
                _lin(f"{p}.g_a_proj", "attention", dim, b.hidden),
                _lin(f"{p}.g_b_proj", "attention", proj, dim),
                _vec(f"{p}.o_norm", "attention", dim),
                _lin(f"{p}.o_proj", "attention", b.hidden, proj),
            )
            m.layer_attention.append(kda_state)
        else:
            m.layer_attention.append(_mla_attention(m, c, b, i))
        _layer_norms(m, b, i)
        if i >= first_dense and i % freq == 0:
            moe_layers += 1
            q = f"model.layers.{i}.block_sparse_moe"
            m.add(
                _Tensor(f"{q}.gate", "router", routed, b.hidden),
                _vec(f"{q}.gate.e_score_correction_bias", "router", routed),
            )
            _glu(m, f"{q}.experts.0", "expert", b.hidden, inter_e, routed, names="mixtral")
            if shared:
                _glu(m, f"{q}.shared_experts", "shared_expert", b.hidden, inter_e * shared)
        else:
            _glu(m, f"model.layers.{i}.mlp", "mlp", b.hidden, inter)
    per_expert = 3 * b.hidden * inter_e
    m.experts = _moe_spec(routed, active, shared, per_expert, moe_layers, "num_experts_per_token")
    return m


_READERS: dict[str, Callable[[Fields, str], _Model]] = {
    "LlamaForCausalLM": _llama_like,
    "MistralForCausalLM": _llama_like,
    "MixtralForCausalLM": _llama_like,
    "Qwen2ForCausalLM": _llama_like,
    "Qwen3ForCausalLM": _llama_like,
    "Qwen3MoeForCausalLM": _llama_like,
    "Qwen3NextForCausalLM": _qwen3_next,
    "DeepseekV3ForCausalLM": _deepseek_v3,
    "KimiLinearForCausalLM": _kimi_linear,
    "GptOssForCausalLM": _gpt_oss,
    "Glm4MoeForCausalLM": _glm4_moe,
    "MiniMaxM2ForCausalLM": _minimax_m2,
}
SUPPORTED_ARCHITECTURES: tuple[str, ...] = tuple(_READERS)


# ---------------------------------------------------------------------------------------------
# Weight formats


# torch dtype names in config.json -> formats.py names
_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32"}


def _base_format(c: Fields) -> str:
    key = "torch_dtype" if c.has("torch_dtype") else "dtype"  # newer transformers write "dtype"
    name = c.text(key)
    if name is None:
        return "bf16"
    try:
        return _DTYPES[name]
    except KeyError:
        raise SizingError(key, f"unknown dtype {name!r}; known: {', '.join(_DTYPES)}") from None


def _matches(path: str, pattern: str) -> bool:
    """Match a module path against an HF/compressed-tensors ignore entry."""
    if pattern.startswith("re:"):
        return re.match(pattern[3:], path) is not None
    if "*" in pattern or "?" in pattern:
        return fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(path, pattern + ".*")
    # A bare name ("gate", "lm_head") or a dotted prefix ("model.layers.0."): segment match.
    pattern = pattern.strip(".")
    return f".{pattern}." in f".{path}."


@dataclass(frozen=True)
class _Quant:
    method: str
    fmt: str  # format of the converted weights
    targets: str  # "linear": every matmul weight; "experts": routed expert matrices only
    ignore: tuple[str, ...] = ()
    block: tuple[int, int] | None = None  # fp8 block size: scales are counted
    per_tensor_scale: bool = False  # fp8 without blocks: one fp32 scale per tensor


def _quant(c: Fields) -> _Quant | None:
    q = c.opt_sub("quantization_config")
    if q is None:
        return None
    method = q.text("quant_method")
    if method is None:
        raise SizingError("quantization_config.quant_method", "is required and missing")
    ignore = tuple(q.str_list("modules_to_not_convert")) + tuple(q.str_list("ignore"))
    ignore += tuple(q.str_list("ignored_layers")) + tuple(q.str_list("exclude_modules"))
    if method == "mxfp4":
        return _Quant(method, "mxfp4", "experts", ignore)
    if method == "fp8":
        if not q.has("weight_block_size"):
            return _Quant(method, "fp8", "linear", ignore, per_tensor_scale=True)
        block = q.int_list("weight_block_size", minimum=1)
        if len(block) != 2:
            raise SizingError("quantization_config.weight_block_size", "must be [rows, cols]")
        return _Quant(method, "fp8", "linear", ignore, block=(block[0], block[1]))
    if method in ("awq", "gptq"):
        bits = q.integer("bits")
        group = q.integer("group_size", -1, minimum=-1)
        if bits == 4 and group == 128:
            return _Quant(method, "int4-g128", "linear", ignore)
        if bits == 8:
            return _Quant(method, "int8", "linear", ignore)
        raise SizingError(
            "quantization_config", f"{method} {bits}-bit group {group} has no weight format here"
        )
    if method == "compressed-tensors":
        groups = q.sub("config_groups")
        first = next(iter(groups.data), None)
        if first is None:
            raise SizingError("quantization_config.config_groups", "is empty")
        weights = Fields(groups.data[first], groups.key(first)).sub("weights")
        bits = weights.integer("num_bits")
        kind = weights.text("type") or "int"
        group = weights.integer("group_size", -1, minimum=-1)
        fmt = {(8, "float"): "fp8", (8, "int"): "int8", (4, "float"): "nvfp4"}.get((bits, kind))
        if (bits, kind, group) == (4, "int", 128):
            fmt = "int4-g128"
        if fmt is None or (fmt == "nvfp4" and group != 16):
            raise SizingError(
                "quantization_config",
                f"compressed-tensors {bits}-bit {kind} weights (group {group}) have no weight "
                "format here; pass weight_format to choose one",
            )
        return _Quant(method, fmt, "linear", ignore)
    if method == "modelopt":
        algo = q.text("quant_algo", "")
        fmt = {"NVFP4": "nvfp4", "FP8": "fp8"}.get(algo or "")
        if fmt is None:
            raise SizingError("quantization_config.quant_algo", f"{algo!r} is not supported")
        return _Quant(method, fmt, "linear", ignore)
    known = "mxfp4, fp8, awq, gptq, compressed-tensors, modelopt"
    raise SizingError(
        "quantization_config.quant_method",
        f"{method!r} is not supported; supported: {known}; pass weight_format to override",
    )


def _converted(t: _Tensor, q: _Quant) -> bool:
    if not t.linear or t.role in ("head", "embed"):  # heads stay in high precision
        return False
    if q.targets == "experts" and t.role != "expert":
        return False
    return not any(_matches(t.path, p) for p in q.ignore)


def _scales(t: _Tensor, q: _Quant) -> int:
    if q.block is not None:
        return math.ceil(t.rows / q.block[0]) * math.ceil(t.cols / q.block[1]) * t.count
    return t.count if q.per_tensor_scale else 0


def _tensor_groups(
    tensors: list[_Tensor], base: str, q: _Quant | None
) -> tuple[tuple[TensorGroup, ...], str, list[str]]:
    if q is None:
        return (), base, []
    converted = [t for t in tensors if _converted(t, q)]
    done = {id(t) for t in converted}
    rest = sum(t.params for t in tensors if id(t) not in done)
    what = "routed experts" if q.targets == "experts" else "linear weights"
    groups = [
        TensorGroup(f"{what} ({q.fmt})", sum(t.params for t in converted), q.fmt),
        TensorGroup(f"other weights ({base})", rest, base),
    ]
    notes = []
    scales = sum(_scales(t, q) for t in converted)
    if scales:
        # Scale elements, not model parameters: kept out of total_params, in the bytes.
        groups.append(TensorGroup("fp8 scales (fp32, not parameters)", scales, "fp32"))
        per = f"per {q.block[0]}x{q.block[1]} block" if q.block else "per tensor"
        notes.append(f"{scales:,} fp32 weight scales ({per}) counted in the weight bytes")
    dominant = max(groups[:2], key=lambda g: g.params).weight_format
    return tuple(g for g in groups if g.params), dominant, notes


# ---------------------------------------------------------------------------------------------
# Public API


def _architecture(c: Fields) -> str:
    archs = c.data.get("architectures")
    supported = ", ".join(SUPPORTED_ARCHITECTURES)
    if archs is None:
        raise SizingError("architectures", f"missing; supported: {supported}")
    if not isinstance(archs, list) or not all(isinstance(a, str) for a in archs) or not archs:
        raise SizingError("architectures", "must be a non-empty list of class names")
    for arch in archs:
        if arch in _READERS:
            return arch
    raise SizingError("architectures", f"{', '.join(archs)} not supported; supported: {supported}")


def _read(config: dict, include_mtp: bool) -> tuple[Fields, _Model]:
    c = Fields(config)
    arch = _architecture(c)
    _base_format(c)  # a bad dtype fails first, with its own key
    if arch == "DeepseekV3ForCausalLM":
        return c, _deepseek_v3(c, arch, include_mtp)
    return c, _READERS[arch](c, arch)


def _count(model: _Model, notes: list[str]) -> ParamCount:
    by_role: dict[str, int] = {}
    for t in model.tensors:
        by_role[t.role] = by_role.get(t.role, 0) + t.params
    total = sum(by_role.values())
    active = total - by_role.get("mtp", 0)
    if model.experts is not None:
        # Each expert tensor holds `count` = the routed experts of one layer; a token uses
        # `active` of them. Dense models: every parameter counts as active, as vendors count it.
        k = model.experts.active
        idle = sum(t.params // t.count * (t.count - k) for t in model.tensors if t.role == "expert")
        active -= idle + by_role.get("embed", 0)
    return ParamCount(total, active, tuple(sorted(by_role.items())), tuple(notes))


def _group_attention(layers: list[AttentionGroup]) -> tuple[AttentionGroup, ...]:
    """Merge per-layer entries with identical kind and dimensions, in first-seen order."""
    merged: dict[AttentionGroup, int] = {}
    for g in layers:
        merged[g] = merged.get(g, 0) + g.layers
    return tuple(replace(g, layers=n) for g, n in merged.items())


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", name.lower()).strip("-")


def import_hf_config(
    config: dict,
    *,
    name: str,
    weight_format: str | None = None,
    include_mtp: bool = False,
) -> tuple[ModelSpec, ParamCount]:
    """The ModelSpec and what was counted (per-role breakdown, notes on the choices made)."""
    c, model = _read(config, include_mtp)
    base = _base_format(c)
    notes = list(model.notes)
    if weight_format is not None:
        _check_format(weight_format)
        groups: tuple[TensorGroup, ...] = ()
        fmt = weight_format
        notes.append(f"every parameter sized as {weight_format} (weight_format override)")
    else:
        q = _quant(c)
        groups, fmt, quant_notes = _tensor_groups(model.tensors, base, q)
        notes.extend(quant_notes)
        if q is None and not (c.has("torch_dtype") or c.has("dtype")):
            notes.append("no torch_dtype in the config: weights assumed bf16")
    counted = _count(model, notes)
    spec = ModelSpec(
        name=name,
        total_params=counted.total,
        active_params=counted.active,
        layers=c.integer("num_hidden_layers"),
        attention=_group_attention(model.layer_attention),
        experts=model.experts,
        tensor_groups=groups,
        weight_format=fmt,
        attention_heads=model.heads,
        hidden_size=c.integer("hidden_size"),
        vocab_size=c.integer("vocab_size"),
        max_context_tokens=model.max_context,
        kv_dtype=base if base in ("bf16", "fp16") else "bf16",
        slug=_slug(name),
    )
    return spec, counted


def model_from_hf_config(
    config: dict,
    *,
    name: str,
    weight_format: str | None = None,
    include_mtp: bool = False,
) -> ModelSpec:
    """Build a ModelSpec from a Hugging Face config.json (already parsed into a dict).

    ``weight_format`` overrides the checkpoint's formats: every parameter is sized in it (to
    ask "what if this model were served in fp8?"). Otherwise formats come from
    ``quantization_config`` (per tensor group), else from ``torch_dtype``.
    """
    spec, _ = import_hf_config(
        config, name=name, weight_format=weight_format, include_mtp=include_mtp
    )
    return spec


def count_hf_params(config: dict, *, include_mtp: bool = False) -> ParamCount:
    """Total and active parameters of a config.json, with the per-role breakdown.

    Counting does not depend on the weight formats: quantization_config is not read here.
    """
    _, model = _read(config, include_mtp)
    return _count(model, model.notes)


def _check_format(name: str) -> None:
    if name not in WEIGHT_FORMATS:
        weight_format(name)  # raises SizingError("weight_format", ...)
