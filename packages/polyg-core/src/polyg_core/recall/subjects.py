"""Which memories are about the subjects a question asks about, as currency compares them.

A note updates another only when both are about the same subject (`recall.currency`).
For a named subject that is a matter of how people write names in notes:

* the whole name, or for a name of several words its first or last word alone, where
  nothing else is written with it as one name: "Bao's favourite now" is about Bao
  Nguyen-Castillo, "Bao Tran" is not, and "Kaisa Virtanen" is not about Lena Virtanen;
* one word of a longer name ("Kovacs" in the question) reaches the notes that call the
  person by another word of it ("Ana"), through a note that writes both ("Ana Kovacs");
* a name in the possessive before a relation the question does not ask about is someone
  else ("Lena's sister celebrates in March" is not about Lena's birthday), unless the note
  says who that is ("Priya's manager is Ines");
* a greeting before a name is not part of it ("Hey Ines");
* a first name shortened to its first three letters or more, written alone, is the name
  ("Magda's coaching the under-12s" is about Magdalena), and so is its initial opening a
  note or in the possessive ("T says ...", "lunch at T's" for Tomasz);
* a note jotted in lower case that opens with a proper name names it ("ines stays till 6
  now" is about Ines), and so does the name in lower case anywhere in a note ("coffee w
  ingrid", "tried sabor limeño on a tue", two words in a row of a longer name: "call w/
  gideon @ spice route"), unless it is an everyday word too ("will", "grace", "sunday":
  then only in the possessive); a name asked in lower case ("payments service") is a
  thing, not a person.

A question about the user ("the user", "I", "my", "we", "our") that names no other
person, or a question that names no one ("What is the wifi password?"), is about every
note compared: the notes a user keeps are about the user and their things, whether they
say "I" or are as terse as "gym: IronYard on 5th", or open with a business or a place
("Gallo's Garage did the brakes", "Harmony Street choir: ..."); not one that tells what a
named person did ("Arlo Crane moved the review", "Colm's stepped back from the runs, his
back's gone"). A note about someone close to whom is asked ("Ines's partner
...", "My sister ...") is about them, not about whom is asked (`Subjects.others`). One
about the user that also names a person is about the notes said in the first person and
the notes that name that person. Names found in most memories (the speakers of a
conversation) say nothing of which notes are versions of one another and are left out
(`common`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from polyg_core.recall.catalogue import CatalogueEntry, NamespaceCatalogue
from polyg_core.text.gazetteer import (
    EVERYDAY_NAMES,
    GREETINGS,
    KINSHIP,
    ORG_SUFFIXES,
    PLACE_SUFFIXES,
)
from polyg_core.text.gazetteer import words as word_set
from polyg_core.text.names import STOP_WORDS as NAME_STOP_WORDS
from polyg_core.text.normalize import without_accents

__all__ = [
    "FIRST_PERSON",
    "HE_OR_SHE",
    "Subjects",
    "about_a_named_person",
    "about_a_relation",
    "about_another_numbered",
    "anothers_like_thing",
    "naming",
    "subjects_of",
    "writes_name",
]

_NAME_RUN = re.compile(r"[A-Z][\w-]*(?:['’]s)?(?:\s+[A-Z][\w-]*(?:['’]s)?)*")
_NAME_PART = re.compile(r"\w+")
_POSSESSIVE_END = re.compile(r"['’]s$")
_NEXT_WORD = re.compile(r"\s*(\w+)")
_NOT_NAME_WORDS = GREETINGS | {w.capitalize() for w in NAME_STOP_WORDS}
_NOT_NAME_KEYS = NAME_STOP_WORDS | {w.lower() for w in GREETINGS}
_COPULA = re.compile(r"\s*(?:is|was|are|were)\b", re.IGNORECASE)
_ASKS_ABOUT_THE_USER = re.compile(r"\b(?:the\s+user|user['’]s|I|[Mm]y|me|[Ww]e|[Oo]ur|us)\b")
# "Arlo Crane moved the review", "Orla Gosling's team ...", "... was switched by Vesna
# Bellweather": a note about what that person did. A name run that opens with an article
# is read so too: "The Kestrel team owns the warehouse" is another team's news.
_ABOUT_A_NAMED_PERSON = re.compile(
    r"^\W*(?:[A-Z][a-z][\w'’-]*\s+)+[A-Z][a-z][\w-]*(?:['’]s)?\s+[a-z]"
    r"|\bby\s+[A-Z][a-z][\w'’-]*\s+[A-Z][a-z][\w-]*\b"
)
# "Colm's stepped back from the runs, his back's gone": what one person named by a single
# word has done, their "has" written short, and the note speaks of them as he or she (a
# thing is "it": "Knee's been playing up so it's swimming for now").
_HAS_DONE = re.compile(
    r"^\W*[A-Z][a-z]+['’]s\s+(?:\w{4,}ed|taken|gone|been|got|given|done|left|become)\b"
)
HE_OR_SHE = re.compile(r"\b(?:he|she|his|her|him|hers)\b", re.IGNORECASE)
_USERS_RELATION = re.compile(
    r"\W*(?:(?:my|our|(?:the\s+)?user['’]s)\s+(\w+)\b|(\w+)['’]s\b|(\w+s)['’](?!\w)"
    # a parent or grandparent as their child writes of them: "mum wants me to ..."
    r"|(mum|mom|dad|gran|granny|grandad|grandma|grandpa|nan|nana)\b(?!['’]s)"
    # a relation named before their name: "old neighbour Pilar says ..."
    r"|(?:(?:old|former|ex)\s+)?(\w+)\s+(?-i:[A-Z][a-z]))",
    re.IGNORECASE,
)
_OPENING_POSSESSIVE = re.compile(r"\W*[A-Z][\w-]*['’]s\b")
_LOWER_OPENING = re.compile(r"\W*([a-z][\w-]*(?:['’]s)?)(?!\w)")
FIRST_PERSON = re.compile(r"\b(?:I|I['’](?:m|ve|d|ll)|my|me|mine|we|our|us)\b", re.IGNORECASE)
"""A note said in the first person: the user's own."""


