"""Questions that gather or chain are multi-hop: PPR runs for them and what it reaches
survives fusion."""

from __future__ import annotations

import pytest
from polyg_core.recall.classifier import RuleClassifier
from polyg_core.recall.multihop import asks_for_names, asks_to_gather, without_form_words


@pytest.mark.parametrize(
    "question",
    [
        "What activities has Ines done with her family?",
        "What do Ines and Tomas both like?",
        "Which service that depends on Redis failed last week?",
        "What books has Tomas read?",
        "Where has Ines travelled?",
        "What kinds of bread does Tomas bake?",
        "In what ways is Ines helping the choir?",
        "How many times has Tomas been to Porto?",
        "What does Ines do to unwind?",
        "What do Tomas's parents like?",
        "How many cousins does Ines have?",
        "How many children does Tomas have?",
        "How many sheep has Ines raised?",
        "What are Tomas's hobbies?",
        "What were Ines's dogs' names?",
        "Who are Tomas's mentors?",
    ],
)
def test_gathering_and_chaining_questions_are_multi_hop(question: str) -> None:
    assert asks_to_gather(question)
    assert RuleClassifier().classify(question).multi_hop


@pytest.mark.parametrize(
    "question",
    [
        "What is the status of the deploy?",
        "Why did the auth-service crash?",
        "When did Tomas move to Porto?",
        "Who owns the billing worker?",
        "What does Redis cache?",
        "What does Ines think about the move?",
        "What does the deploy script do?",
        "What is Ines's address?",
        "How many days are left until the release?",
        "How much does Tomas earn?",
        "What are the steps?",
        "What car has Ines got?",
        "Which bike has she got now?",
    ],
)
def test_single_fact_questions_are_not(question: str) -> None:
    assert not asks_to_gather(question)


def test_question_form_words_leave_the_search_words() -> None:
    assert (
        without_form_words("What kind of furniture does Ines build?")
        == "furniture does Ines build?"
    )
    assert without_form_words("kind of") == "kind of"  # nothing else would be left


@pytest.mark.parametrize(
    "question",
    [
        "What jazz bands/orchestras has Ines heard?",
        "What books has Tomas read?",
        "What are Ines's pets' names?",
        "Which cities has Tomas visited?",
        "What countries has Ines been to?",
        "What film did Tomas watch on Ines's advice?",
        "What is the name of Tomas's dog?",
    ],
)
def test_questions_for_things_told_by_name(question: str) -> None:
    assert asks_for_names(question)


@pytest.mark.parametrize(
    "question",
    [
        "What instruments does Ines play?",
        "What activities has Tomas done?",
        "What kind of furniture does Ines build?",
        "What is Tomas's bartending job?",
        "Why did Ines move?",
    ],
)
def test_questions_for_things_not_told_by_name(question: str) -> None:
    assert not asks_for_names(question)
