"""Each feed format parsed from the real public samples, and each way a file or a row goes bad.

Parsers are pure: no database here.
"""

from decimal import Decimal
from pathlib import Path

import pytest

from pricing import feeds
from pricing.feeds import FeedError

FEEDS = Path(__file__).resolve().parents[1] / "data" / "price-feeds"


def parse(format, path, provider=""):
    return feeds.parse(format, (FEEDS / path).read_bytes(), provider=provider)


def offers(parsed, **match):
    return [o for o in parsed.gpu if all(getattr(o, k) == v for k, v in match.items())]


# --- SkyPilot ---------------------------------------------------------------------------------


def test_it_divides_skypilot_instance_prices_by_the_gpu_count():
    parsed = parse("skypilot_csv", "skypilot/aws_vms_v8_gpu_rows.csv", "aws")

    [p5] = offers(parsed, offer="p5.48xlarge", zone="use1-az1", kind="on_demand")
    assert p5.usd_per_gpu_hour == Decimal("6.88")  # $55.04 an hour for 8 H100s
    assert (p5.accelerator, p5.gpu_count, p5.region, p5.memory_gb) == ("H100", 8, "us-east-1", 80)
    [p4d_spot] = offers(parsed, offer="p4d.24xlarge", kind="spot")
    assert p4d_spot.usd_per_gpu_hour == Decimal("1.023938")  # 8.1915 / 8, to 6 places


def test_it_reads_the_on_demand_and_spot_price_of_a_row_separately():
    parsed = parse("skypilot_csv", "skypilot/aws_vms_v8_gpu_rows.csv", "aws")

    # p5e lists a spot price with no on-demand one; one p5e row has neither.
    p5e = offers(parsed, offer="p5e.48xlarge")
    assert {o.kind for o in p5e} == {"spot"}
    assert len(p5e) == 2
    assert parsed.rows_read == 27
    assert parsed.rows_skipped == 2  # the CPU instance, and the p5e row without prices
    assert parsed.rejections == []
    assert len(parsed.gpu) == 44


def test_it_keeps_spot_prices_above_on_demand_as_the_feed_lists_them():
    parsed = parse("skypilot_csv", "skypilot/gcp_vms_v8_rows.csv", "gcp")
    # GCP is rejected whole (next test); Nebius and AWS have ordinary spot rows.
    assert parsed.gpu == []
    aws = parse("skypilot_csv", "skypilot/aws_vms_v8_gpu_rows.csv", "aws")
    [on_demand] = offers(aws, offer="p5.48xlarge", zone="apne1-az1", kind="on_demand")
    [spot] = offers(aws, offer="p5.48xlarge", zone="apne1-az1", kind="spot")
    assert spot.usd_per_gpu_hour == on_demand.usd_per_gpu_hour == Decimal("8.6")


def test_it_rejects_gcp_accelerator_rows_priced_apart_from_their_vm():
    parsed = parse("skypilot_csv", "skypilot/gcp_vms_v8_rows.csv", "gcp")

    assert parsed.rows_read == 21
    assert parsed.rows_skipped == 7  # VM rows without an accelerator
    assert parsed.rows_rejected == 14
    assert {r.field for r in parsed.rejections} == {"InstanceType"}
    assert "priced apart from its host VM" in parsed.rejections[0].reason


@pytest.mark.parametrize(
    "path, provider, offer, memory_gb, price",
    [
        # Verda writes GpuInfo as JSON and orders its columns its own way.
        ("skypilot/verda_vms_v8_gpu_rows.csv", "verda", "1H100.80S.32V", 80, "2.29"),
        # DigitalOcean's v6 catalog has lower-case GpuInfo keys.
        ("skypilot/do_vms_v6_rows.csv", "do", "gpu-h100x8-640gb", 81559 / 1024, "5.95"),
        # Shadeform's SizeInMiB holds GB.
        ("skypilot/shadeform_vms_v8_rows.csv", "shadeform", "crusoe_A100-80G-sxm4x8", 80, "2.3"),
        # Hyperbolic's whole file, with its extra StorageGiB column.
        ("skypilot/hyperbolic_vms_v8.csv", "hyperbolic", "3x-H100-224-2165", 81559 / 1024, "1.29"),
        ("skypilot/lambda_vms_v8_gpu_rows.csv", "lambda", "gpu_8x_b200_sxm6", 180, "6.69"),
        (
            "skypilot/nebius_vms_v8_gpu_rows.csv",
            "nebius",
            "gpu-l40s-d_4gpu-192vcpu-1152gb",
            48,
            "2.7516",
        ),
    ],
)
def test_it_reads_every_skypilot_layout_by_column_name(path, provider, offer, memory_gb, price):
    parsed = parse("skypilot_csv", path, provider)

    found = offers(parsed, offer=offer, kind="on_demand")
    assert found, f"{offer} not parsed"
    assert found[0].memory_gb == pytest.approx(memory_gb)
    assert found[0].usd_per_gpu_hour == Decimal(price)
    assert parsed.rejections == []


