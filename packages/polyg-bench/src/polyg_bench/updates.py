"""Knowledge updates: does recall put what is current first, and does the answer say it?

Each case (`data/updates.jsonl`) is a few notes about invented people, services or
preferences: an `old` note, months later a `new` note that changes it (moved, replaced,
switched, took over, now, no longer, raised to ...), and a `distractor` that shares words
with them. Its questions ask about the present (the new note answers) or the past (the
old one does: "in 2024", "before", "originally").

Every case is loaded into a fresh namespace, once per size: `small` holds the case's notes
only (three memories), `large` holds them among `filler` invented memories written from
templates with a fixed seed (the same texts every run). Per question:

* current first: the memory that answers (the new note for a present-tense question, the
  old one for a past one) is recall's first memory;
* stale first: the other of the two is first;
* answer right: the answer holds the expected value, and the stale value, if it is there
  at all, only after it (as history) or inside the answering note's own words
  ("switched from Jenkins to Buildkite").
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any, Literal, cast

from polyg_core.errors import InvalidInput
from polyg_core.graphs.semantic import memory_row, write_memories
from polyg_core.memory import Memory
from polyg_shared.nodes import MemoryCategory
from polyg_shared.timeutil import from_epoch_ms, iso, to_epoch_ms

REFERENCE_TIME = "2026-06-01T12:00:00Z"
""""Now" for every case: notes are dated `days` before it."""
FILLER = 3000
EMBED_BATCH = 256
SIZES = ("small", "large")

Role = Literal["old", "new", "distractor"]
Tense = Literal["present", "past"]


@dataclass(frozen=True)
class UpdateNote:
    """One note of a case: its role, how many days before the reference time, its text."""

    role: Role
    days: int
    text: str


@dataclass(frozen=True)
class UpdateQuestion:
    """A question, whether it asks about now or the past, the value that answers it and
    the value that would be stale (the other note's)."""

    tense: Tense
    q: str
    expect: str
    stale: str


@dataclass(frozen=True)
class UpdateCase:
    """Notes that change over time and the questions asked after all of them."""

    id: str
    kind: str
    notes: tuple[UpdateNote, ...]
    questions: tuple[UpdateQuestion, ...]

    def note(self, role: Role) -> UpdateNote:
        """The case's note of this role."""
        return next(n for n in self.notes if n.role == role)


def _case(value: object, where: str) -> UpdateCase:
    if not isinstance(value, dict):
        raise InvalidInput(f"{where}: a case must be a JSON object with id, notes, questions")
    raw = cast(dict[str, Any], value)
    try:
        notes = tuple(UpdateNote(n["role"], int(n["days"]), str(n["text"])) for n in raw["notes"])
        questions = tuple(
            UpdateQuestion(q["tense"], str(q["q"]), str(q["expect"]), str(q["stale"]))
            for q in raw["questions"]
        )
        case = UpdateCase(str(raw["id"]), str(raw.get("kind", "")), notes, questions)
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInput(
            f"{where}: malformed case ({exc!r}); each note needs role, days, text and each "
            "question tense, q, expect, stale"
        ) from exc
    roles = sorted(n.role for n in notes)
    if roles.count("old") != 1 or roles.count("new") != 1:
        raise InvalidInput(f"{where}: case {case.id} needs exactly one 'old' and one 'new' note")
    if case.note("new").days >= case.note("old").days:
        raise InvalidInput(f"{where}: case {case.id}: the new note must be later than the old one")
    for q in questions:
        if q.tense not in ("present", "past"):
            raise InvalidInput(f"{where}: case {case.id}: tense must be 'present' or 'past'")
        wanted = case.note("new" if q.tense == "present" else "old")
        if q.expect.lower() not in wanted.text.lower():
            raise InvalidInput(
                f"{where}: case {case.id}: expected value {q.expect!r} is not in the note "
                f"that answers {q.q!r}"
            )
    return case


SETS = {
    "ours": "updates.jsonl",
    "blind-1": "updates_blind_1.jsonl",
    "blind-2": "updates_blind_2.jsonl",
    "blind-3": "updates_blind_3.jsonl",
    "blind-4": "updates_blind_4.jsonl",
    "blind-5": "updates_blind_5.jsonl",
    "blind-6": "updates_blind_6.jsonl",
    "blind-7": "updates_blind_7.jsonl",
    "blind-8": "updates_blind_8.jsonl",
    "blind-9": "updates_blind_9.jsonl",
    "blind-10": "updates_blind_10.jsonl",
    "blind-11": "updates_blind_11.jsonl",
    "blind-12": "updates_blind_12.jsonl",
    "blind-13": "updates_blind_13.jsonl",
    "blind-14": "updates_blind_14.jsonl",
    "blind-15": "updates_blind_15.jsonl",
    "blind-16": "updates_blind_16.jsonl",
    "blind-17": "updates_blind_17.jsonl",
    "blind-18": "updates_blind_18.jsonl",
    "blind-19": "updates_blind_19.jsonl",
    "blind-20": "updates_blind_20.jsonl",
    "blind-21": "updates_blind_21.jsonl",
    "blind-22": "updates_blind_22.jsonl",
    "blind-23": "updates_blind_23.jsonl",
    "blind-24": "updates_blind_24.jsonl",
    "blind-25": "updates_blind_25.jsonl",
    "blind-26": "updates_blind_26.jsonl",
    "blind-27": "updates_blind_27.jsonl",
    "blind-28": "updates_blind_28.jsonl",
    "blind-29": "updates_blind_29.jsonl",
    "blind-30": "updates_blind_30.jsonl",
    "blind-31": "updates_blind_31.jsonl",
    "blind-32": "updates_blind_32.jsonl",
    "blind-33": "updates_blind_33.jsonl",
    "blind-34": "updates_blind_34.jsonl",
    "blind-35": "updates_blind_35.jsonl",
    "blind-36": "updates_blind_36.jsonl",
}
"""The shipped sets by name. `ours` was written beside the ranking rules; each `blind-N`
was written apart from them, by a writer who saw neither the rules nor the other sets
(invented people; notes as records, first-person statements, chat lines and terse logs;
blind-3 and blind-4 the most casual). blind-5 and blind-6 were written the same way, held
out for one round of rules and read after it, and blind-7 to blind-12 (blind-9 leaning to
home and social life, blind-10 to work and small business, blind-11 to personal admin and
life events, blind-12 to software and operations work) the rounds after; blind-13 (travel,
hobbies, clubs, health and volunteering) and blind-14 (school, university, research and
freelance work, many notes as chat messages) likewise; blind-15 (family across
generations, care of elderly parents, neighbours and community groups, many notes as
diary lines and voice-memo transcripts) and blind-16 (food and small businesses, sports
coaching and gyms, operations of a small online shop, many notes as calendar entries,
lists and work chat) likewise; blind-17 (money and paperwork: banks, insurers, landlords,
energy and phone contracts, tax offices; pets and their vets, groomers and sitters; many
notes as email subject lines, app notifications, sticky notes and voicemail summaries)
and blind-18 (arts and media: bands, amateur theatre, book clubs, podcasts, subscriptions,
tutors; a design and software team across time zones; many notes as text messages,
meeting minutes and bullet-journal lines) likewise; blind-19 (sport and the outdoors:
running and cycling clubs, allotments, climbing, sailing, coaches and volunteering rotas;
warehouse and logistics work: shift leads, carriers, depots, dispatch cut-offs; many notes
as voice-to-text transcripts with misheard words, group-chat messages and calendar
entries) and blind-20 (care and neighbourhood life: elderly relatives, care homes,
carers, pharmacies, physiotherapists, neighbours, housing associations; a small charity:
grants, trustees, volunteer coordinators, fundraising platforms, donors, venues; many
notes as forwarded emails with quoted replies, shared to-do items and diary
transcriptions) likewise; blind-21 (farming and rural life: smallholdings, vets and
farriers, feed merchants, machinery hire, village halls, rural buses; a small workshop:
parts suppliers, CNC and laser machines, quality checks, shifts, purchase orders; many
notes as text messages, sticky notes and rows pasted from a spreadsheet) and blind-22
(home renovation and the building trades: builders, electricians, plumbers, planning,
skips, merchants, quotes; local government and commuting: councillors, bin days, parking
permits, bus and train routes, season tickets, library and leisure-centre hours; many
notes as meeting minutes, bullet-journal entries and messages that mix in words of
another language) likewise; blind-23 (hospital and clinic shift work: ward rotas, on-call,
locums, night shifts; a wedding being planned: venues, caterers, florists, photographers,
fittings, deposits; many notes as rota lines exported from an app, checklists and
transcribed voice memos) and blind-24 (fishing and harbour life: boats, moorings, the
harbour master, fish buyers, ice and fuel, ferries, the lifeboat crew; online communities
and gaming: guilds, Discord servers, moderators, streaming schedules, tournament teams;
many notes as chat logs with timestamps and usernames, forum posts and lines with emoji)
likewise; blind-25 (cars and getting around: garages, inspections, leasing, insurance,
charging cards, car shares, driving lessons; a small band and music teaching: gigs,
rehearsal rooms, instrument repairs, pupils' lesson slots; many notes as e-mail subject
lines, calendar invites and lines copied from a bank statement) and blind-26 (a block of
flats: landlords, letting agents, the caretaker, service charges, the lift, the laundry
and bike store, a tenants' group; evening language classes: tutors, apps, exam dates,
conversation partners; many notes as dictated messages with autocorrect slips, arrows and
dates written many ways) likewise; blind-27 (a freelancer working from home: clients,
rates, invoicing and accounting tools, the accountant, a coworking desk, the internet
provider; children's after-school life: swimming, music tutors, football coaches,
childminders, school-run rotas; many notes as to-do items, quoted messages from others and
lines with the odd word of another language) and blind-28 (moving abroad: residence
permits, the bank, the phone plan, the children's school, the doctor, a language tandem,
flat shares; amateur astronomy and a cycling club; many notes as short fragments or long
dictated sentences, dates relative to other events and changes that only show in a note
about something else) likewise; blind-29 (a recently retired person: volunteering at a
community radio station, a library reading hour and a repair café; the household's tech:
broadband and mobile contracts, streaming subscriptions, a smart-home hub, a password
manager, the printer; many notes as voice-memo transcriptions with filler or terse
fragments) and blind-30 (a student nurse on placement: wards, shift codes, mentors,
lockers, the commute; a board-game café, a weekly role-playing group and private tutoring;
shorthand, 24-hour times, codes, notes to self in the second person, changes only visible
in a pasted rota) likewise; blind-31 (a parent of three school-age children: the
childminder, after-school clubs, swimming and music lessons, the children's dentist and GP,
car-pools, pocket money, uniforms, the grandparents' visits; many notes from a family group
chat or from other parents, whose own families change too, and changes only in a forwarded
message) and blind-32 (two dogs and a cat, and a part-time job at a garden centre: vets,
pet insurance, food, kennels, the dog walker, grooming, an agility club; till shifts, the
section looked after, the supervisor, deliveries, staff discount; terse phone notes with
prices, weights and doses, messages to a partner, changes only in a pasted receipt or
booking confirmation) likewise; blind-33 (a small neighbourhood café with part-time staff:
suppliers of beans, milk, bread and cakes, the rota and who opens, opening hours, the card
machine, the accountant, the landlord, menu prices, the machine repair firm; pasted
supplier emails, invoice lines, price lists and staff chat, other businesses on the street
changing too, changes only in an invoice line or a rota pasted without comment) and
blind-34 (a third-year PhD student in a shared house: supervisors, lab bookings and
equipment, the desk, teaching duties, conference deadlines and travel, the stipend and
visa, rent and bills, the cleaning rota, the bike and the gym, a partner's visits;
calendar entries, lab and house chat, automated emails, half-sentences to oneself,
housemates' and lab mates' own changes) likewise; blind-35 (a self-employed plumber and
heating engineer working from a van: customers and jobs, the merchant and trade prices, the
van's lease, insurance and MOT, the apprentice, the accountant and VAT, registration, a
subcontracting mate, call-out rates; voice-to-text jottings, pasted receipts and quote
lines, customers' texts, other tradespeople's own changes) and blind-36 (someone
coordinating care for an elderly father who lives alone, with a sibling: his GP,
medications and doses, the pharmacy, the home carers and their visit times, the day
centre, hospital appointments, power of attorney and bank, the neighbour with a key, the
meals service, the sibling's visiting rota; pasted texts, hospital letters, pharmacy
reminders, notes right after a phone call, other people's own changes) likewise, held
out: no rule was read off them (docs/benchmarks.md, section 20)."""


def load_cases(path: Path | None = None, name: str = "ours") -> list[UpdateCase]:
    """The cases in a JSON Lines file (default: the shipped set `name`, see `SETS`).

    Raises:
        InvalidInput: the file cannot be read, the set is unknown or a case is malformed
            (the message says which line and what is wrong).
    """
    if path is None and name not in SETS:
        raise InvalidInput(f"unknown update set {name!r}; choose from {', '.join(SETS)}")
    try:
        text = (
            path.read_text(encoding="utf-8")
            if path is not None
            else resources.files("polyg_bench").joinpath(f"data/{SETS[name]}").read_text("utf-8")
        )
    except OSError as exc:
        raise InvalidInput(f"cannot read the update cases {path}: {exc}") from exc
    cases: list[UpdateCase] = []
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"line {no}: not JSON ({exc.msg})") from exc
        cases.append(_case(raw, f"line {no}"))
    if not cases:
        raise InvalidInput("no update cases found; give a JSON Lines file with one case a line")
    return cases


