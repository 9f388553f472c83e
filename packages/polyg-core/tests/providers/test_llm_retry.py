from dataclasses import dataclass, field
from datetime import timedelta
from email.utils import format_datetime

from hypothesis import given
from hypothesis import strategies as st
from polyg_core.providers.litellm_common import RetryPolicy, config_hint, retry_after
from polyg_shared.timeutil import utc_now


@dataclass
class HeaderError(Exception):
    litellm_response_headers: dict[str, str] = field(default_factory=dict[str, str])


@given(
    retry=st.integers(min_value=0, max_value=30),
    base=st.floats(min_value=0.001, max_value=5),
    cap=st.floats(min_value=0.001, max_value=60),
)
def test_backoff_grows_but_never_exceeds_the_cap(retry: int, base: float, cap: float) -> None:
    policy = RetryPolicy(backoff_base_s=base, backoff_max_s=cap)
    ceiling = min(base * 2**retry, cap)

    delay = policy.delay(retry, None)

    assert ceiling / 2 <= delay <= ceiling


def test_retry_after_is_used_as_given_up_to_the_cap() -> None:
    policy = RetryPolicy(backoff_max_s=10)

    assert policy.delay(0, 2.5) == 2.5
    assert policy.delay(0, 600) == 10
    assert policy.delay(0, -1) == 0


def test_retry_after_headers_in_seconds_milliseconds_and_dates_are_read() -> None:
    in_five = format_datetime(utc_now() + timedelta(seconds=5), usegmt=True)

    assert retry_after(HeaderError({"retry-after": "3"})) == 3.0
    assert retry_after(HeaderError({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    from_date = retry_after(HeaderError({"retry-after": in_five}))
    assert from_date is not None and 3 <= from_date <= 5
    assert retry_after(HeaderError({"retry-after": "soon"})) is None
    assert retry_after(HeaderError()) is None


def test_hint_names_the_settings_and_the_key_variable() -> None:
    hint = config_hint("anthropic/claude-3-5-haiku-latest", None)

    assert "LLM_MODEL" in hint
    assert "ANTHROPIC_API_KEY" in hint
    assert "LLM_BASE_URL (unset)" in hint
    assert "Ollama is running" in config_hint("ollama_chat/llama3.1", "http://127.0.0.1:11434")