@dataclass(frozen=True)
class Subjects:
    """What the question asks about, as memory sets.

    Attributes:
        common: the terms of names found in most memories (they say nothing of a subject).
        named: for each other name the question asks about, the memories that name it.
        people: of `named`, those of names of several words (a person's): a memory without
            it is about someone else.
        kept: for a question about the user that names no one else, or one that names
            no one, the memories that are about the user and their things: all but those
            that open with another person's full name ("Arlo Crane moved the design
            review to Friday") and do not speak in the first person.
        first_person: for a question about the user that names a person, the notes
            said in the first person (the user's own), compared beside `named`.
        others: see the attribute's own note.
    """

    common: set[str]
    named: list[set[str]]
    people: list[set[str]]
    kept: set[str] = field(default_factory=set[str])
    first_person: set[str] | None = None
    others: set[str] = field(default_factory=set[str])
    """The memories about someone close to whom the question asks about, and not about
    them: "Ines's partner Achille is a paramedic" for "What did Ines do for work before?",
    "My sister went vegan" for "What diet do I follow?"."""
    news_of_others: set[str] = field(default_factory=set[str])
    """For a question about the user with notes of the user's (`kept`), the other memories
    that open with what another named person (or team) did or does ("Ilona Varga is now
    working a new job at the council" for "What's my job now?"): their news, not the
    user's."""

    @property
    def compared(self) -> list[set[str]]:
        """The memory sets currency compares by subject: `named`, and the user's
        first-person notes when the question names a person too (a later version of a
        memory holds every name of `named` it holds, not necessarily "I")."""
        return [*self.named, *([self.first_person] if self.first_person is not None else [])]


def subjects_of(
    catalogue: NamespaceCatalogue,
    question: str,
    names: Sequence[str],
    memories: Sequence[CatalogueEntry],
    common_share: float,
) -> Subjects:
    """The question's subjects among `memories`, the ranked ones currency compares (see
    the module docstring); `common_share` is the share of the namespace's memories above
    which a name is common. Reads only the memories given: as cheap in three thousand
    memories as in three."""
    common_names = catalogue.common_names(list(names), common_share)
    common = {t for n in common_names for t in catalogue.lexical.tokens(n)}
    asked = _name_words(question)
    # "Aunt Mbali" is Mbali, written "Aunty Mbali" or "Mbali" as often as with the title.
    specific = [without_title(n) for n in dict.fromkeys(names) if n not in common_names]
    named = [naming(memories, n, asked) for n in specific]
    people = [uuids for n, uuids in zip(specific, named, strict=True) if _a_persons(n)]
    about_the_user = asks_about_the_user(question)
    first_person = _first_person_notes(memories) if about_the_user and people else None
    kept = _users_notes(memories, people, about_the_user, bool(specific or common_names))
    # A relation of whom is asked is someone else even when the name is in most memories
    # (every note of a small namespace names the friend it is about).
    asked_names = list(dict.fromkeys(without_title(n) for n in names))
    others = _someone_close(
        memories,
        asked_names,
        asked,
        about_the_user or bool(kept),
        _lower_case_words(question, asked_names),
    )
    others |= _anothers_things(memories, asked, about_the_user, names)
    others |= anothers_like_thing(memories, question)
    news = _news_of_others(memories, kept) if about_the_user else set[str]()
    return Subjects(common, named, people, kept, first_person, others, news)


def others_news_ahead(question: str, ranked: Sequence[CatalogueEntry]) -> set[str]:
    """For a question about the user, the notes of `ranked` that tell another's news
    (`tells_of_another`: "Brisa Ingram prefers board games over most other hobbies" for
    "What's my favourite board game?"), when some of `ranked` do not: among thousands of
    memories such news can fill the best few and keep the user's notes from being
    compared at all."""
    if not asks_about_the_user(question):
        return set()
    news = {e.uuid for e in ranked if tells_of_another(e.content)}
    return news if len(news) < len(ranked) else set()


def asks_about_the_user(question: str) -> bool:
    """Whether `question` asks about the user ("my", "we", "I", "the user")."""
    return _ASKS_ABOUT_THE_USER.search(question) is not None


