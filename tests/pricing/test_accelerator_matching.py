"""Feed names -> catalog accelerators and providers: matched when certain, reported otherwise."""

import json
from pathlib import Path

import pytest

from pricing.matching import AcceleratorMatcher, CatalogAccelerator, provider_slug

CATALOG = json.loads(
    (Path(__file__).resolve().parents[2] / "sizing" / "catalog" / "accelerators.json").read_text()
)
MATCHER = AcceleratorMatcher(
    [CatalogAccelerator(a["slug"], a["name"], a["memory_gb"]) for a in CATALOG]
)


@pytest.mark.parametrize(
    "name, memory_gb, slug",
    [
        ("H100", 80.0, "h100-80gb"),  # SkyPilot: 81920 MiB
        ("H100", 81559 / 1024, "h100-80gb"),  # Hyperbolic, DigitalOcean
        ("H200", 141.0, "h200-141gb"),
        ("H200", None, "h200-141gb"),
        ("A100-80GB", 80.0, "a100-80gb"),
        ("A100", 80.0, "a100-80gb"),  # gpuhunt names it A100 and gives the memory
        ("B200", 183359 / 1024, "b200-192gb"),  # AWS p6-b200
        ("B200", 180, "b200-192gb"),  # 180 GB usable on DGX B200
        ("L40S", 48.0, "l40s-48gb"),
        ("MI300X", 192, "mi300x-192gb"),
        ("h100-80gb", None, "h100-80gb"),  # the catalog's own slug
        ("H100 80GB", None, "h100-80gb"),  # and its name
        ("NVIDIA H200 141GB", None, "h200-141gb"),
        ("RTX 4090", 24, "rtx-4090-24gb"),
    ],
)
def test_it_matches_the_names_feeds_use(name, memory_gb, slug):
    assert MATCHER.match(name, memory_gb) == (slug, "")


@pytest.mark.parametrize(
    "name, memory_gb, reason",
    [
        ("A100", 40.0, "40 GB per GPU is not A100 80GB"),  # p4d: the 40 GB part
        ("A100", None, "more than one memory size"),
        ("H100", None, "more than one memory size"),
        ("GH200", 96.0, "not in the catalog"),
        ("B300", 268.0, "not in the catalog"),  # B300 is not GB300
        ("A6000", 48.0, "not in the catalog"),
        ("RTX-PRO-6000", 96.0, "not in the catalog"),
        ("GAUDI2", 96.0, "not in the catalog"),
        ("tpu-v6e-1", None, "not in the catalog"),
        ("H200", 80.0, "is not H200 141GB"),
    ],
)
def test_it_reports_what_it_cannot_match_instead_of_guessing(name, memory_gb, reason):
    slug, why = MATCHER.match(name, memory_gb)

    assert slug is None
    assert reason in why


def test_it_says_when_an_alias_points_outside_the_catalog():
    matcher = AcceleratorMatcher([CatalogAccelerator("h100-80gb", "H100 80GB", 80)])

    assert matcher.match("B200", 192) == (None, "B200 is b200-192gb, which is not in the catalog")


@pytest.mark.parametrize(
    "name, slug",
    [
        ("aws", "aws"),
        ("together_ai", "together"),
        ("lambdalabs", "lambda"),
        ("lambda_ai", "lambda"),
        ("Lambda", "lambda"),
        ("Moonshot AI", "moonshot"),
        ("moonshot", "moonshot"),
        ("fireworks_ai", "fireworks"),
        ("DigitalOcean", "do"),
        ("vertex_ai-moonshot_models", "vertex-ai-moonshot-models"),
        ("Article assumption (July 2026)", "article-assumption-july-2026"),
    ],
)
def test_it_gives_one_slug_to_each_spelling_of_a_provider(name, slug):
    assert provider_slug(name) == slug
