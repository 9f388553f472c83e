"""What the rule extractor keeps as concepts: ideas, never the contracted function words
of chat ("it's", "i'm", "don't")."""

from __future__ import annotations

import pytest
from polyg_core.remember.extract_rules import concepts_of


def _names(text: str, limit: int = 10) -> list[str]:
    return [name for name, _ in concepts_of(text, [], [], limit)]


@pytest.mark.parametrize(
    "text",
    [
        "It's raining again and that's why I'm inside with the violin.",
        "You're right, what's left is the violin. We'll see, I've tried, she'd agree.",
        "There's a violin here. Let's keep it. Everyone's happy and nobody's upset.",
        "Don't worry, it isn't broken and the violin can't fall; they won't mind.",
        # A typeset apostrophe is the same contraction.
        "It\u2019s the violin. I\u2019m sure it isn\u2019t broken, and we didn\u2019t drop it.",
    ],
)
def test_contractions_of_function_words_are_never_concepts(text: str) -> None:
    names = _names(text)
    assert "violin" in names
    for name in names:
        for word in name.split():
            assert "'" not in word or word.endswith("'s"), name
            assert word not in {"isn", "didn", "don", "won", "can"}, name
    assert not {n for n in names if n.split()[0] in {"it's", "i'm", "let's", "everyone's"}}


def test_a_contracted_word_that_is_not_a_function_word_still_counts() -> None:
    # "garden's" is the garden's: the idea stays; "today's" is as little an idea as "today".
    names = _names(
        "The garden's fence fell over. Today's storm did it; the garden's fence is gone."
    )
    assert any("garden's" in n for n in names)
    assert not any("today's" in n for n in names)