def test_it_needs_the_cloud_named_for_a_skypilot_file():
    with pytest.raises(FeedError, match="set the feed's provider"):
        parse("skypilot_csv", "skypilot/aws_vms_v8_gpu_rows.csv")


# --- gpuhunt ----------------------------------------------------------------------------------


def test_it_reads_the_gpuhunt_catalog_header():
    parsed = parse("gpuhunt_csv", "gpuhunt/catalog_v2_format_fixture.csv", "fixture")

    assert [(o.offer, o.gpu_count, o.usd_per_gpu_hour) for o in parsed.gpu] == [
        ("i1", 1, Decimal("0.5")),
        ("i2", 2, Decimal("0.5")),
        ("i3", 4, Decimal("0.5")),
        ("i4", 8, Decimal("0.5")),
    ]
    assert {(o.accelerator, o.memory_gb, o.region, o.kind) for o in parsed.gpu} == {
        ("A10", 24.0, "us", "on_demand")
    }


def test_it_reads_a_gpuhunt_per_gpu_price_table():
    parsed = parse("gpuhunt_csv", "gpuhunt/crusoe_gpu_pricing_from_gpuhunt.csv", "crusoe")

    assert parsed.rows_read == 9  # the two comment lines are not rows
    [h100] = offers(parsed, offer="H100-SXM-80GB", kind="on_demand")
    assert (h100.accelerator, h100.memory_gb, h100.usd_per_gpu_hour) == ("H100", 80, Decimal("3.9"))
    assert h100.row == 7  # the file's own line number
    assert not offers(parsed, offer="H200-SXM-141GB", kind="spot")  # no spot price listed
    [b200] = offers(parsed, offer="B200-SXM-180GB")
    assert "estimated" in b200.note


def test_it_reads_gpuhunt_spot_rows():
    data = (
        b"instance_name,location,price,cpu,memory,gpu_count,gpu_name,gpu_memory,spot,disk_size,"
        b"gpu_vendor,flags\n"
        b"h1,eu,12.0,16,200,4,H100,80.0,True,,nvidia,\n"
        b"h1,eu,16.0,16,200,4,H100,80.0,Maybe,,nvidia,\n"
    )
    parsed = feeds.parse("gpuhunt_csv", data, provider="x")

    assert [(o.kind, o.usd_per_gpu_hour) for o in parsed.gpu] == [("spot", Decimal("3"))]
    assert parsed.rejections[0].field == "spot"


# --- LiteLLM ----------------------------------------------------------------------------------


def test_it_converts_litellm_per_token_prices_to_per_million():
    parsed = parse("litellm_json", "litellm/model_prices_trimmed.json")
    by_id = {(o.provider, o.model_id): o for o in parsed.api}

    gpt4o = by_id[("openai", "gpt-4o")]
    assert gpt4o.usd_per_m_input_cache_miss == Decimal("2.5")
    assert gpt4o.usd_per_m_input_cache_hit == Decimal("1.25")
    assert gpt4o.usd_per_m_output == Decimal("10")
    assert gpt4o.context_tokens == 128_000
    # 3.625e-09 a token is exactly 0.003625 a million: no float noise.
    assert by_id[("deepseek", "deepseek-v4-pro")].usd_per_m_input_cache_hit == Decimal("0.003625")
    # The provider prefix is not part of the model id the provider's API takes.
    assert ("moonshot", "kimi-k2-thinking") in by_id
    assert ("together_ai", "openai/gpt-oss-120b") in by_id
    # No cache price listed: unknown, not zero.
    assert by_id[("cerebras", "gpt-oss-120b")].usd_per_m_input_cache_hit is None