# -- filler ---------------------------------------------------------------------------------

_FIRST = ["Arlo", "Brisa", "Cosimo", "Delphine", "Eamon", "Faye", "Gunnar", "Hester", "Idris",
          "Juno", "Kasimir", "Liesel", "Matthias", "Noor", "Orla", "Piet", "Quilla", "Rosalind",
          "Stellan", "Tamsin", "Ulric", "Vesna", "Wilhelmina", "Xavi", "Yara", "Zeno"]  # fmt: skip
_LAST = ["Abernathy", "Bellweather", "Crane", "Dunmore", "Everly", "Fairbanks", "Gosling",
         "Hartwell", "Ingram", "Jessup", "Kincaid", "Larkspur", "Merriman", "Nettles",
         "Oakhurst", "Pembroke", "Quarles", "Rowntree", "Sallow", "Thistlewood"]  # fmt: skip
_THINGS = ["ticket triage", "release notes", "staging cluster", "expense tool", "design review",
           "load balancer", "onboarding guide", "feature flags", "status page", "test suite",
           "data warehouse", "image resizer", "audit trail", "sitemap job", "address lookup",
           "mail templates", "export worker", "quota checker", "translation files",
           "search index"]  # fmt: skip
_TEAMS = ["Kestrel", "Marlin", "Juniper", "Obsidian", "Sparrow", "Tundra", "Willow", "Zephyr"]
_PLACES = ["Aarhus", "Bilbao", "Cork", "Dresden", "Eindhoven", "Florence", "Graz", "Hamburg",
           "Innsbruck", "Krakow"]  # fmt: skip
