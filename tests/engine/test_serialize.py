"""as_plain gives the same data as dataclasses.asdict (tuples as lists), for JSON."""

import json
from dataclasses import asdict

from engine_cases import ARTICLE_CARDS

from sizing.engine import evaluate
from sizing.engine.serialize import as_plain


def test_it_matches_asdict_once_both_are_json(article_scenario):
    result = evaluate(article_scenario, ARTICLE_CARDS)
    assert json.loads(json.dumps(as_plain(result))) == json.loads(json.dumps(asdict(result)))