def test_it_skips_litellm_sample_spec_and_rejects_zero_prices():
    parsed = parse("litellm_json", "litellm/model_prices_trimmed.json")

    assert parsed.rows_read == 58
    assert parsed.rows_skipped == 1  # sample_spec
    assert [r.reason.split(": ")[0] for r in parsed.rejections] == [
        "ollama/gpt-oss:120b-cloud",
        "ollama/llama2",
    ]
    assert len(parsed.api) == 55


# --- k3planner's own format -------------------------------------------------------------------

GPU_CSV = (
    "provider,accelerator,usd_per_gpu_hour,kind,term_months,region,gpu_count,offer,effective_date\n"
    "Acme Cloud,h100-80gb,2.10,on_demand,0,eu-west,8,acme-8x,2026-09-01\n"
    "Acme Cloud,h100-80gb,1.50,reserved,12,eu-west,8,acme-8x,2026-09-01\n"
)


def test_it_reads_its_own_gpu_csv():
    parsed = feeds.parse("k3planner_csv", GPU_CSV.encode())

    assert [(o.kind, o.term_months, str(o.usd_per_gpu_hour)) for o in parsed.gpu] == [
        ("on_demand", 0, "2.100000"),
        ("reserved", 12, "1.500000"),
    ]
    assert parsed.gpu[0].effective_date.isoformat() == "2026-09-01"


def test_its_own_csv_round_trips_through_the_writer():
    rows = [
        {
            "provider": "Acme Cloud",
            "accelerator": "h200-141gb",
            "usd_per_gpu_hour": Decimal("3.25"),
            "kind": "spot",
            "region": "us",
            "zone": "us-a",
            "gpu_count": 8,
            "offer": 'acme "big" 8x, new',
            "effective_date": "2026-10-01",
            "note": "quoted, with a comma",
        }
    ]
    parsed = feeds.parse("k3planner_csv", feeds.write_k3planner_gpu_csv(rows).encode())

    [o] = parsed.gpu
    assert (o.offer, o.zone, o.note, o.usd_per_gpu_hour) == (
        'acme "big" 8x, new',
        "us-a",
        "quoted, with a comma",
        Decimal("3.25"),
    )


def test_it_reads_its_own_json_with_providers_and_api_prices():
    data = feeds.write_k3planner_json(
        gpu_rows=[{"provider": "P", "accelerator": "b200-192gb", "usd_per_gpu_hour": "4"}],
        api_rows=[
            {
                "provider": "Moonshot AI",
                "model_id": "kimi-k3",
                "usd_per_m_output": "15.00",
                "usd_per_m_input_cache_miss": "3.00",
                "usd_per_m_input_cache_hit": "0.30",
            }
        ],
        providers=[{"name": "Moonshot AI", "kind": "api", "url": "https://platform.moonshot.ai/"}],
    )
    parsed = feeds.parse("k3planner_json", data.encode())

    assert parsed.providers["Moonshot AI"]["kind"] == "api"
    [api] = parsed.api
    prices = (api.usd_per_m_input_cache_hit, api.usd_per_m_input_cache_miss, api.usd_per_m_output)
    assert prices == (Decimal("0.3"), Decimal("3"), Decimal("15"))
    assert parsed.gpu[0].usd_per_gpu_hour == Decimal(4)


# --- bad rows: rejected and reported, the rest kept --------------------------------------------


@pytest.mark.parametrize(
    "line, field, reason",
    [
        ("Acme,h100-80gb,abc,on_demand", "usd_per_gpu_hour", "not a number"),
        ("Acme,h100-80gb,-2.10,on_demand", "usd_per_gpu_hour", "must be positive"),
        ("Acme,h100-80gb,0,on_demand", "usd_per_gpu_hour", "must be positive"),
        ("Acme,h100-80gb,2500,on_demand", "usd_per_gpu_hour", "beyond any list price"),
        ("Acme,h100-80gb,NaN,on_demand", "usd_per_gpu_hour", "not a finite number"),
        ("Acme,h100-80gb,2.10,hourly", "kind", "must be one of"),
        ("Acme,h100-80gb,2.10,reserved", "term_months", "needs its term"),
        ("Acme,,2.10,on_demand", "accelerator", "empty"),
        ("Acme,h100-80gb,2.10", "", "has 3 fields, the header has 4"),
        ("Acme,h100-80gb,2.10,on_demand,extra", "", "has 5 fields"),
    ],
)
def test_it_rejects_a_malformed_row_and_keeps_the_others(line, field, reason):
    data = f"provider,accelerator,usd_per_gpu_hour,kind\nAcme,h100-80gb,2.00,spot\n{line}\n"
    parsed = feeds.parse("k3planner_csv", data.encode())

    [rejection] = parsed.rejections
    assert (rejection.row, rejection.field) == (3, field)
    assert reason in rejection.reason
    assert [o.usd_per_gpu_hour for o in parsed.gpu] == [Decimal("2")]


