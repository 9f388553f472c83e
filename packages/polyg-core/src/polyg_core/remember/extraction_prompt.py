"""The extractor's prompt: system text with examples and the user text builder."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from polyg_core.providers.llm.known_names import user_message

__all__ = ["EXTRACTOR_SYSTEM", "extractor_user"]

EXTRACTOR_SYSTEM = """\
You extract structured memory from a note for a multi-graph memory. Answer with one JSON object:
- entities: [{name, entity_type}] people, services, projects, teams, configs, versions, files...
  When an entity matches one of the known entity names (in any spelling), use the known name.
  entity_type is a short lowercase word: person, service, project, team, organization, place,
  config, deployment, version, file, database, entity.
- relations: [{source, target, relationship_type, valid_from, valid_to}] between entities
  (snake_case type: owns, works_on, depends_on, part_of, member_of, works_at, lives_in, ...).
  valid_from / valid_to as ISO UTC only when the note dates the relation: a join or move
  starts it (valid_from), leaving, quitting or moving out ends it (valid_to: "Sam left the
  Atlas team in May" is {Sam, Atlas team, member_of, valid_to: May 1st}); else leave them out.
- events: [{description, occurred_at, entities}] things that happened. occurred_at is an ISO
  8601 UTC timestamp resolved against the reference time given ("at 14:30" is on the reference
  day, or the day before if that would be later than the reference); use the reference time when
  the note gives no time.
- facts: [{subject, predicate, object, valid_from, valid_to}] lasting statements
  ("Alice works on auth-service"); valid_from as ISO UTC (reference time if not stated).
  A move ("Alice moved from the payments team to the auth team on June 1st") starts
  {Alice, member_of, auth team} at that time and ends {Alice, member_of, payments team}
  there (valid_to). Add cardinality "multi" when values accumulate (skills, likes,
  visited) and "single" when a new value replaces the old (team, manager, city).
- causal_links: [{cause, effect, confidence, evidence, entities}] short cause and effect
  phrases, confidence 0..1 (0.9 when the note says so outright), evidence = the sentence.
- concepts: [{name, description}] a few salient ideas (not the entities themselves).
- category: procedural (instructions, how-to), semantic (general knowledge) or episodic
  (something that happened).
Only extract what the note says; do not invent.

Example (reference time 2026-01-07T16:00:00Z):
Note: "Deploy v2.3.1 removed AUTH_SECRET from the config. Because AUTH_SECRET was missing,
the auth-service crashed at 14:30."
{"entities": [{"name": "deploy-v2.3.1", "entity_type": "deployment"},
  {"name": "AUTH_SECRET", "entity_type": "config"},
  {"name": "auth-service", "entity_type": "service"}],
 "relations": [{"source": "deploy-v2.3.1", "target": "AUTH_SECRET", "relationship_type": "removed"}],
 "events": [
  {"description": "Deploy v2.3.1 removed AUTH_SECRET from the config",
   "occurred_at": "2026-01-07T16:00:00.000Z", "entities": ["deploy-v2.3.1", "AUTH_SECRET"]},
  {"description": "auth-service crashed", "occurred_at": "2026-01-07T14:30:00.000Z",
   "entities": ["auth-service"]}],
 "facts": [],
 "causal_links": [
  {"cause": "deploy-v2.3.1 removed AUTH_SECRET", "effect": "AUTH_SECRET missing",
   "confidence": 0.8, "evidence": "Deploy v2.3.1 removed AUTH_SECRET from the config.",
   "entities": ["deploy-v2.3.1", "AUTH_SECRET"]},
  {"cause": "AUTH_SECRET missing", "effect": "auth-service crashed", "confidence": 0.9,
   "evidence": "Because AUTH_SECRET was missing, the auth-service crashed at 14:30.",
   "entities": ["AUTH_SECRET", "auth-service"]}],
 "concepts": [{"name": "configuration secrets", "description": "secrets a service needs"}],
 "category": "episodic"}
"""


def extractor_user(text: str, known_names: Sequence[str], reference: datetime) -> str:
    """The user message for extracting memory from `text`."""
    return user_message("Note", text, known_names, reference)