def _news_of_others(memories: Sequence[CatalogueEntry], kept: set[str]) -> set[str]:
    """Of `memories`, those not among the user's (`kept`) that open with what another named
    person or team did or does (`Subjects.news_of_others`); none without notes of the
    user's to go below."""
    if not kept:
        return set()
    return {e.uuid for e in memories if e.uuid not in kept and tells_of_another(e.content)}


# "Hamid's permit still zone C": a thing of someone named by one word, written in the
# possessive before a word in lower case.
_POSSESSED = re.compile(r"^\W*([A-Z][a-z]+)['’]s\s+([a-z][\w-]*)")
_IS_OR_HAS = word_set(
    "off at on in out up back been got gone now just still not never always also too a an "
    "the here there away home done left taken given become finally really so very all"
)
"""Words after a name's "'s" that make it "is" or "has" ("Hannah's off to college"):
what the person did, not a thing of theirs."""
_DONE = re.compile(r"(?:ing|ed)$")


def _anothers_things(
    memories: Sequence[CatalogueEntry],
    asked: Collection[str],
    about_the_user: bool,
    names: Sequence[str],
) -> set[str]:
    """For a question about the user (`about_the_user`) that names no one (`names`) and
    asks about no relation, the notes about a thing of someone named by one word that no
    other compared note writes ("Hamid's permit still zone C, his side of the road" for
    "What zone is my parking permit for?"; not "Puffin's outboard = Yamaha 9.9" beside
    "Puffin back in the water", the user's boat), or that open with what such a one does
    or says ("Priya likes doing her expenses in a spreadsheet" for "What do I use for my
    expenses?", "Amara says Marino's does gluten free" for "Where do we get chips on a
    Friday?")."""
    if not about_the_user or names or any(w in _RELATIONS for w in asked):
        return set()
    found: set[str] = set()
    for e in memories:
        owner = _owner_of_a_thing(e.content, asked) or _doer(e.content, asked)
        if owner is None:
            continue
        said = re.compile(rf"\b{owner}\b")
        if not any(said.search(o.content) for o in memories if o.uuid != e.uuid):
            found.add(e.uuid)
    return found


# "theo's swimming lesson", "Ravi's class teacher": whose thing a question asks about, and
# the words after the possessive that say which thing.
_OWNED = re.compile(r"(?<![\w'’-])([A-Za-z][\w-]*)['’]s(?=\s+([a-z][\w-]*)(?:\s+([a-z][\w-]*))?)")


def anothers_like_thing(memories: Sequence[CatalogueEntry], question: str) -> set[str]:
    """The memories that write someone else's thing of the kind the question asks someone's
    ("kemal: elif's swimming got moved to wed" or "that's kwame's team" for "what time is
    theo's swimming lesson now?", "amara's teacher mrs haddad" for "who's junie's class
    teacher?"), names jotted in lower case as often as not: they hold the owner's name
    before one of the words after the asked owner's, and write no word of the asked
    owner's name."""
    owners = _owned_things(question)
    if not owners:
        return set()
    asked = _name_words(question)
    found: set[str] = set()
    for e in memories:
        words = _name_words(e.content)
        things = {t for parts, owned in owners if not parts & words for t in owned}
        if things and _anothers_of(e.content, things, asked):
            found.add(e.uuid)
    return found


def _name_words(text: str) -> set[str]:
    return {w.lower() for w in _NAME_PART.findall(text)}


def _owned_things(question: str) -> list[tuple[set[str], set[str]]]:
    """The owners `question` writes in the possessive ("theo's swimming lesson"), each as
    the words of its name and the words after it that say which thing."""
    owners: list[tuple[set[str], set[str]]] = []
    for m in _OWNED.finditer(question):
        things = {w for w in m.groups()[1:] if w and w not in _IS_OR_HAS | _QUALIFIERS}
        if _someone_not_asked(m.group(1), ()) is not None and things:
            owners.append((_name_words(m.group(1)), things))
    return owners


_QUALIFIERS = word_set(
    "new old next last first current usual regular own other favourite favorite best main "
    "latest little big"
)
"""Words after a possessive that say which of a kind, not the kind ("theo's new school")."""


def _anothers_of(text: str, things: set[str], asked: set[str]) -> bool:
    """Whether `text` writes one of `things` after the possessive of a name the question
    (of name words `asked`) does not write."""
    return any(
        _someone_not_asked(m.group(1), ()) is not None
        and not _name_words(m.group(1)) & asked
        and {m.group(2), m.group(3)} & things
        for m in _OWNED.finditer(text)
    )


def _owner_of_a_thing(text: str, asked: Collection[str]) -> str | None:
    """The one-word name `text` opens with in the possessive before a thing of theirs
    ("Hamid's permit"; not "Hannah's off to college", "Mum's car", "User's name"), unless
    the question, of words `asked`, asks it."""
    m = _POSSESSED.match(text)
    if m is None:
        return None
    name, word = m.group(1), m.group(2)
    if word in _IS_OR_HAS or _DONE.search(word):
        return None
    return _someone_not_asked(name, asked)


