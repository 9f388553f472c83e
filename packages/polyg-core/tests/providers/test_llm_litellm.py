import json
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from polyg_core.config import Settings
from polyg_core.errors import ProviderError
from polyg_core.providers.llm import LLM, LiteLLMProvider, make_llm
from polyg_core.testing.llm_server import Reply, ScriptedLLMServer
from pydantic import BaseModel, Field

pytestmark = pytest.mark.anyio


class Answer(BaseModel):
    name: str
    score: int


class Loose(BaseModel):
    name: str
    tags: list[str] = Field(default_factory=list)


VALID = {"name": "Ada", "score": 3}


@pytest.fixture
async def server() -> AsyncIterator[ScriptedLLMServer]:
    async with ScriptedLLMServer() as s:
        yield s


def provider(server: ScriptedLLMServer, **kwargs: Any) -> LiteLLMProvider:
    options: dict[str, Any] = {"timeout_s": 2.0, "max_retries": 2, "backoff_base_s": 0.01}
    options.update(kwargs)
    return LiteLLMProvider("openai/test-model", api_base=server.api_base, api_key="test", **options)


async def ask(llm: LiteLLMProvider, schema: type[BaseModel] = Answer, max_tokens: int = 200) -> Any:
    with anyio.fail_after(10):
        return await llm.complete_json(
            system="You rate people.", user="Rate Ada.", schema=schema, max_tokens=max_tokens
        )


async def test_structured_reply_is_parsed_and_validated(server: ScriptedLLMServer) -> None:
    server.push(Reply.json(VALID))
    llm = provider(server)

    result = await ask(llm)

    assert isinstance(llm, LLM)
    assert result.value == Answer(name="Ada", score=3)
    assert result.model == "openai/test-model"
    (request,) = server.chat_requests
    fmt = request.body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "Answer"
    assert fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"]["additionalProperties"] is False
    assert request.messages[0]["role"] == "system"
    assert request.messages[0]["content"].startswith("You rate people.")
    assert request.messages[-1] == {"role": "user", "content": "Rate Ada."}
    assert request.headers["authorization"] == "Bearer test"


async def test_max_tokens_is_sent_as_given(server: ScriptedLLMServer) -> None:
    server.push(Reply.json(VALID))

    await ask(provider(server), max_tokens=77)

    assert server.chat_requests[0].body["max_tokens"] == 77


async def test_schema_with_optional_fields_is_sent_non_strict(server: ScriptedLLMServer) -> None:
    server.push(Reply.json({"name": "Ada"}))

    result = await ask(provider(server), schema=Loose)

    assert result.value == Loose(name="Ada", tags=[])
    assert server.chat_requests[0].body["response_format"]["json_schema"]["strict"] is False


@pytest.mark.parametrize(
    "content",
    [
        'Here you go: {"name": "Ada", "score": 3}. Anything else?',
        '```json\n{\n  "name": "Ada",\n  "score": 3\n}\n```',
        '<think>Maybe {"name": "Bob", "score": 1}? No.</think>\n{"name": "Ada", "score": 3}',
        '<think>hmm</think>Sure!\n```\n{"name": "Ada", "score": 3}\n```\nDone.',
    ],
    ids=["prose", "fence", "think", "think-prose-fence"],
)
async def test_json_wrapped_in_prose_fences_or_think_tags_is_extracted(
    server: ScriptedLLMServer, content: str
) -> None:
    server.push(Reply.text(content))

    result = await ask(provider(server))

    assert result.value == Answer(name="Ada", score=3)
    assert len(server.chat_requests) == 1


async def test_invalid_reply_is_retried_once_with_the_validation_error(
    server: ScriptedLLMServer,
) -> None:
    bad = json.dumps({"name": "Ada", "score": "very high"})
    server.push(Reply.text(bad, prompt_tokens=10, completion_tokens=4), Reply.json(VALID))

    result = await ask(provider(server))

    assert result.value == Answer(name="Ada", score=3)
    first, second = server.chat_requests
    assert len(second.messages) == len(first.messages) + 2
    assert second.messages[-2] == {"role": "assistant", "content": bad}
    feedback = second.messages[-1]
    assert feedback["role"] == "user"
    assert "score" in feedback["content"]
    assert "integer" in feedback["content"]
    assert result.usage.calls == 2
    assert result.usage.prompt_tokens == 10 + 11


async def test_reply_that_never_validates_raises_provider_error(server: ScriptedLLMServer) -> None:
    server.push(Reply.text("I cannot answer that."), Reply.json({"name": "Ada"}))

    with pytest.raises(ProviderError, match=r"test-model.*Answer.*score"):
        await ask(provider(server))

    assert len(server.chat_requests) == 2


async def test_rate_limit_waits_for_retry_after_then_succeeds(server: ScriptedLLMServer) -> None:
    server.push(Reply.error(429, retry_after=0.3), Reply.json(VALID))
    llm = provider(server)

    started = time.monotonic()
    result = await ask(llm)
    elapsed = time.monotonic() - started

    assert result.value == Answer(name="Ada", score=3)
    assert len(server.chat_requests) == 2
    assert 0.3 <= elapsed < 3


async def test_retry_after_is_capped_by_the_longest_backoff(server: ScriptedLLMServer) -> None:
    server.push(Reply.error(429, retry_after=600), Reply.json(VALID))
    llm = provider(server, backoff_max_s=0.05)

    with anyio.fail_after(3):
        result = await ask(llm)

    assert result.value.score == 3