_LIKES = ["dark chocolate", "long walks", "board games", "sourdough baking", "crossword puzzles",
          "trail running", "pottery", "birdwatching", "vinyl records", "chess"]  # fmt: skip
_TEMPLATES = [
    "{p} reviewed the {t} with the {team} team on {d}.",
    "{p} says the {t} needs a cleanup before the next release.",
    "The {team} team owns the {t} and answers its pages.",
    "{p} moved the {t} meeting to {d} afternoon.",
    "{p} is now working on the {t} with {q}.",
    "{p} lives in {place} and enjoys {like}.",
    "{p} prefers {like} over most other hobbies.",
    "The {t} was switched to a new config by {p} on {d}.",
    "{p} asked {q} about the {t} budget.",
    "{p} wrote a short doc on how the {t} works.",
    "{q} took over reviewing the {t} while {p} is on leave.",
    "{p} visited {place} for a conference about the {t}.",
    "Reminder from {p}: the {t} check runs every {d}.",
    "{p} and {q} paired on the {t} bug for an hour.",
    "The {team} team raised the priority of the {t} work.",
]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]


def filler_texts(n: int, seed: int = 0) -> list[str]:
    """`n` distinct invented memories from templates (the same for the same seed)."""
    rng = random.Random(seed)
    out: dict[str, None] = {}
    while len(out) < n:
        p = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
        q = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
        text = rng.choice(_TEMPLATES).format(
            p=p,
            q=q,
            t=rng.choice(_THINGS),
            team=rng.choice(_TEAMS),
            place=rng.choice(_PLACES),
            like=rng.choice(_LIKES),
            d=rng.choice(_DAYS),
        )
        out[text] = None
    return list(out)