def _someone_not_asked(name: str, asked: Collection[str]) -> str | None:
    """`name`, unless the question (of words `asked`) asks it or it is a relation, a title,
    the user or no name ("Mum", "Dr", "User", "It", "Everyone")."""
    key = name.lower()
    if key in asked or key in _RELATIONS or key in TITLES or name == "User":
        return None
    if key in NAME_STOP_WORDS or key in _ANYONE:
        # "It's off", "Everything's on Nordlink Air now": no one.
        return None
    return name


_ANYONE = word_set(
    "everything everyone everybody something someone somebody anything anyone anybody "
    "nothing nobody"
)
"""Words that open a note as a name would and name no one ("Everything's on ...")."""


# "Priya likes a spreadsheet", "Amara says ...": a one-word name, then what its bearer
# does or says, in the present tense.
_DOES = re.compile(r"^\W*([A-Z][a-z]+)\s+([a-z]+)\b")
_THIRD_PERSON = word_set(
    "says thinks reckons swears recommends suggests prefers loves likes hates wants lives "
    "works drives"
)
"""Verbs only a person does: a service writes "charges" or "tracks" as well ("Voltwise
charges 24p/kWh" may name the user's new supplier)."""
_IS_AWAY = word_set("on off away")
"""Words after a name's "'s" that say where its bearer is ("Jude's on nights")."""


def _doer(text: str, asked: Collection[str]) -> str | None:
    """The one-word name `text` opens with before a verb in the present tense of its
    bearer ("Priya likes", "Amara says"; not "Mum thinks", "User prefers") or before where
    its bearer is ("Jude's on nights"), unless the question, of words `asked`, asks it."""
    m = _DOES.match(text)
    if m is not None and m.group(2) in _THIRD_PERSON:
        return _someone_not_asked(m.group(1), asked)
    # "Jude's on nights from the 1st", "Priya's off on leave": where the person is.
    m = _POSSESSED.match(text)
    if m is not None and m.group(2) in _IS_AWAY:
        return _someone_not_asked(m.group(1), asked)
    return None


def _first_person_notes(memories: Sequence[CatalogueEntry]) -> set[str]:
    """The notes said in the first person: for "Is my mentor still Ada Wrenfield?", the
    user's own (the named person's are found by name)."""
    return {e.uuid for e in memories if FIRST_PERSON.search(e.content)}


TITLES = word_set(
    "aunt aunty auntie uncle cousin grandpa grandma granny gran grandad grandpapa nana nan "
    "mr mrs ms miss mx dr prof sir dame pan pani tio tia senor senora sr sra cllr councillor"
)
"""Words written before a person's name that are no part of it ("Aunt Mbali", "Dr Okafor",
"Pan Wieslaw", "Cllr Price")."""


def without_title(name: str) -> str:
    """`name` without the titles it opens with ("Aunt Mbali" is "Mbali"), unless what is
    left is a single letter or nothing ("Aunt K", "Grandpa")."""
    words = name.split()
    i = 0
    while i < len(words) - 1 and without_accents(words[i]).lower().rstrip(".") in TITLES:
        i += 1
    rest = _NAME_PART.findall(" ".join(words[i:]))
    return " ".join(words[i:]) if rest and len(rest[0]) > 1 else name


def _a_persons(name: str) -> bool:
    """Whether `name` is a person's of several words: capitalised ("Ada Wrenfield"; a
    "payments service" is a thing)."""
    words = name.split()
    return len(words) > 1 and all(w[:1].isupper() for w in words)


def _someone_close(
    memories: Sequence[CatalogueEntry],
    specific: Sequence[str],
    asked: Collection[str],
    users: bool,
    lower: Sequence[str] = (),
) -> set[str]:
    """The memories about a relation of whom the question asks about (`Subjects.others`,
    `about_a_relation`); `users`: the question is about the user (or about no one);
    `lower`: the question's words written in lower case that may be a name ("who does
    marguerite drive for?"): a note that writes one in the possessive before a relation
    ("marguerite's son starting at the depot") is about that relation."""
    name_words = {w.lower() for n in specific for w in _NAME_PART.findall(without_accents(n))}
    return {
        e.uuid
        for e in memories
        if any(about_a_relation(e.content, name, asked) for name in [*specific, *lower])
        or (users and about_a_relation(e.content, None, asked))
        or introduced_as_a_relation(e.content, asked)
        or like_another(e.content, name_words)
        or kin_by_name(e.content, asked, name_words)
        or titled_another(e.content, asked, name_words)
    }


# "Mr Lindqvist (flat 6) got bay 21, right next to mine": a first clause about someone
# named with a title of address.
_TITLED = re.compile(
    r"^\W*(?:mr|mrs|ms|miss|pan|pani|senor|senora|sr|sra|cllr|councillor)\.?\s+([A-Z][\w-]*)"
    r"((?:\([^()]*\)|[^,.;!?\n])*)",
    re.IGNORECASE,
)


# "Mrs Okoye: bins are tuesdays now", "Mr Hale says ...": what they pass on may be anyone's.
_PASSES_ON = re.compile(
    r"(?:\s*\([^()]*\))?\s*(?::|(?:says|said|told|tells|mentioned|reckons|thinks|"
    r"confirmed|emailed|texted|rang|called|wrote|asked)\b)",
    re.IGNORECASE,
)


