"""The asked span of a quoted sentence: what a WHAT or HOW MANY question wants, not the
whole sentence around it.

A question names what it asks about with a word the evidence repeats ("What did she
research?" — "Researching old railway maps, it's been a joy"): the answer is the
phrase that follows that word, up to the end of its clause ("old railway maps"). A "how
many" question is answered by the number the sentence gives (as digits). A span is taken
only when it is short and says something the question does not already say; otherwise
the caller keeps the sentence (and trusts it less).
"""

from __future__ import annotations

import re

from polyg_core.recall.answer.words import stem, terms
from polyg_core.recall.currency import PHONE

MAX_SPAN_WORDS = 6

_HOW_MANY = re.compile(r"^\W*how\s+many\b", re.IGNORECASE)
_HOW_MUCH = re.compile(r"^\W*how\s+much\b", re.IGNORECASE)
_WHAT = re.compile(r"^\W*(?:what|which)\b", re.IGNORECASE)
# A question for an amount of money (the amount, with its currency sign and unit, below).
_ASKS_AMOUNT = re.compile(
    r"^\W*how\s+much\b|\b(?:paid|pay|paying|costs?|costing|price|charges?|charged|charging"
    r"|fees?|rates?|salary|wages?|rent)\b",
    re.IGNORECASE,
)
# A question for a phone number ("What's Rahul's mobile?", "What number do I ring ...?"),
# not a count or another number ("What number bus ...?").
_ASKS_PHONE = re.compile(
    r"\b(?:phone|mobile|mob|landline|cell)\b(?!\s+(?:provider|network|contract|plan|case|bill))"
    r"|\bnumber\s+(?:do|should|can|did|to)\b|\b(?:number|no\.?)\s+(?:for|of)\s+(?!\w+s\b)",
    re.IGNORECASE,
)
# "What car does Imani drive?", "Which gate ...?": the kind of thing asked.
_WHAT_KIND = re.compile(r"^\W*(?:what|which)\s+([a-z]+)\s", re.IGNORECASE)
# A number with its decimals, thousands or clock ("3.12", "1,450", "27:42") is one token,
# and so is an amount with its currency sign ("£725").
_MONEY_SIGNS = "£$€"
_AMOUNT = re.compile(
    # ... its sign before it ("£725") or after it, as many write euros ("86€")
    rf"(?:[{_MONEY_SIGNS}]\s?\d[\d,]*(?:\.\d+)?(?:k\b)?|(?<![\w.,])\d[\d,]*(?:\.\d+)?"
    rf"[{_MONEY_SIGNS}])"
    r"(?:\s?(?:/|per\s|an?\s)\s?(?:hr|hour|h|month|mo|mth|wk|week|year|yr|night|day)\b)?",
    re.IGNORECASE,
)
_TOKEN = re.compile(
    rf"[{_MONEY_SIGNS}]?\d+(?:[.,:]\d+)+\w*[%{_MONEY_SIGNS}]?"
    rf"|[{_MONEY_SIGNS}]?[A-Za-z0-9][\w'’-]*[%{_MONEY_SIGNS}]?"
    r"|[.,;:!?()\"“”–—]|\s-\s"
)
# "CI runs on Forgeline", "chat lives in Hearth": a verb and its preposition after the
# asked word; the value is what follows them, not the verb.
_VERB_THEN = frozenset({"on", "in", "at", "to", "through", "into", "via", "with", "from"})
# Words that end a clause: the span stops before them.
_CLAUSE_END = frozenset({
    "because", "since", "so", "but", "which", "who", "that", "when", "while", "where",
    "and", "it", "it's", "its", "i", "i'm", "i've", "we", "we're", "they", "you", "he",
    "she", "is", "was", "are", "were", "to", "for", "with", "from", "in", "at", "on",
    "recently", "yesterday", "today", "last", "this", "next", "lately", "too", "also",
    "ago", "week", "month", "year",
    "really", "just", "as", "if", "than", "like", "after", "before", "by", "about",
})  # fmt: skip
# Words a span does not start with.
_LEADING = frozenset({
    "a", "an", "the", "some", "my", "our", "your", "his", "her", "their", "this", "that",
    "these", "those", "of", "to", "for", "about", "into", "on", "in", "at", "with", "up",
    "out", "lots", "lot", "bunch", "few", "couple", "all", "really", "so", "been", "be",
    "like", "such", "as", "go", "going", "own",
})  # fmt: skip
_SUBJECT_OF = frozenset({
    "is", "are", "was", "were", "has", "have", "had", "does", "did", "will", "would", "can",
    "could", "should", "must", "'s", "’s", "sounds", "looks", "seems", "makes", "made",
})  # fmt: skip
_PRONOUNS = frozenset({
    "i", "you", "he", "she", "we", "they", "it", "me", "him", "them", "us", "i'm", "you're",
    "it's", "that's", "there", "here", "what", "who",
})  # fmt: skip
_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "twice": 2, "once": 1, "both": 2,
}  # fmt: skip


