"""Names as feeds spell them -> the catalog's accelerators and k3planner's providers.

Pure Python. An accelerator name matches a catalog slug, a catalog name, or an alias below; when
the feed states the memory per GPU it must agree with the catalog's within MEMORY_TOLERANCE.
Anything else is reported as unmatched, never guessed: a 40 GB A100 is not an A100 80GB.
"""

import re
from dataclasses import dataclass

# Accelerator names as the feeds write them (lower case) -> catalog slug.
ACCELERATOR_ALIASES = {
    # SkyPilot / gpuhunt / Shadeform names
    "h100": "h100-80gb",  # SkyPilot's H100 is the 80 GB part (MemoryInfo 81920 MiB)
    "h100-sxm": "h100-80gb",
    "h100-sxm5": "h100-80gb",
    "h100-80gb": "h100-80gb",
    "h100-mega": "h100-80gb",  # GCP A3 Mega: the same H100 80GB with more network
    "h200": "h200-141gb",
    "h200-141gb": "h200-141gb",
    "b200": "b200-192gb",
    "gb300": "gb300-288gb",
    "a100": "a100-80gb",  # only with 80 GB stated: the memory check rejects the 40 GB part
    "a100-80gb": "a100-80gb",
    "l40s": "l40s-48gb",
    "mi300x": "mi300x-192gb",
    "mi325x": "mi325x-256gb",
    "mi355x": "mi355x-288gb",
    "rtx4090": "rtx-4090-24gb",
    "rtx5090": "rtx-5090-32gb",
    "rtx6000-ada": "rtx-6000-ada-48gb",
}
# Names that also exist in a size the catalog lacks: the feed must state the memory.
NEEDS_MEMORY = {"a100", "h100"}
# Feeds state binary GiB or rounded marketing GB; DGX B200 exposes 180 of its 192 GB.
MEMORY_TOLERANCE = 0.10

# Providers k3planner knows: slug -> (name, kind, url, other spellings).
KNOWN_PROVIDERS = {
    "aws": ("AWS", "cloud", "https://aws.amazon.com/ec2/pricing/", ("amazon",)),
    "gcp": (
        "Google Cloud",
        "cloud",
        "https://cloud.google.com/compute/gpus-pricing",
        ("google-cloud",),
    ),
    "azure": ("Microsoft Azure", "cloud", "https://azure.microsoft.com/pricing/", ()),
    "do": (
        "DigitalOcean",
        "cloud",
        "https://www.digitalocean.com/pricing/gpu-droplets",
        ("digitalocean",),
    ),
    "lambda": (
        "Lambda",
        "neocloud",
        "https://lambda.ai/pricing",
        ("lambdalabs", "lambda-labs", "lambda-ai"),
    ),
    "nebius": ("Nebius", "neocloud", "https://nebius.com/prices", ()),
    "verda": ("Verda", "neocloud", "https://verda.com/pricing", ("datacrunch",)),
    "hyperbolic": ("Hyperbolic", "neocloud", "https://hyperbolic.ai/pricing", ()),
    "crusoe": ("Crusoe", "neocloud", "https://crusoe.ai/cloud/pricing", ()),
    "runpod": ("RunPod", "neocloud", "https://www.runpod.io/pricing", ()),
    "shadeform": ("Shadeform", "marketplace", "https://www.shadeform.ai/", ()),
    "vastai": ("Vast.ai", "marketplace", "https://vast.ai/pricing", ("vast",)),
    "openai": ("OpenAI", "api", "https://openai.com/api/pricing/", ()),
    "anthropic": ("Anthropic", "api", "https://www.anthropic.com/pricing", ()),
    "gemini": ("Google Gemini API", "api", "https://ai.google.dev/pricing", ()),
    "deepseek": ("DeepSeek", "api", "https://api-docs.deepseek.com/quick_start/pricing", ()),
    "moonshot": (
        "Moonshot AI",
        "api",
        "https://platform.moonshot.ai/",
        ("moonshotai", "moonshot-ai"),
    ),
    "together": ("Together AI", "api", "https://www.together.ai/pricing", ("together-ai",)),
    "fireworks": ("Fireworks AI", "api", "https://fireworks.ai/pricing", ("fireworks-ai",)),
    "groq": ("Groq", "api", "https://groq.com/pricing", ()),
    "openrouter": ("OpenRouter", "marketplace", "https://openrouter.ai/models", ()),
    "deepinfra": ("DeepInfra", "api", "https://deepinfra.com/pricing", ()),
    "bedrock": ("Amazon Bedrock", "api", "https://aws.amazon.com/bedrock/pricing/", ()),
    "cerebras": ("Cerebras", "api", "https://www.cerebras.ai/pricing", ()),
    "zai": ("Z.ai", "api", "https://z.ai/", ("z-ai",)),
}
_PROVIDER_ALIASES = {
    alias: slug for slug, (*_, aliases) in KNOWN_PROVIDERS.items() for alias in aliases
}