async def test_transient_errors_are_retried_until_success(server: ScriptedLLMServer) -> None:
    server.push(Reply.error(503), Reply(malformed=True), Reply.json(VALID))

    result = await ask(provider(server, max_retries=2))

    assert result.value == Answer(name="Ada", score=3)
    assert len(server.chat_requests) == 3


async def test_server_errors_beyond_max_retries_raise_with_what_to_check(
    server: ScriptedLLMServer,
) -> None:
    server.push(Reply.error(500), Reply.error(500), Reply.error(500), Reply.json(VALID))

    with pytest.raises(ProviderError) as caught:
        await ask(provider(server, max_retries=2))

    message = str(caught.value)
    assert "openai/test-model" in message
    assert "3 attempt" in message
    assert "LLM_MODEL" in message
    assert "OPENAI_API_KEY" in message
    assert f"LLM_BASE_URL (now {server.api_base})" in message
    assert len(server.chat_requests) == 3
    assert server.pending == 1


async def test_reply_slower_than_the_timeout_raises_naming_the_timeout(
    server: ScriptedLLMServer,
) -> None:
    server.push(Reply.slow(3.0, json.dumps(VALID)), Reply.slow(3.0, json.dumps(VALID)))
    llm = provider(server, timeout_s=0.3, max_retries=1)

    started = time.monotonic()
    with pytest.raises(ProviderError, match=r"timed out after 0.3 s.*LLM_TIMEOUT"):
        await ask(llm)
    elapsed = time.monotonic() - started

    assert len(server.chat_requests) == 2
    assert elapsed < 2.5


async def test_usage_records_tokens_and_unknown_cost_as_zero(server: ScriptedLLMServer) -> None:
    server.push(Reply.json(VALID, prompt_tokens=123, completion_tokens=45))

    result = await ask(provider(server))

    assert result.usage.prompt_tokens == 123
    assert result.usage.completion_tokens == 45
    assert result.usage.total_tokens == 168
    assert result.usage.calls == 1
    assert result.usage.cost_usd == 0.0


async def test_authentication_error_is_not_retried(server: ScriptedLLMServer) -> None:
    server.push(Reply.error(401, message="Incorrect API key provided"), Reply.json(VALID))

    with pytest.raises(ProviderError, match=r"refused.*Incorrect API key.*OPENAI_API_KEY"):
        await ask(provider(server))

    assert len(server.chat_requests) == 1


async def test_unrelated_bad_request_does_not_change_the_output_mode(
    server: ScriptedLLMServer,
) -> None:
    server.push(Reply.error(400, message="This model's maximum context length is 8192 tokens"))
    llm = provider(server)

    with pytest.raises(ProviderError, match="maximum context length"):
        await ask(llm)

    assert llm.output_mode == "json_schema"
    assert len(server.chat_requests) == 1


async def test_rejected_json_schema_falls_back_to_json_mode_and_remembers() -> None:
    async with ScriptedLLMServer(reject_response_formats=frozenset({"json_schema"})) as server:
        server.push(Reply.json(VALID), Reply.json(VALID))
        llm = provider(server)

        first = await ask(llm)
        second = await ask(llm)

    assert first.value == second.value == Answer(name="Ada", score=3)
    assert llm.output_mode == "json_object"
    formats = [r.body["response_format"] for r in server.chat_requests]
    assert [f["type"] for f in formats] == [
        "json_schema",
        "json_schema",
        "json_object",
        "json_object",
    ]
    assert [f["json_schema"]["strict"] for f in formats[:2]] == [True, False]
    system = server.chat_requests[-1].messages[0]["content"]
    assert "JSON" in system
    assert '"score"' in system


async def test_provider_without_json_modes_gets_the_schema_in_the_prompt() -> None:
    rejected = frozenset({"json_schema", "json_object"})
    async with ScriptedLLMServer(reject_response_formats=rejected) as server:
        server.push(Reply.text('Sure: {"name": "Ada", "score": 3}'))
        llm = provider(server)

        result = await ask(llm)

    assert result.value == Answer(name="Ada", score=3)
    assert llm.output_mode == "prompt"
    last = server.chat_requests[-1]
    assert "response_format" not in last.body
    assert '"score"' in last.messages[0]["content"]


async def test_responder_answers_when_nothing_is_queued() -> None:
    def responder(messages: list[dict[str, Any]]) -> str:
        return json.dumps({"name": messages[-1]["content"], "score": len(messages)})

    async with ScriptedLLMServer(responder=responder) as server:
        result = await ask(provider(server))

    assert result.value == Answer(name="Rate Ada.", score=2)


def test_make_llm_is_none_without_a_model() -> None:
    assert make_llm(Settings(llm_model=None)) is None


def test_make_llm_builds_a_provider_from_settings() -> None:
    settings = Settings(
        llm_model="ollama_chat/llama3.1",
        llm_base_url="http://127.0.0.1:11434",
        llm_timeout_s=12.5,
        max_retries=1,
    )

    llm = make_llm(settings)

    assert isinstance(llm, LiteLLMProvider)
    assert llm.model_name == "ollama_chat/llama3.1"
    assert llm.api_base == "http://127.0.0.1:11434"
    assert llm.timeout_s == 12.5
    assert llm.max_retries == 1