def asks_span(question: str) -> bool:
    """True for a question that wants a short thing: what/which ..., how many/much ..."""
    return bool(_WHAT.search(question) or _HOW_MANY.search(question) or _HOW_MUCH.search(question))


def _words(sentence: str) -> list[str]:
    return [t.strip() for t in _TOKEN.findall(sentence)]


def _count(about: set[str], words: list[str]) -> str | None:
    """The number the sentence gives for the counted thing (as digits)."""
    found: list[tuple[int, str]] = []
    for i, w in enumerate(words):
        low = w.lower()
        value = str(_NUMBER_WORDS[low]) if low in _NUMBER_WORDS else low if low.isdigit() else ""
        if not value:
            continue
        after = {stem(x.lower()) for x in words[i + 1 : i + 3]}
        found.append((0 if after & about else 1, value))
    return min(found)[1] if found else None


def _wordlike(token: str) -> bool:
    """Whether `token` is a word or a number (an amount with its sign too), not punctuation."""
    return token[0].isalnum() or token[0] in _MONEY_SIGNS


def _after(words: list[str], start: int, asked: set[str]) -> str | None:
    """The phrase after the asked word, when the asked word governs one: not when it is
    the subject of what follows ("this painting is awesome") or a person follows it."""
    if start < len(words) and words[start].lower() in _SUBJECT_OF:
        return None
    span: list[str] = []
    first = start  # where the span starts, after the leading words it passes over
    for i, w in enumerate(words[start:], start):
        low = w.lower()
        if not _wordlike(w):
            break
        if not span and low in _LEADING:
            first = i + 1
            continue
        if not span and (low in _PRONOUNS or low in _CLAUSE_END):
            return None  # a new clause starts: the asked word governs no phrase here
        if span and low in _CLAUSE_END:
            break
        span.append(w)
        if len(span) > MAX_SPAN_WORDS:
            return None
    while span and span[-1].lower() in _LEADING:
        span.pop()
    if not span or not (terms(" ".join(span)) - asked):
        return None
    return _valued(words, first + len(span), span, asked)


def _valued(words: list[str], end: int, span: list[str], asked: set[str]) -> str | None:
    """The span, unless what follows it (at `end`) shows it is no value: "runs on ...",
    "rate is ..." (a verb, or the subject of one); a label's value follows its colon
    ("5k PB: 27:42")."""
    follows = words[end].lower() if end < len(words) else ""
    if len(span) == 1 and (
        (span[0].islower() and follows in _VERB_THEN)
        # "My sister Ottilie is obsessed with ...": a name before its verb is the
        # subject the asked word introduces, not the value.
        or follows in _SUBJECT_OF
    ):
        return None
    if follows == ":":
        # ... and a label without one the rule finds is no answer ("recipe card: 18g in /
        # 36g out": not "card").
        return _after(words, end + 1, asked)
    return " ".join(span)


def asked_span(question: str, about: set[str], sentence: str) -> str | None:
    """The short phrase of `sentence` that answers `question`, or None.

    Args:
        question: the question as asked.
        about: the question's content terms that are not an asked entity's name (stems).
        sentence: the best sentence of the evidence, without a "Speaker: " prefix.
    """
    words = _words(sentence)
    if not words:
        return None
    if _HOW_MANY.search(question):
        return _count(about, words)
    if (value := _asked_value(question, sentence)) is not None:
        return value
    asked = terms(question)
    # The words of a clause that places the question in time ("... when she knew the
    # warehouse people?", "Before the hotel deal, ...") say when, not what is asked: no
    # span follows them.
    about = about - _placing_terms(question)
    kind = _WHAT_KIND.match(question)
    noun = stem(kind.group(1).lower()) if kind else None
    kinds = _kinds(question)
    for i, w in enumerate(words):
        if w[0].isalnum() and stem(w.lower()) in about:
            if w.lower() in kinds and (name := _kind_named(words, i, asked)) is not None:
                return name
            span = _after(words, i + 1, asked)
            if span is None:
                continue
            if stem(w.lower()) != noun:
                return span
            if _compound(words, i, span):
                continue
            # "plot 7" for "Which plot ...?": a bare number keeps the kind it numbers.
            first = span.split()[0]
            return f"{w} {first}" if _NUMBERED.fullmatch(first) and words[i + 1] == first else span
    return None


def _asked_value(question: str, sentence: str) -> str | None:
    """The amount of money (`_asked_amount`) or the phone number the question asks for:
    "What number do I ring if the internet goes down?" of "internet down AGAIN, rang 0345
    601 2277 ...", the number, not the words after "internet"."""
    if (amount := _asked_amount(question, sentence)) is not None:
        return amount
    if _ASKS_PHONE.search(question) and (phone := PHONE.search(sentence)) is not None:
        return phone.group(0).strip()
    return None


