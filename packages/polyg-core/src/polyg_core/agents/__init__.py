"""The LLM-backed agents and their rule-based fallbacks: intent classifier and memory extractor."""

from polyg_core.agents.classifier import (
    DEFAULT_CLASSIFIER_MAX_TOKENS,
    ClassifyOutcome,
    IntentDraft,
    LLMClassifier,
    RuleClassifier,
    check_intent,
    classify,
)
from polyg_core.agents.extractor import (
    DEFAULT_EXTRACTOR_MAX_TOKENS,
    ExtractionDraft,
    ExtractOutcome,
    LLMExtractor,
    RuleExtractor,
    check_extraction,
    extract,
)
from polyg_core.agents.names import EntityMatcher, KnownEntities, NameMention, find_names
from polyg_core.agents.timeparse import TimeMatch, find_times, match_times, parse_timeframe

__all__ = [
    "DEFAULT_CLASSIFIER_MAX_TOKENS",
    "DEFAULT_EXTRACTOR_MAX_TOKENS",
    "ClassifyOutcome",
    "EntityMatcher",
    "ExtractOutcome",
    "ExtractionDraft",
    "IntentDraft",
    "KnownEntities",
    "LLMClassifier",
    "LLMExtractor",
    "NameMention",
    "RuleClassifier",
    "RuleExtractor",
    "TimeMatch",
    "check_extraction",
    "check_intent",
    "classify",
    "extract",
    "find_names",
    "find_times",
    "match_times",
    "parse_timeframe",
]
