"""The classifier's prompt: system text with examples and the user text builder."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from polyg_core.providers.llm.known_names import user_message

__all__ = ["CLASSIFIER_SYSTEM", "classifier_user"]

CLASSIFIER_SYSTEM = """\
You classify questions asked to a multi-graph memory (semantic, entity, temporal and causal graphs).
Answer with one JSON object with these fields:
- type: WHY (causes or effects), WHEN (timing, timelines), WHO (people, teams, owners),
  WHAT (facts, status, descriptions of a thing), or EXPLORE (open-ended, "tell me about").
- entities: names of entities the question mentions. When a mention matches one of the
  known entity names (in any spelling), write the known name exactly as listed.
- timeframe_phrase: the words naming a time, if any ("last Tuesday"); else null.
- timeframe_start, timeframe_end: that time resolved to ISO 8601 UTC timestamps against the
  reference time given; the end is inclusive (for "yesterday": 00:00:00 to 23:59:59.999).
  Null when open or when there is no time.
- causal_direction: upstream when the question asks for causes ("why", "what caused"),
  downstream when it asks for consequences ("what happens if", "impact of"), else both.
- depth_hints: {semantic, entity, temporal, causal}, each 1..5: how far to follow each graph.
  Defaults: WHY 1/1/1/3, WHEN 1/1/3/1, WHO and WHAT 1/2/1/1, EXPLORE 2/2/2/2.
- semantic_query: the question reworded as a short search phrase, without question words.
- confidence: 0..1, how sure you are of the type.
- multi_hop: true when answering needs several hops between entities or events.

Examples (reference time 2026-01-14T12:00:00Z, a Wednesday):
"Why did the auth service fail?" ->
{"type": "WHY", "entities": ["auth-service"], "timeframe_phrase": null,
 "timeframe_start": null, "timeframe_end": null, "causal_direction": "upstream",
 "depth_hints": {"semantic": 1, "entity": 1, "temporal": 1, "causal": 3},
 "semantic_query": "auth service failure", "confidence": 0.9, "multi_hop": false}
"What happened last Tuesday?" ->
{"type": "WHEN", "entities": [], "timeframe_phrase": "last Tuesday",
 "timeframe_start": "2026-01-13T00:00:00.000Z", "timeframe_end": "2026-01-13T23:59:59.999Z",
 "causal_direction": "both",
 "depth_hints": {"semantic": 1, "entity": 1, "temporal": 3, "causal": 1},
 "semantic_query": "events", "confidence": 0.85, "multi_hop": false}
"Who owns the payment service?" ->
{"type": "WHO", "entities": ["payment-service"], "timeframe_phrase": null,
 "timeframe_start": null, "timeframe_end": null, "causal_direction": "both",
 "depth_hints": {"semantic": 1, "entity": 2, "temporal": 1, "causal": 1},
 "semantic_query": "payment service owner", "confidence": 0.9, "multi_hop": false}
"What happens if AUTH_SECRET is removed?" ->
{"type": "WHY", "entities": ["AUTH_SECRET"], "timeframe_phrase": null,
 "timeframe_start": null, "timeframe_end": null, "causal_direction": "downstream",
 "depth_hints": {"semantic": 1, "entity": 1, "temporal": 1, "causal": 3},
 "semantic_query": "AUTH_SECRET removed consequences", "confidence": 0.8, "multi_hop": true}
"Tell me about the deployment" ->
{"type": "EXPLORE", "entities": [], "timeframe_phrase": null, "timeframe_start": null,
 "timeframe_end": null, "causal_direction": "both",
 "depth_hints": {"semantic": 2, "entity": 2, "temporal": 2, "causal": 2},
 "semantic_query": "deployment", "confidence": 0.7, "multi_hop": false}
"""


def classifier_user(question: str, known_names: Sequence[str], reference: datetime) -> str:
    """The user message for classifying `question`."""
    return user_message("Question", question, known_names, reference)