def provider_slug(name: str) -> str:
    """'together_ai' -> 'together', 'Lambda Labs' -> 'lambda', 'Moonshot AI' -> 'moonshot'."""
    key = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    if key in KNOWN_PROVIDERS:
        return key
    if key in _PROVIDER_ALIASES:
        return _PROVIDER_ALIASES[key]
    for slug, (known_name, *_rest) in KNOWN_PROVIDERS.items():
        if key == re.sub(r"[^a-z0-9]+", "-", known_name.lower()).strip("-"):
            return slug
    return key[:120]


@dataclass(frozen=True)
class CatalogAccelerator:
    slug: str
    name: str
    memory_gb: float


class AcceleratorMatcher:
    """Built once a run from the catalog; `match` is cached per (name, memory)."""

    def __init__(self, accelerators: list[CatalogAccelerator]):
        self.by_slug = {a.slug: a for a in accelerators}
        self.by_key: dict[str, CatalogAccelerator] = {}
        for a in accelerators:
            self.by_key[_key(a.slug)] = a
            self.by_key[_key(a.name)] = a
        self._cache: dict[tuple[str, float | None], tuple[str | None, str]] = {}

    def match(self, name: str, memory_gb: float | None = None) -> tuple[str | None, str]:
        """(slug, "") on a match, (None, why) otherwise."""
        cache_key = (name, memory_gb)
        if cache_key not in self._cache:
            self._cache[cache_key] = self._match(name, memory_gb)
        return self._cache[cache_key]

    def _match(self, name: str, memory_gb: float | None) -> tuple[str | None, str]:
        key = _key(name)
        acc = self.by_key.get(key)
        if acc is None and key in ACCELERATOR_ALIASES:
            acc = self.by_slug.get(ACCELERATOR_ALIASES[key])
            if acc is None:
                return None, f"{name} is {ACCELERATOR_ALIASES[key]}, which is not in the catalog"
            if memory_gb is None and key in NEEDS_MEMORY:
                return None, f"{name} comes in more than one memory size and the feed gives none"
        if acc is None:
            return None, f"{name!s} is not in the catalog (add it, or an alias)"
        if (
            memory_gb is not None
            and abs(memory_gb - acc.memory_gb) > MEMORY_TOLERANCE * acc.memory_gb
        ):
            return (
                None,
                f"{name} with {memory_gb:g} GB per GPU is not {acc.name} ({acc.memory_gb:g} GB)",
            )
        return acc.slug, ""


def _key(name: str) -> str:
    """'NVIDIA H100 80GB' -> 'h100-80gb'; 'RTX 4090' -> 'rtx4090'; 'A100-80GB' -> 'a100-80gb'."""
    key = name.strip().lower().replace("_", "-")
    key = re.sub(r"^(nvidia|amd|intel)[\s-]+", "", key)
    key = re.sub(r"\s+", "-", key)
    return re.sub(r"^rtx-(\d)", r"rtx\1", key)
