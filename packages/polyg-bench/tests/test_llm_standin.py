"""The LLM stand-in: real HTTP on 127.0.0.1, litellm's pricing, real prompt sizes."""

import json
from typing import Any, cast

import anyio
import litellm
import pytest
from polyg_bench.dataset import Dataset
from polyg_bench.llm_standin import StandinResponder, standin_server
from polyg_bench.retrieval import run_retrieval
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.providers.llm import LiteLLMProvider
from polyg_core.remember.extractor import LLMExtractor
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.llm_server import RecordedRequest, Reply, ScriptedLLMServer
from pydantic import BaseModel

pytestmark = pytest.mark.anyio

MODEL = "openai/gpt-4o-mini"
NOTE = "Ann adopted a dog named Pixel in March because she felt lonely."


class Out(BaseModel):
    model: str | None = None
    queued: bool = False


def billed(request: RecordedRequest, responder: StandinResponder) -> tuple[int, int]:
    """The (prompt, completion) tokens the stand-in reported for a recorded request."""
    reply = responder.answer(request.body)
    return reply.prompt_tokens, reply.completion_tokens


def price(prompt: int, completion: int) -> float:
    """litellm's price table for gpt-4o-mini times the tokens."""
    # litellm's price table is an unannotated dict.
    prices = cast(dict[str, dict[str, Any]], litellm.model_cost)  # pyright: ignore[reportUnknownMemberType]
    row = prices["gpt-4o-mini"]
    return prompt * row["input_cost_per_token"] + completion * row["output_cost_per_token"]


async def test_one_call_costs_litellm_price_times_tokens() -> None:
    async with standin_server(MODEL) as (server, llm):
        with anyio.fail_after(20):
            extraction, usage = await LLMExtractor(llm).extract(NOTE, ["Ann"])

    assert {e.name for e in extraction.entities} >= {"Ann", "Pixel"}
    assert extraction.causal_links, "the rule-based answer carries the note's content"
    (request,) = server.chat_requests
    assert request.body["model"] == "gpt-4o-mini"
    assert usage.calls == 1
    assert usage.prompt_tokens > 500  # the extractor's system prompt, schema and the note
    assert usage.completion_tokens > 20
    assert usage.cost_usd > 0
    assert usage.cost_usd == pytest.approx(price(usage.prompt_tokens, usage.completion_tokens))
    prompt_cost, completion_cost = litellm.cost_per_token(
        model="gpt-4o-mini",
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
    )
    assert usage.cost_usd == pytest.approx(prompt_cost + completion_cost)


async def test_prompt_tokens_grow_with_the_request() -> None:
    responder = StandinResponder(MODEL)
    short = {"messages": [{"role": "user", "content": "hi"}]}
    long = {"messages": [{"role": "user", "content": "hi " * 300}]}
    with_schema: dict[str, Any] = {
        **short,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "X", "schema": {"type": "object", "properties": {}}},
        },
    }

    assert responder.count_prompt(long) >= responder.count_prompt(short) + 290
    assert responder.count_prompt(with_schema) > responder.count_prompt(short)


async def test_unknown_requests_get_a_400_that_says_what_it_answers() -> None:
    responder = StandinResponder(MODEL)

    reply = responder.answer(
        {"messages": [{"role": "system", "content": "You write poems."}, {"role": "user"}]}
    )

    assert reply.status == 400
    assert "classifier, extractor and synthesizer" in (reply.error_message or "")


async def test_remember_and_recall_report_tokens_and_litellm_cost(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    async with standin_server(MODEL) as (server, llm):
        responder = server.request_responder
        assert isinstance(responder, StandinResponder)
        memory = Memory(store=store, embedder=embedder, llm=llm)
        with anyio.fail_after(60):
            remembered = await memory.remember(
                NOTE, graph=namespace, reference_time="2026-04-01T10:00:00Z"
            )
            n_remember = len(server.chat_requests)
            recalled = await memory.recall(
                "Why did Ann adopt Pixel?", graph=namespace, reference_time="2026-04-02T10:00:00Z"
            )
        remember_requests = server.chat_requests[:n_remember]
        recall_requests = server.chat_requests[n_remember:]

    assert responder.calls == {"extractor": 1, "classifier": 1, "synthesizer": 1}
    by_kind = {row["kind"]: row for row in responder.by_kind()}
    assert by_kind["extractor"]["prompt_tokens"] == remembered.usage.prompt_tokens
    assert (
        by_kind["classifier"]["prompt_tokens"] + by_kind["synthesizer"]["prompt_tokens"]
        == recalled.usage.prompt_tokens
    )
    assert not recalled.degraded
    for result, requests in ((remembered, remember_requests), (recalled, recall_requests)):
        tokens = [billed(r, responder) for r in requests]
        prompt = sum(p for p, _ in tokens)
        completion = sum(c for _, c in tokens)
        assert result.usage.llm_calls == len(requests) > 0
        assert result.usage.prompt_tokens == prompt > 0
        assert result.usage.completion_tokens == completion > 0
        # The reports round cost to 1e-6 USD.
        assert result.usage.cost_usd == pytest.approx(price(prompt, completion), abs=1e-6)
        assert result.usage.cost_usd > 0


async def test_harness_reports_llm_usage_per_call(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    data = Dataset.model_validate(
        {
            "conversations": [
                {
                    "id": "c",
                    "speakers": ["Ann", "Bo"],
                    "sessions": [
                        {
                            "id": "s1",
                            "date_time": "2025-03-05T10:00:00Z",
                            "turns": [{"id": "t1", "speaker": "Ann", "text": NOTE}],
                        }
                    ],
                }
            ],
            "questions": [
                {
                    "conversation_id": "c",
                    "question": "Why did Ann adopt Pixel?",
                    "answer": "she felt lonely",
                    "evidence": ["t1"],
                    "category": "causal",
                }
            ],
        }
    )
    async with standin_server(MODEL) as (_, llm):
        memory = Memory(store=store, embedder=embedder, llm=llm)
        with anyio.fail_after(60):
            report = await run_retrieval(memory, data, namespace_prefix=namespace)

    remember, recall = report.usage_table()
    assert (remember["call"], remember["n"], remember["llm_calls_p50"]) == ("remember", 1, 1.0)
    assert (recall["call"], recall["n"], recall["llm_calls_mean"]) == ("recall", 1, 2.0)
    for row in (remember, recall):
        assert row["prompt_tokens_p50"] > 0
        assert row["total_tokens_mean"] == row["prompt_tokens_mean"] + row["completion_tokens_mean"]
        assert row["cost_usd_mean"] > 0
    assert report.degraded_recalls == 0


async def test_request_responder_sees_the_whole_body_and_the_queue_comes_first() -> None:
    seen: list[dict[str, Any]] = []

    def answer(body: dict[str, Any]) -> str:
        seen.append(body)
        return json.dumps({"model": body["model"]})

    async with ScriptedLLMServer(request_responder=answer) as server:
        server.push(Reply.json({"queued": True}))
        llm = LiteLLMProvider("openai/some-model", api_base=server.api_base, api_key="k")
        with anyio.fail_after(20):
            first = await llm.complete_json(system="s", user="u", schema=Out, max_tokens=20)
            second = await llm.complete_json(system="s", user="u", schema=Out, max_tokens=20)

    assert first.value.queued
    assert second.value.model == "some-model"
    assert seen[0]["response_format"]["type"] == "json_schema"
