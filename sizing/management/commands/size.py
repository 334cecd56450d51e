"""`manage.py size kimi-k3 --accelerator h100-80gb`: the tiers as a table, or --json."""

import json
from dataclasses import asdict, replace

from django.core.management.base import BaseCommand, CommandError

from sizing import selectors
from sizing.engine.errors import SizingError
from sizing.engine.evaluate import evaluate
from sizing.engine.fmt import fmt_bytes, fmt_duration, fmt_gib, fmt_int, fmt_tokens, fmt_usd
from sizing.engine.specs import Prices, Scenario, Workload

# The article's assumptions (July 2026), used when no rate is given on the command line.
ARTICLE_USD_PER_GPU_HOUR = 2.50
ARTICLE_API_USD_PER_M = (0.30, 3.00, 15.00)  # input cache hit, input cache miss, output


class Command(BaseCommand):
    help = "Size a catalog model on an accelerator: weights, KV, layout, speed, tiers 1-3."

    def add_arguments(self, parser):
        parser.add_argument("model", help="catalog model slug, e.g. kimi-k3")
        parser.add_argument("--accelerator", required=True, help="e.g. h100-80gb")
        parser.add_argument("--context", type=int, default=8192, help="tokens per user")
        parser.add_argument("--concurrency", type=int, default=1, help="users at once")
        parser.add_argument("--kv-dtype", choices=["bf16", "fp16", "fp8", "fp32"])
        parser.add_argument("--weight-format", help="override, e.g. 4-bit, 2-bit, bf16, fp8")
        parser.add_argument("--hours-per-day", type=float, default=24.0)
        parser.add_argument("--usd-per-gpu-hour", type=float, default=ARTICLE_USD_PER_GPU_HOUR)
        parser.add_argument("--api-input-hit", type=float, default=ARTICLE_API_USD_PER_M[0])
        parser.add_argument("--api-input-miss", type=float, default=ARTICLE_API_USD_PER_M[1])
        parser.add_argument("--api-output", type=float, default=ARTICLE_API_USD_PER_M[2])
        parser.add_argument("--json", action="store_true", help="every figure, as JSON")

    def handle(self, *args, **o):
        llm = selectors.llm_models().filter(slug=o["model"]).first()
        if llm is None:
            raise CommandError(f"model: no catalog model {o['model']!r} (see the home page)")
        acc = selectors.accelerators().filter(slug=o["accelerator"]).first()
        if acc is None:
            raise CommandError(f"accelerator: no catalog accelerator {o['accelerator']!r}")
        model = selectors.model_spec(llm)
        if o["weight_format"]:
            model = replace(model, weight_format=o["weight_format"], tensor_groups=())
        scenario = Scenario(
            model=model,
            accelerator=selectors.accelerator_spec(acc),
            workload=Workload(
                context_tokens=o["context"],
                concurrency=o["concurrency"],
                kv_dtype=o["kv_dtype"],
                hours_per_day=o["hours_per_day"],
            ),
            prices=Prices(
                usd_per_gpu_hour=o["usd_per_gpu_hour"],
                api_usd_per_m_input_hit=o["api_input_hit"],
                api_usd_per_m_input_miss=o["api_input_miss"],
                api_usd_per_m_output=o["api_output"],
            ),
        )
        catalog = [selectors.accelerator_spec(a) for a in selectors.accelerators()]
        try:
            result = evaluate(scenario, catalog)
        except SizingError as exc:
            raise CommandError(f"{exc.field}: {exc.reason}") from None
        if o["json"]:
            self.stdout.write(json.dumps(asdict(result), indent=2))
            return
        self.print_table(result, scenario)

    def print_table(self, r, scenario):
        out = self.stdout.write
        w = r.weights
        out(f"{r.model_name} on {r.accelerator_name}\n")
        out(r.verdicts.single_gpu)
        out("")
        out(f"Weights ({w.weight_format}): {fmt_bytes(w.weights_bytes)}")
        if w.idealised_format:
            out(
                f"  at the idealised {w.idealised_format}: {fmt_bytes(w.idealised_bytes)}"
                f" ({w.note})"
            )
        out("\nWeights-only floor (a floor, not a plan):")
        out(f"  {'accelerator':<28}{'memory':>10}{'GPUs':>7}{'idealised':>11}")
        for row in r.floor:
            ideal = "" if row.min_gpus_idealised is None else str(row.min_gpus_idealised)
            out(f"  {row.accelerator_name:<28}{row.memory_gb:>7g} GB{row.min_gpus:>7}{ideal:>11}")
        out("\nKV cache:")
        if r.kv_known:
            out(
                f"  {fmt_int(r.kv_bytes_per_token)} B per token, "
                f"state {fmt_int(r.state_bytes_per_sequence)} B per sequence"
            )
            out(
                f"  {fmt_gib(r.kv_bytes_per_user)} per user "
                f"at {fmt_int(r.kv.context_tokens)} tokens"
            )
        else:
            out(f"  unknown ({', '.join(r.kv.missing)}). {r.kv.how_to_measure}")
        lay = r.layout
        out("\nTier 1 - rent the cluster:")
        if lay.fits:
            out(
                f"  {lay.gpus} GPUs = {lay.nodes} node(s), TP {lay.tp} x EP {lay.ep}"
                + (f" x PP {lay.pp}" if lay.pp > 1 else "")
            )
            out(f"  SGLang: {lay.sglang_command}")
            out(f"  vLLM:   {lay.vllm_command}")
        else:
            out(f"  no layout fits: {lay.reason}")
        if r.tier1:
            t = r.tier1
            out(f"  {fmt_int(t.gpu_hours_per_month)} GPU-h a month = {fmt_usd(t.usd_per_month)}")
            out(
                f"  cold start: {fmt_bytes(t.checkpoint_bytes)} at {t.download_gb_s:g} GB/s = "
                f"{fmt_duration(t.cold_start_s)} ({fmt_usd(t.cold_start_usd)})"
            )
            if r.decode_tokens_per_s:
                out(
                    f"  decode: {fmt_int(r.decode_tokens_per_s)} tokens/s, "
                    f"{r.tokens_per_s_per_usd_per_hour:.3g} tokens/s per $/h"
                )
        out(f"  {r.verdicts.tier1}")
        out("\nTier 2 - a smaller model on one accelerator:")
        out(f"  {r.verdicts.tier2}")
        out("\nTier 3 - hosted API:")
        out(f"  {r.verdicts.tier3}")
        if r.break_even and r.break_even.output_tokens_per_month:
            out(
                f"\nBreak-even: {fmt_tokens(r.break_even.output_tokens_per_month)} output tokens "
                "a month"
            )
        out(f"  {r.verdicts.break_even}")