@pytest.mark.parametrize(
    "column, value, reason",
    [
        ("Price", "-55.04", "must be positive"),
        ("Price", "55,04", "not a number"),
        ("Price", "99999", "beyond any list price"),  # $12,500 a GPU-hour
        ("AcceleratorCount", "0", "GPU count must be"),
        ("AcceleratorCount", "2.5", "not a whole number"),
    ],
)
def test_it_rejects_a_skypilot_row_with_a_bad_number(column, value, reason):
    header = "InstanceType,AcceleratorName,AcceleratorCount,Price,SpotPrice,Region\n"
    good = {"InstanceType": "p5", "AcceleratorName": "H100", "AcceleratorCount": "8"}
    row = {**good, "Price": "55.04", "SpotPrice": "", "Region": "us-east-1", column: value}
    data = header + ",".join(f'"{row[c]}"' for c in header.strip().split(",")) + "\n"

    parsed = feeds.parse("skypilot_csv", data.encode(), provider="aws")

    [rejection] = parsed.rejections
    assert rejection.field == column
    assert reason in rejection.reason
    assert parsed.gpu == []


def test_it_rejects_a_negative_litellm_price():
    data = (
        b'{"m": {"litellm_provider": "x", "input_cost_per_token": -1e-06, '
        b'"output_cost_per_token": 1e-06}}'
    )
    parsed = feeds.parse("litellm_json", data)

    assert parsed.api == []
    assert parsed.rejections[0].field == "input_cost_per_token"
    assert "must not be negative" in parsed.rejections[0].reason


# --- bad files: nothing from them may be stored ------------------------------------------------


def test_it_refuses_a_csv_cut_off_mid_row():
    whole = (FEEDS / "skypilot" / "nebius_vms_v8_gpu_rows.csv").read_bytes()
    cut = whole[: whole.index(b"gpu-h200-sxm_8gpu-128vcpu-1600gb,H200,8,128") + 30]

    with pytest.raises(FeedError, match="truncated"):
        feeds.parse("skypilot_csv", cut, provider="nebius")


def test_it_refuses_a_csv_cut_off_inside_a_quoted_field():
    whole = (FEEDS / "skypilot" / "lambda_vms_v8_gpu_rows.csv").read_bytes()
    cut = whole[: whole.index(b"'MemoryInfo'", 500)]

    with pytest.raises(FeedError, match="truncated"):
        feeds.parse("skypilot_csv", cut, provider="lambda")


def test_it_refuses_truncated_json():
    whole = (FEEDS / "litellm" / "model_prices_trimmed.json").read_bytes()

    with pytest.raises(FeedError, match="not valid JSON"):
        feeds.parse("litellm_json", whole[: len(whole) // 2])


@pytest.mark.parametrize(
    "format, data, message",
    [
        ("skypilot_csv", b"InstanceType,Price\np5,55\n", "missing columns AcceleratorName"),
        ("k3planner_csv", b"name,price\nx,1\n", "usd_per_gpu_hour column"),
        ("k3planner_csv", b"", "usd_per_gpu_hour column"),
        ("gpuhunt_csv", b"\xff\xfe\x00garbage", "not UTF-8"),
        ("k3planner_json", b'{"gpu_prices": []}', '"format": "k3planner-prices"'),
        ("litellm_json", b"[1, 2]", "object of model name"),
        ("parquet", b"", "unknown feed format"),
    ],
)
def test_it_refuses_a_file_that_is_not_the_format(format, data, message):
    with pytest.raises(FeedError, match=message):
        feeds.parse(format, data, provider="x")