def titled_another(text: str, asked: Collection[str], names: Collection[str]) -> bool:
    """Whether `text` opens with someone named with a title of address ("Mr Lindqvist
    (flat 6) got bay 21, right next to mine", "Pan Wieslaw downstairs got a mobility
    scooter, Babcia jealous") whom the question, of words `asked` (lower case), does not
    ask about, and its first clause names none of the asked `names` (lower case) and does
    not speak in the first person: news of that person."""
    m = _TITLED.match(without_accents(text))
    if m is None or m.group(1)[:1].islower() or _PASSES_ON.match(m.group(2)):
        return False
    clause = _name_words(m.group(0))
    return (
        m.group(1).lower() not in asked
        and not clause & set(names)
        and FIRST_PERSON.search(m.group(2)) is None
    )


_LOWER_WORD = re.compile(r"(?<![\w'’-])[a-z][\w-]{2,}")


def _lower_case_words(question: str, names: Sequence[str]) -> list[str]:
    """The words of `question` written in lower case that may be a name: not a function
    word, not a relation ("sister") and not a word of `names` already."""
    said = {w.lower() for n in names for w in _NAME_PART.findall(without_accents(n))}
    return [
        w
        for w in dict.fromkeys(_LOWER_WORD.findall(without_accents(question)))
        if w not in _NOT_NAME_KEYS and w not in _RELATIONS and w not in said
    ]


# "cousin jomar learning Tagalog", "aunt Rosa's evening carer switched": a relation of the
# user's family named by kin word and name.
_KIN_AND_NAME = re.compile(
    r"^\W*(uncle|aunt|auntie|aunty|cousin|nephew|niece|stepbrother|stepsister)\s+([A-Za-z][\w-]*)",
    re.IGNORECASE,
)


def kin_by_name(text: str, asked: Collection[str], names: Collection[str]) -> bool:
    """Whether `text` opens with a relative named by kin word and name ("cousin jomar
    learning Tagalog") that the question, of words `asked` (lower case), does not ask
    about, and names none of the asked `names` (lower case): news of that relative, not
    of whom is asked ("aunt bev on phone: nia left uni" is news of Nia)."""
    m = _KIN_AND_NAME.match(without_accents(text))
    if m is None:
        return False
    said = {w.lower() for w in _NAME_PART.findall(without_accents(text))}
    return not {m.group(1).lower(), m.group(2).lower()} & set(asked) and not said & set(names)


# "Tobin (odile's colleague) moved ...", "Arvo (Odile's studio partner): arvo@...": a
# note that opens with a name and says in brackets whose relation that is.
_IN_BRACKETS = re.compile(
    r"^\W*((?:[\w'’-]+\s+){0,2}?[\w'’-]+)\s*\(\s*(?:[\w-]+\s+)?[\w-]+['’]s((?:\s+[\w-]+){1,3}?)"
    r"\s*[,;:)]"
)
_BRACKETED_RELATIONS = word_set("team squad lab half")
"""Beside `_RELATIONS`, whom a name introduced in brackets may be ("tove (marek's team)",
"Juniper (neighbour's lab)", "Sunil (Priya's other half)")."""


def introduced_as_a_relation(text: str, asked: Collection[str]) -> bool:
    """Whether `text` opens with someone introduced in brackets as a relation of another
    ("Tobin (odile's colleague) moved from payroll to audit, Odile thinks he's brave"):
    it is about them, whoever else it names, unless the question, of words `asked` (lower
    case), asks about them or about that relation."""
    m = _IN_BRACKETS.match(without_accents(text))
    if m is None:
        return False
    relation = [w.lower() for w in _NAME_PART.findall(m.group(2))]
    if relation[-1] not in _RELATIONS | _BRACKETED_RELATIONS:
        return False
    name = _name_words(m.group(1))
    return not (name | set(relation)) & set(asked)


# "Ines got wednesdays off now too, jammy", "corrin's rent went up to £810 too": the first
# clause of a note tells that someone else has the same (brackets aside).
_LIKE_ANOTHER = re.compile(
    r"^(?:[^,.;!?:\n]|(?<=\d)[.:](?=\d))*?\b(?:too|as\s+well)\b(?:\s+now)?\s*(?:[,.;!?:\n]|-\s|$)"
    # "mo's thesis also due 30 sept", "zeynep's kid also in club"
    r"|^\W*[\w'’-]+\s+(?:[\w'’-]+\s+)?also\b",
    re.IGNORECASE,
)
_BRACKETED = re.compile(r"\([^()]*\)")


def like_another(text: str, names: Collection[str]) -> bool:
    """Whether the first clause of `text` says that someone or something has a value too
    ("Ines got wednesdays off now too, jammy"): news of another with the same, not of whom
    is asked, unless it writes a word of the asked `names` (lower case) there ("corrin's
    rent went up to £810 too" is Corrin's rent)."""
    text = _BRACKETED.sub("", without_accents(text))
    m = _LIKE_ANOTHER.match(text)
    if m is None or FIRST_PERSON.search(m.group(0)) is not None:
        # "me too, got the same": the user has it as well.
        return False
    return not _name_words(m.group(0)) & set(names)