def _asked_amount(question: str, sentence: str) -> str | None:
    """ "What was I paid an hour?" of "started at the depot, £11.40/hr": the amount; not
    for a thing asked with "pay" ("Which venue did we pay ...?")."""
    if not _ASKS_AMOUNT.search(question) or _ASKS_WHICH.search(question):
        return None
    amount = _AMOUNT.search(sentence)
    return amount.group(0) if amount is not None else None


def _kind_named(words: list[str], at: int, asked: set[str]) -> str | None:
    """ "first FreshCrate box came" for "Which meal box ...?": the name that the asked kind
    at `at` follows is what it is called ("Fernleigh Bank" with a capital, part of the
    name)."""
    name = _name_before(words, at, asked)
    if name is None:
        return None
    return f"{name} {words[at]}" if _NAME.fullmatch(words[at]) else name


_NUMBERED = re.compile(r"\d+[A-Za-z]?|[A-Z]")
# "Which venue did we pay ...?", "Who do I pay ...?": a thing or a person, not an amount.
_ASKS_WHICH = re.compile(r"^\W*(?:which|who|whom|where)\b", re.IGNORECASE)
# A number that names the asked kind after it ("the 42 bus").
_NUMBER_NAME = re.compile(r"\d+[A-Za-z]?")
# A clause that places the question in time: after the question's own words, or before
# them up to a comma.
_PLACING_AFTER = re.compile(r"\s(?:back\s+)?(?:when|while|before|after|until)\s.*$", re.IGNORECASE)
_PLACING_BEFORE = re.compile(
    r"^\W*(?:back\s+)?(?:when|while|before|after|until)\s[^,]*,", re.IGNORECASE
)


def _placing_terms(question: str) -> set[str]:
    """The terms of the clause that places `question` in time, less the question's own."""
    clause = _PLACING_BEFORE.search(question) or _PLACING_AFTER.search(question)
    if clause is None:
        return set()
    rest = question[: clause.start()] + " " + question[clause.end() :]
    return terms(clause.group(0)) - terms(rest)


# "Which meal box am I ...?": the words that name the kind of thing asked, up to its verb.
_KIND_PHRASE = re.compile(r"^\W*(?:what|which)\s+([a-z]+)(?:\s+([a-z]+))?", re.IGNORECASE)
_VERBS = frozenset({
    "is", "are", "was", "were", "am", "do", "does", "did", "has", "have", "had", "will",
    "would", "can", "could", "should", "'s", "’s",
})  # fmt: skip


def _kinds(question: str) -> set[str]:
    """The one or two words after "what" or "which" before a verb (lower case)."""
    m = _KIND_PHRASE.match(question)
    if m is None:
        return set()
    out: set[str] = set()
    for word in m.groups():
        if word is None or word.lower() in _VERBS:
            break
        out.add(word.lower())
    return out


# A name: a capital, then a lower-case letter ("Ironbark", "FreshCrate"), not an acronym.
_NAME = re.compile(r"[A-Z][a-z][\w’'-]*")
_NAME_JOINS = frozenset({"&", "of"})


def _name_before(words: list[str], at: int, asked: set[str]) -> str | None:
    """The name right before the asked word at `at` that it is the name of ("Ironbark
    gym"), up to three words: not a possessive ("Ravi's PC"), not a word the question
    asks with, not the sentence's first word unless a capital is inside it."""
    if at > 0 and _NUMBER_NAME.fullmatch(words[at - 1]):
        return words[at - 1]
    names: list[str] = []
    i = at - 1
    while i >= 0 and len(names) < 3:
        w = words[i]
        joins = bool(names) and w in _NAME_JOINS and i > 0 and _NAME.fullmatch(words[i - 1])
        if not joins and not _names_it(w, i, asked):
            break
        names.insert(0, w)
        i -= 1
    return " ".join(names) if names else None


def _names_it(word: str, at: int, asked: set[str]) -> bool:
    """Whether `word` (at `at` in its sentence) is part of a name: a capital, then a
    lower-case letter; not a possessive nor a word the question asks with; the sentence's
    first word only with a capital inside it."""
    if not _NAME.fullmatch(word) or word.lower().endswith(("'s", "’s")):
        return False
    if stem(word.lower()) in asked:
        return False
    return at > 0 or any(c.isupper() for c in word[1:])


def _compound(words: list[str], at: int, span: str) -> bool:
    """Whether `span` is one lower-case word right after the asked kind at `at`: the two
    are one noun ("car park" for "What car ...?"), not the kind and its value."""
    return " " not in span and span.islower() and words[at + 1] == span