@dataclass
class _Filler:
    """Filler texts with their vectors and times, embedded once per run."""

    texts: list[str]
    vectors: list[list[float]]
    times: list[int]


async def _filler(memory: Memory, n: int, ref_ms: int) -> _Filler:
    texts = filler_texts(n)
    vectors: list[list[float]] = []
    for i in range(0, len(texts), EMBED_BATCH):
        vectors.extend(
            [float(x) for x in v] for v in await memory.embedder.embed(texts[i : i + EMBED_BATCH])
        )
    rng = random.Random(1)
    day = 86_400_000
    times = [ref_ms - rng.randint(1, 730) * day for _ in texts]
    return _Filler(texts, vectors, times)


async def _write_filler(memory: Memory, namespace: str, filler: _Filler) -> None:
    now = to_epoch_ms(datetime.now().astimezone())
    rows = [
        memory_row(i, t, MemoryCategory.EPISODIC, [], [], [], when, None, vec, now)
        for i, (t, vec, when) in enumerate(
            zip(filler.texts, filler.vectors, filler.times, strict=True)
        )
    ]
    for i in range(0, len(rows), 1000):
        await write_memories(memory.store, namespace, rows[i : i + 1000])


# -- running --------------------------------------------------------------------------------


@dataclass(frozen=True)
class UpdateResult:
    """One question asked in one namespace size."""

    case: str
    size: str
    tense: str
    question: str
    current_first: bool
    stale_first: bool
    answer_right: bool
    answer: str
    confidence: float
    first: str
    factors: dict[str, float] = field(default_factory=lambda: {})