def about_a_relation(text: str, name: str | None, asked: Collection[str]) -> bool:
    """Whether `text` is about a relation of `name` (of the user, for None) that the
    question, of words `asked` (lower case), does not ask about, and does not say who that
    is: it writes the name only before the relation ("Ines's partner Achille is a
    paramedic"), or opens with the user's relation ("My sister Ilse went vegan", "User's
    partner ...", "Partner's passport ...", "kids' dentist ..."; not "My manager is
    Ines")."""
    if name is not None:
        parts = _NAME_PART.findall(without_accents(name))
        if not parts:
            return False
        text = without_accents(text)
        # The name as written, capitalised or jotted in lower case ("ode's husband ..."),
        # with its possessive.
        said = [
            re.compile(r"['’]s\b").match(text, m.end()) or m
            for m in _whole_name(parts).finditer(text)
        ]
        return bool(said) and all(_someone_else(text, m, asked) for m in said)
    owner = _OPENING_POSSESSIVE.match(text)
    if owner is not None and _someone_else(text, owner, asked):
        # "Sipho's lad keeps parking in bay 14": another's relation.
        return True
    m = _USERS_RELATION.match(text)
    if m is None:
        return False
    relation = next(g for g in m.groups() if g is not None).lower()
    return relation in _RELATIONS and relation not in asked and not _says_who(text, m.end())


def _users_notes(
    memories: Sequence[CatalogueEntry],
    people: list[set[str]],
    asks_about_the_user: bool,
    names_any: bool,
) -> set[str]:
    """For a question about the user that names no person, or about no one, the notes
    about the user and their things (`Subjects.kept`)."""
    if people or not (asks_about_the_user or not names_any):
        return set()
    # Asked about the user (or the user's household or team) and no one else, or about
    # no one: the notes a user keeps are about the user and their things, whether they say
    # "I" or are as terse as "gym: IronYard on 5th"; not those about what a named person
    # did, unless said in the first person.
    return {
        e.uuid
        for e in memories
        if FIRST_PERSON.search(e.content) or not about_a_named_person(e.content)
    }


# "Ilona Varga is now working ...", "Eamon Larkspur took over ...", "The Quarry team raised
# ...": a person's full name (or a team's) and a verb of what they did or do (not "Abyssal
# Tides main: harpooner", a thing's name).
_ANOTHERS_NEWS = re.compile(
    r"^\W*(?:[A-Z][a-z]+\s+[A-Z][a-z]+|The\s+[A-Z][a-z]+\s+team)\s+"
    r"(?:is|was|has|had|took|wrote|got|went|left|made|[a-z]+ed|[a-z]+s)\b"
)


def tells_of_another(text: str) -> bool:
    """Whether `text` opens with what a person named in full (or a named team) did or
    does, and does not speak in the first person: news of someone else, not the user's."""
    return _ANOTHERS_NEWS.search(text) is not None and FIRST_PERSON.search(text) is None


def about_a_named_person(text: str) -> bool:
    """Whether `text` tells what a named person did (`_ABOUT_A_NAMED_PERSON`, `_HAS_DONE`),
    not a business or a place ("Gallo's Garage did the brakes", "Harmony Street choir: ...")."""
    if _HAS_DONE.search(text) is not None and HE_OR_SHE.search(text) is not None:
        return True
    m = _ABOUT_A_NAMED_PERSON.search(text)
    if m is None:
        return False
    name = [_POSSESSIVE_END.sub("", w).lower() for w in _NAME_PART.findall(m.group(0))]
    return not any(w in ORG_SUFFIXES or w in PLACE_SUFFIXES for w in name)


def naming(memories: Sequence[CatalogueEntry], name: str, asked: Collection[str]) -> set[str]:
    """The uuids of the `memories` that name `name` (see the module docstring); `asked`
    holds the question's words in lower case."""
    parts = _NAME_PART.findall(without_accents(name))
    if not parts:
        return set()
    found = {e.uuid for e in memories if writes_name(e.content, parts, asked)}
    if len(parts) > 1:
        return found
    # One word of a longer name ("Kovacs" for Ana Kovacs): the notes that call the person
    # by another word of it ("Ana"), through one that writes the whole name.
    writing = [e for e in memories if e.uuid in found]
    runs = {
        _POSSESSIVE_END.sub("", m.group(0))
        for e in writing
        for m in _NAME_RUN.finditer(without_accents(e.content))
    }
    for run in sorted(runs):
        # "Hey Ines" is a greeting before a name, not a longer name.
        words = [w for w in _NAME_PART.findall(run) if w not in _NOT_NAME_WORDS]
        if len(words) > 1 and parts[0].lower() in {w.lower() for w in words}:
            found |= naming(memories, " ".join(words), asked)
    return found


