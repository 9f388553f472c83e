"""Questions that gather or chain: their answer is spread over several memories.

"What activities has Dana done with her family?" collects what was said on many days;
"What do Dana and Lee both like?" joins two people's memories; "Which service that
depends on Redis failed last week?" follows a link before it can match. Such questions
are answered through the graphs (the person, their relations, the events they took part
in, the concepts their memories share) rather than by the one memory most like the
question, so recall runs the graph-side retrievers and personalized PageRank for them.

The cues are the shape of the question, never its topic:

* a plural thing asked for ("what books has ...", "which events did ...", "what kinds of");
* the present perfect about someone ("what has Dana painted?", "where has Lee camped?"),
  which sums up a stretch of time;
* gathering words ("both", "all the", "in what ways", "how many times", "ever", "so far");
* a relative clause that chains ("which service that depends on ...", "the team whose ...");
* a habit or taste asked of someone in the present ("what does Dana do to unwind?", "what
  do Lee's parents like?"): it is said over many days, never in one memory;
* a count of things ("how many cousins does Lee have?", "how many children has Dana
  got?", irregular plurals included), whose parts are told apart;
* a person's things asked for in the plural ("What are Dana's hobbies?", "What were Lee's
  dogs' names?"): each is told on its own day.
"""

from __future__ import annotations

import re

_AUX = r"(?:has|have|had|does|do|did|are|were|is|was)"
_PLURAL_THING = re.compile(
    # "What books has", "Which charity runs did", "What jazz bands/orchestras has"
    rf"^\W*(?:what|which)\s+(?:[\w+/'-]+\s+){{0,2}}[a-z][\w/'-]*[a-rt-z]s\s+{_AUX}\b",
    re.IGNORECASE,
)
_KINDS = re.compile(
    r"^\W*(?:what|which)\s+(?:kinds?|types?|sorts?|ways?)\s+of\b|\bin what ways?\b",
    re.IGNORECASE,
)
_PERFECT = re.compile(
    # "What has Dana knitted?", "Where has Lee sailed?", "What activities has Dana done?";
    # not "What car has Dana got (now)?", which asks what she has.
    r"^\W*(?i:what|where|which|who|whom)\b(?:\s+[\w+/'-]+){0,3}\s+(?i:has|have)\s+"
    r"(?:[A-Z][\w'-]*|(?i:he|she|they|we|you|i))\b(?!\s+got\b(?!\s+(?:up|into)\b))",
)
_GATHER = re.compile(
    r"\b(?:both|all the|all of (?:the|her|his|their|my|our)|every|each of|how many times"
    r"|how often|ever|so far|what are some|what were some|list)\b",
    re.IGNORECASE,
)
_HABIT = re.compile(
    # "What does Dana do to unwind?", "What do Lee's parents like?", "What does Dana enjoy?"
    r"^\W*(?i:what|which)\s+(?i:do|does)\s+(?:[A-Z][\w'-]*(?:'s\s+[\w'-]+)?|(?i:he|she|they))"
    r"\s+(?i:do|like|love|enjoy|prefer)\b",
)
_COUNT = re.compile(r"^\W*how many\s+[a-z][\w'-]*s\s+(?:do|does|did|has|have|had)\b", re.I)
_COUNT_OF_SOMEONE = re.compile(
    # "How many children does Dana have?", "How many sheep has Lee raised?": the noun need
    # not end in -s; what marks the count is someone counted for.
    r"^\W*(?i:how\s+many)\s+(?:[\w'-]+\s+){0,2}?[a-z][\w'-]*\s+(?i:do|does|did|has|have|had)\s+"
    r"(?:[A-Z][\w'-]*|(?i:he|she|they|we|you|i))\b"
)
_THEIR_THINGS = re.compile(
    # "What are Dana's hobbies?", "Who were Lee's mentors?", "What are Dana's pets' names?"
    r"^\W*(?i:what|which|who)\s+(?i:are|were)\s+(?:[A-Z][\w-]*(?:'s|’s)|(?i:his|her|their))\s+"
    r"(?:[\w'-]+\s+){0,2}?[a-z][\w-]*[a-rt-z]s'?(?:\s+[\w'-]+){0,2}\W*$"
)
_CHAIN = re.compile(
    r"\b(?:which|what|who)\s+(?:[\w-]+\s+){1,2}(?:that|which|who|whose)\s+\w+"
    r"|\b(?:the|a)\s+[\w-]+\s+(?:that|whose)\s+(?:depends?|relies|uses|owns|caused|led|runs|"
    r"belongs|reports|works)\b",
    re.IGNORECASE,
)


def asks_to_gather(question: str) -> bool:
    """Whether the question gathers or chains (see the module docstring)."""
    text = question.strip()
    if not text:
        return False
    return any(
        p.search(text) is not None
        for p in (
            _PLURAL_THING,
            _KINDS,
            _PERFECT,
            _GATHER,
            _CHAIN,
            _HABIT,
            _COUNT,
            _COUNT_OF_SOMEONE,
            _THEIR_THINGS,
        )
    )


_NAMED_KINDS = (
    # Kinds of things usually told by their names: "Which bands has Dana seen?" is
    # answered by "It was The Lumens!", a memory that names something.
    "book|novel|author|writer|poet|artist|musician|band|singer|song|album|movie|film|show|"
    "series|name|title|place|cit(?:y|ie)|town|village|countr(?:y|ie)|restaurant|cafe|bar|"
    "shop|store|brand|game|team|club|compan(?:y|ie)|podcast|app|website|school|hotel"
)
_ASKS_FOR_NAMES = re.compile(
    rf"^\W*(?:what|which)\b(?:\s+[\w+/'’-]+){{0,4}}?\s+(?:[\w-]+/)?(?:{_NAMED_KINDS})(?:e?s)?(?:'|’)?"
    r"(?=[\s/?.,!]|$)",
    re.IGNORECASE,
)


def asks_for_names(question: str) -> bool:
    """Whether the question asks for things of a kind that is told by name (books, bands,
    cities, pets' names...): what answers it names something."""
    return _ASKS_FOR_NAMES.search(question.strip()) is not None


GATHER_ENTITY_WEIGHT = 0.3
"""The entity retriever's weight in fusion for such a question (0.2 otherwise): its answer is
what the named one said and did, spread over memories that share few words with it."""
GATHER_GRAPH_WEIGHT = 0.1
"""The graph retriever's weight for such a question: what the graph side reaches."""
GATHER_PEOPLE_WEIGHT = 0.45
"""The graph retriever's weight when it reached the memories of the people the question
names (`graph_memories.people_memories`): what they said about what is asked."""


_FORM_WORDS = re.compile(
    r"\b(?:what|which)\s+(?:kinds?|types?|sorts?)\s+of\b|\bin what ways?\b", re.IGNORECASE
)


def without_form_words(question: str) -> str:
    """The question without the words that only shape it ("what kind of", "in what ways").

    "What kind of art ..." asks about art: "kind" would match "your kind words".
    """
    out = _FORM_WORDS.sub(" ", question)
    return " ".join(out.split()) if out.strip() else question