@dataclass
class UpdateReport:
    """Every question's result, and the rows of the summary table."""

    results: list[UpdateResult] = field(default_factory=lambda: [])

    def table(self) -> list[dict[str, Any]]:
        """Rows of {size, tense, n, current_first, stale_first, answer_right} (shares)."""
        rows: list[dict[str, Any]] = []
        for size in dict.fromkeys(r.size for r in self.results):
            for tense in ("present", "past", "all"):
                inside = [r for r in self.results if r.size == size and tense in ("all", r.tense)]
                if not inside:
                    continue
                n = len(inside)
                rows.append(
                    {
                        "size": size,
                        "tense": tense,
                        "n": n,
                        "current_first": round(sum(r.current_first for r in inside) / n, 3),
                        "stale_first": round(sum(r.stale_first for r in inside) / n, 3),
                        "answer_right": round(sum(r.answer_right for r in inside) / n, 3),
                    }
                )
        return rows


def _holds(text: str, value: str) -> int:
    """Where `value` starts in `text` (case-insensitive, whole words at its ends, a plural or
    possessive ending allowed: "Thursdays" gives "Thursday"), or -1."""
    m = re.search(rf"(?i)(?<!\w){re.escape(value)}(?:['’]?s|es)?(?!\w)", text)
    return m.start() if m else -1


def answer_right(answer: str, q: UpdateQuestion, answering_note: str) -> bool:
    """Whether `answer` gives the expected value, the stale one only as history (see the
    module docstring)."""
    masked = answer
    for sentence in re.split(r"(?<=[.!?;])\s+", answering_note):
        core = sentence.strip().rstrip(".!?;")
        if core:
            masked = re.sub(
                re.escape(core),
                lambda m: re.sub(re.escape(q.stale), "~" * len(q.stale), m.group(0), flags=re.I),
                masked,
                flags=re.IGNORECASE,
            )
    at = _holds(masked, q.expect)
    stale = _holds(masked, q.stale)
    return at >= 0 and (stale < 0 or stale > at)


async def _ask(
    memory: Memory, namespace: str, case: UpdateCase, q: UpdateQuestion, size: str
) -> UpdateResult:
    result = await memory.recall(q.q, graph=namespace, reference_time=REFERENCE_TIME)
    wanted = case.note("new" if q.tense == "present" else "old")
    other = case.note("old" if q.tense == "present" else "new")
    first = result.memories[0].content if result.memories else ""
    return UpdateResult(
        case=case.id,
        size=size,
        tense=q.tense,
        question=q.q,
        current_first=first == wanted.text,
        stale_first=first == other.text,
        answer_right=answer_right(result.answer, q, wanted.text),
        answer=result.answer,
        confidence=result.confidence,
        first=first,
        factors=dict(result.confidence_factors),
    )


async def run_updates(
    memory: Memory,
    cases: Sequence[UpdateCase],
    *,
    sizes: Sequence[str] = SIZES,
    filler: int = FILLER,
    prefix: str = "bench_updates",
    progress: Callable[[str], None] | None = None,
) -> UpdateReport:
    """Load each case into a fresh namespace per size, ask its questions, and score them.

    Every namespace is deleted after its case.

    Raises:
        InvalidInput: an unknown size.
    """
    unknown = sorted(set(sizes) - set(SIZES))
    if unknown:
        raise InvalidInput(f"unknown size(s) {', '.join(unknown)}; choose from small, large")
    ref = datetime.fromisoformat(REFERENCE_TIME)
    report = UpdateReport()
    fill = await _filler(memory, filler, to_epoch_ms(ref)) if "large" in sizes else None
    for size in sizes:
        for i, case in enumerate(cases):
            namespace = f"{prefix}_{size}_{i}"
            await memory.store.delete_graph(namespace)
            try:
                for note in sorted(case.notes, key=lambda n: -n.days):
                    when = iso(from_epoch_ms(to_epoch_ms(ref - timedelta(days=note.days))))
                    await memory.remember(note.text, graph=namespace, reference_time=when)
                if size == "large" and fill is not None:
                    await _write_filler(memory, namespace, fill)
                for q in case.questions:
                    report.results.append(await _ask(memory, namespace, case, q, size))
            finally:
                await memory.store.delete_graph(namespace)
            if progress is not None and (i + 1) % 10 == 0:
                progress(f"{size}: {i + 1}/{len(cases)} cases")
    return report