def writes_name(text: str, parts: Sequence[str], asked: Collection[str]) -> bool:
    """Whether `text` writes the name of words `parts` as a name: a run of capitalised
    words holding the whole name ("Bao Nguyen" in "Bao Nguyen-Castillo's"), or for a name
    of several words a run of its words only ("Bao's", not "Kaisa Virtanen" for Lena
    Virtanen); not a possessive before a relation the question does not ask about (the
    module docstring)."""
    # "Zoë" is the name asked as "Zoe".
    text, parts = without_accents(text), [without_accents(p) for p in parts]
    whole = _whole_name(parts)
    words = {p.lower() for p in parts}
    if (
        _opens_in_lower_case(text, parts, asked)
        or _in_lower_case(text, parts, asked)
        or _by_initial(text, parts)
    ):
        return True
    for run in _NAME_RUN.finditer(text):
        said = {w.lower() for w in _NAME_PART.findall(_POSSESSIVE_END.sub("", run.group(0)))}
        said -= _NOT_NAME_KEYS
        if (
            whole.search(run.group(0)) is None
            and not (len(parts) > 1 and said and said <= words)
            and not _short_form(said, parts[0])
        ):
            continue
        if not _someone_else(text, run, asked):
            return True
    return False


def _opens_in_lower_case(text: str, parts: Sequence[str], asked: Collection[str]) -> bool:
    """Whether a note jotted in lower case opens with the name of words `parts`, a proper
    name asked with its capital ("ines stays till 6 now" for "Ines"); an everyday word
    only in the possessive ("will's", not "will ring the bank", `EVERYDAY_NAMES`)."""
    opening = _LOWER_OPENING.match(text)
    if opening is None or not all(p[:1].isupper() for p in parts):
        return False
    word = _POSSESSIVE_END.sub("", opening.group(1))
    return (
        word in {p.lower() for p in parts}
        and (word != opening.group(1) or word not in EVERYDAY_NAMES)
        and not _someone_else(text, opening, asked)
    )


def _in_lower_case(text: str, parts: Sequence[str], asked: Collection[str]) -> bool:
    """Whether a note writes the proper name of words `parts` in lower case where it can
    be nothing else: the whole name of two words ("tried sabor limeño on a tue" for Sabor
    Limeño), two words of it in a row for a longer name ("call w/ gideon @ spice route"
    for Spice Route Traders), or a one-word name ("coffee w ingrid", "voice memo erm
    farida's housewarming"), only in the possessive when it is an everyday word too
    ("will's", `EVERYDAY_NAMES`); not a possessive before a relation the question does not
    ask about."""
    if not all(p[:1].isupper() for p in parts):
        return False
    lower = [p.lower() for p in parts]
    if len(parts) > 1:
        runs = [lower] if len(lower) == 2 else [lower[i : i + 2] for i in range(len(lower) - 1)]
        said = re.compile(
            "|".join(r"(?<!\w)" + r"\W{1,3}".join(map(re.escape, run)) + r"(?!\w)" for run in runs)
        )
    elif lower[0] in NAME_STOP_WORDS:
        return False
    elif lower[0] in EVERYDAY_NAMES:
        # "will's" is Will; "will" is the word.
        said = re.compile(rf"(?<!\w){re.escape(lower[0])}['’]s\b")
    else:
        said = re.compile(rf"(?<![\w'’]){re.escape(lower[0])}(?:['’]s)?\b")
    return any(not _someone_else(text, m, asked) for m in said.finditer(text))


# "T says ...", "T. sent ...", "lunch at T's": a first name jotted as its initial (not "I"
# or "A"), opening a note or in the possessive where a place is ("at D's", not "plan B's").
_INITIAL = re.compile(
    r"^\W*([B-HJ-Z])\.?\s+[a-z]"
    r"|(?:^\W*|\b(?:at|to|from|with|round|over|by|in)\s+)([B-HJ-Z])['’]s\b",
    re.MULTILINE,
)


def _by_initial(text: str, parts: Sequence[str]) -> bool:
    """Whether a note opens with the initial of the capitalised name of words `parts`
    before a word in lower case, or writes it in the possessive as a place or opening the
    note ("T says the depot ...", "lunch at T's" for Tomasz)."""
    return parts[0][:1].isupper() and any(
        (m.group(1) or m.group(2)) == parts[0][0] for m in _INITIAL.finditer(text)
    )


_SHORT_FORM = 3
"""The fewest letters of a first name that, written alone, are a short form of it."""


_SHORT_PLACE_WORDS = {
    "court": "ct",
    "road": "rd",
    "street": "st",
    "avenue": "ave",
    "lane": "ln",
    "place": "pl",
    "square": "sq",
    "crescent": "cres",
    "terrace": "tce",
    "gardens": "gdns",
    "close": "cl",
}
"""Words of a place's name and how addresses shorten them ("Elm Ct" is Elm Court)."""
_LONG_PLACE_WORDS = {short: long for long, short in _SHORT_PLACE_WORDS.items()}


def _name_word(part: str) -> str:
    """A pattern for one word of a name: the word, or for a place's word its short form
    as addresses write it, or the long form of a short one ("Court" or "Ct")."""
    key = part.lower().rstrip(".")
    other = _SHORT_PLACE_WORDS.get(key) or _LONG_PLACE_WORDS.get(key)
    if other is None:
        return re.escape(part)
    return rf"(?:{re.escape(key)}|{other})\.?"


