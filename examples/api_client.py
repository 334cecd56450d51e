"""A tool's-eye view of k3planner's API, using only httpx.

    python examples/api_client.py http://127.0.0.1:8000 "$K3PLANNER_TOKEN" path/to/config.json

Imports a model from its Hugging Face config.json (stored: needs a staff token), sizes it on two
accelerators, saves a scenario for it and compares that with a K3 scenario.
"""

import json
import sys

import httpx


def run(base_url: str, token: str, config: dict, name: str, slug: str) -> dict:
    with httpx.Client(
        base_url=f"{base_url.rstrip('/')}/api/v1",
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    ) as api:

        def call(method: str, path: str, **kw) -> dict:
            r = api.request(method, path, **kw)
            if r.status_code >= 400:
                raise SystemExit(f"{method} {path}: {r.status_code} {r.text}")
            return r.json()

        imported = call(
            "POST", "/models/import", params={"save": "true"},
            json={"config": config, "name": name, "slug": slug},
        )  # fmt: skip
        sizes = {
            acc: call("POST", "/sizing", json={"model": slug, "accelerator": acc})
            for acc in ("h100-80gb", "rtx-4090-24gb")
        }
        rates = {
            "usd_per_gpu_hour": 2.5,
            "api_usd_per_m_input_hit": 0.30,
            "api_usd_per_m_input_miss": 3.00,
            "api_usd_per_m_output": 15.00,
        }
        mine = call(
            "POST", "/scenarios",
            json={"name": f"{name} on H100", "tags": ["import"],
                  "inputs": {"llm": slug, "accelerator": "h100-80gb", "concurrency": 1, **rates}},
        )  # fmt: skip
        k3 = call(
            "POST", "/scenarios",
            json={"name": "K3 on H100", "inputs": {"llm": "kimi-k3", "accelerator": "h100-80gb",
                                                   **rates}},
        )  # fmt: skip
        compared = call("POST", "/scenarios/compare", json={"ids": [mine["id"], k3["id"]]})
        return {"imported": imported, "sizes": sizes, "scenarios": [mine, k3], "compare": compared}


def main() -> None:
    base_url, token, config_path = sys.argv[1:4]
    with open(config_path) as f:
        config = json.load(f)
    out = run(base_url, token, config, name="Imported model", slug="imported-model")
    print(f"imported {out['imported']['total_params']:,} parameters")
    for acc, s in out["sizes"].items():
        print(f"{acc}: {s['recommended_gpus']} GPUs; {s['verdicts']['tier1']}")
    for row in out["compare"]["rows"]:
        print(f"{row['label']:<32}" + "  ".join(f"{t:>16}" for t in row["text"]))


if __name__ == "__main__":
    main()
