"""LLM providers: the `LLM` protocol and its litellm implementation.

Importing this package does not import litellm; building a `LiteLLMProvider`
(or calling `make_llm` with a model configured) does.
"""

from polyg_core.providers.llm.base import LLM, LLMResult, Usage
from polyg_core.providers.llm.litellm import LiteLLMProvider, make_llm

__all__ = ["LLM", "LLMResult", "LiteLLMProvider", "Usage", "make_llm"]