def _whole_name(parts: Sequence[str]) -> re.Pattern[str]:
    """The name of words `parts` written whole, its words joined by a space, a hyphen or
    the like ("Bao Nguyen", "Bao-Nguyen"); a place's word may be written short ("Elm Ct"
    for Elm Court)."""
    words = [re.escape(parts[0]), *map(_name_word, parts[1:])]
    return re.compile(r"(?i)\b" + r"\W{1,3}".join(words) + r"(?!\w)")


def _short_form(said: set[str], first: str) -> bool:
    """Whether a name written alone is the start of `first`, as people shorten first
    names in notes ("Magda" for Magdalena, "Kas" for Kasimir)."""
    if len(said) != 1:
        return False
    (word,) = said
    first = first.lower()
    return _SHORT_FORM <= len(word) < len(first) and first.startswith(word)


def _someone_else(text: str, run: re.Match[str], asked: Collection[str]) -> bool:
    """Whether the name `run` is a possessive before a relation the question does not ask
    about and the text does not say who that is ("Lena's sister celebrates ...")."""
    if _POSSESSIVE_END.search(run.group(0)) is None:
        return False
    after = _NEXT_WORD.match(text, run.end())
    if after is not None and after.group(1).lower() in _FORMER:
        # "the keys to Ode's old flat", "Ode's former boss": what was theirs, asked of now.
        return after.group(1).lower() not in asked
    if after is not None and after.group(1).lower() in _BEFORE_A_RELATION:
        # "ode's best mate ...", "his older sister ..."
        after = _NEXT_WORD.match(text, after.end())
    if after is None:
        return False
    relation = after.group(1).lower()
    return (
        (relation in _RELATIONS or relation in _GROUPS)
        and not _asks_of(relation, asked)
        and not _says_who(text, after.end())
    )


_DOER = re.compile(r"(?:ers?|s)$")


def _asks_of(relation: str, asked: Collection[str]) -> bool:
    """Whether the question, of words `asked`, asks about `relation`: the word itself, or
    for one who does something the doing ("walks" of "walker", "tutors" of "tutor")."""
    if relation in asked:
        return True
    stem = _DOER.sub("", relation)
    return len(stem) >= 4 and any(_DOER.sub("", w) == stem for w in asked)


_RELATIONS = KINSHIP | word_set(
    "lad lass dog dogs cat cats puppy kitten pet pets mare horse pony "
    "apprentice assistant intern trainee deputy pupil student "
    "walker groomer sitter"
)
"""Whom a note about someone's relation is about: kin, friends, colleagues, those who work
or learn under them, pets, and those who look after pets ("Ode's dog Miso has a vet visit"
is not about Ode's work days, "pedro (lucia's apprentice) gets in at 5 now" not about when
Lucía starts, "luna's walker Dario switched to afternoons" not about what Luna eats). A
person's carer, cleaner or tutor is not one: "Dad's carer = Agnieszka" is who looks after
Dad."""

_GROUPS = word_set("team squad crew department dept")
"""Whom a named person's group is: "Nadia's team switched from Slack to Teams" is the
team's news, not Nadia's (the user's own team, "our team moved to Slack", is the user's)."""

_FORMER = word_set("old former previous")
"""Words after a possessive that make what follows a thing the person had before."""

_BEFORE_A_RELATION = word_set(
    "best big little older younger elder eldest oldest youngest baby other"
)
"""Words written between a possessive and the relation it names ("new" is not one: "Ana's
new partner Lev moved in" is news about Ana)."""


def _says_who(text: str, end: int) -> bool:
    """Whether the relation named before `end` is said to be someone by name ("Priya's
    manager is Ines"), not described ("ode's brother is a nurse"): then the note
    is about whom it belongs to."""
    copula = _COPULA.match(text, end)
    if copula is None:
        return False
    after = _NEXT_WORD.match(text, copula.end())
    return after is not None and after.group(1)[:1].isupper()


# "ward 8", "number 12", "gate 3B": a thing told from others of its kind by its number.
_NUMBERED = re.compile(r"\b([A-Za-z]{3,})\s+(\d{1,4}[A-Za-z]?)\b")


def about_another_numbered(question: str, read: Sequence[CatalogueEntry]) -> set[str]:
    """The memories about another of a numbered thing the question asks about: they write
    its word with another number and never with the asked one ("weds pharmacy trolley
    for ward 9" for "Which day is the ward 8 pharmacy top-up?")."""
    asked: dict[str, set[str]] = {}
    for word, number in _NUMBERED.findall(question):
        if word.lower() not in NAME_STOP_WORDS:
            asked.setdefault(word.lower(), set()).add(number.lower())
    if not asked:
        return set()
    out: set[str] = set()
    for entry in read:
        written: dict[str, set[str]] = {}
        for word, number in _NUMBERED.findall(entry.content):
            written.setdefault(word.lower(), set()).add(number.lower())
        if any(w in written and not written[w] & numbers for w, numbers in asked.items()):
            out.add(entry.uuid)
    return out
