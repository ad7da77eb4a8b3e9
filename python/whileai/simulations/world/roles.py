"""Parameter roles read from tool schemas: what each argument is, and how its values look.

A parameter is an entity identifier (``order_id``: an order, ``item_ids``: a list of items), an
attribute (an enum value: a cabin class, a reason), a quantity with its unit, a date, an amount
of money, a contact key (an email or phone used to find someone), a name, an address part, a
place code, an arithmetic expression, free text, a yes/no option, or a list of records
(``passengers``: objects with fields). Roles come from names, types, enums, descriptions and
examples ("such as '#W0000000'").

Every entity has one id format for the whole spec (the first example any description gives,
else one derived from the entity's name), so the world's records, the writer's asks and the
agent's reading agree on what an order id looks like.

>>> from whileai.simulations.agent.spec import agent_spec
>>> spec = agent_spec(tools=[{"name": "get_order", "parameters": {"type": "object",
...     "properties": {"order_id": {"type": "string", "description": "such as '#W0000000'"}}}}])
>>> role = lexicon(spec).role("get_order", "order_id")
>>> role.kind, role.entity, role.id_format.pattern
('id', 'order', '\\\\#W\\\\d{7}')
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from whileai.simulations.agent.spec import AgentSpec, Param, ToolSpec

__all__ = ["KINDS", "IdFormat", "Lexicon", "Role", "lexicon", "role_of"]

KINDS = ("id", "ids", "attribute", "flag", "quantity", "money", "date", "email", "phone",
         "name", "address", "place", "expression", "text", "records")
_EXAMPLE = re.compile(r"""(?:such as|e\.g\.,?|for example,?|like)\s+(['"])([^'"]{1,40})\1""",
                      re.IGNORECASE)
_MORE = re.compile(r"""\s*(?:,|or|and)\s*(?:or\s+)?(['"])([^'"]{1,40})\1""")
_ID_SUFFIX = ("_ids", "_id", "ids", "id", "_number", "_no", "_code", "_ref")
_UNIT = re.compile(r"\bnumber of ((?:non-free |free |extra )?[a-z]+(?: items)?)"
                   r"|\bin (GB|MB|TB|kg|km|miles|minutes|hours|days|nights)\b")
_MONEY = ("amount", "price", "total", "cost", "fee", "balance", "refund", "charge")
_ADDRESS = ("address", "street", "city", "state", "country", "zip", "postal", "postcode")
_TEXT = ("summary", "thought", "message", "body", "note", "comment", "description", "query",
         "content", "text", "reason", "subject", "title", "feedback")
_PLACE = ("origin", "destination", "airport", "from", "to", "departure", "arrival")
_PERSON = ("user", "customer", "account", "member", "client", "profile", "passenger")


@dataclass(frozen=True, slots=True, kw_only=True)
class IdFormat:
    """How the ids of one entity look: alternatives of literal prefix + digits, or a shape."""

    entity: str
    shapes: tuple[str, ...]  # each: "lit:<prefix>:<digits>", "alnum:<n>", "name:<digits>"
    pattern: str  # a regex (no anchors) matching every id of this format

    def regex(self) -> re.Pattern[str]:
        """The compiled pattern, bounded so it never matches inside a longer token."""
        return _compiled(self.pattern)


@dataclass(frozen=True, slots=True, kw_only=True)
class Role:
    """What one parameter is: its kind, the entity it names, its unit, its id format."""

    param: Param
    kind: str
    entity: str = ""  # the thing an id names ("order"); "" for non-ids
    qualifier: str = ""  # "new" for ``new_item_ids``
    unit: str = ""  # "bags", "GB"
    id_format: IdFormat | None = None
    fields: tuple[Role, ...] = ()  # the roles of a record's fields (kind "records")

    @property
    def words(self) -> str:
        """The parameter's name in words (``total_baggages`` -> ``total baggages``)."""
        return self.param.name.replace("_", " ").strip()


@dataclass(frozen=True, slots=True, kw_only=True)
class Lexicon:
    """Every tool parameter's role and every entity's id format, for one spec."""

    roles: Mapping[tuple[str, str], Role]
    formats: Mapping[str, IdFormat]
    tools: Mapping[str, ToolSpec] = field(default_factory=dict)
    by_tool: Mapping[str, tuple[Role, ...]] = field(default_factory=dict)

    def role(self, tool: str, param: str) -> Role:
        """The role of ``tool``'s ``param`` (a text role when either is unknown)."""
        found = self.roles.get((tool, param))
        return found if found is not None else Role(param=Param(name=param), kind="text")

    def tool_roles(self, tool: str) -> tuple[Role, ...]:
        """The roles of one tool's parameters, in schema order."""
        return self.by_tool.get(tool, ())


def _entity(name: str, description: str, tool: str) -> tuple[str, str]:
    """The entity an id parameter names, and a qualifier (``new_item_ids`` -> item, new)."""
    low = name.lower()
    for suffix in _ID_SUFFIX:
        if low.endswith(suffix) and len(low) > len(suffix):
            words = low[: -len(suffix)].strip("_").split("_")
            qualifier = ""
            if len(words) > 1 and words[0] in ("new", "old", "original", "target", "source"):
                qualifier, words = words[0], words[1:]
            return " ".join(words), qualifier
    match = re.search(r"\bid of (?:an? |the )?([a-z]+)", description.lower())
    if match:
        return match.group(1), ""
    words = [w for w in tool.lower().split("_") if w and w not in ("get", "by", "id", "details")]
    return (words[-1] if words else "record"), ""


def is_id_name(name: str) -> bool:
    """Whether a parameter's name says it identifies a record."""
    low = name.lower()
    return low == "id" or low.endswith(_ID_SUFFIX)


_BARE_EXAMPLE = re.compile(r"(?:such as|e\.g\.,?|for example,?|like)\s+"
                           r"(#?[A-Za-z]{0,12}[-_]?\d{3,}|[A-Z0-9]{5,10})(?=[\s,.;:)]|$)",
                           re.IGNORECASE)


def _examples(description: str) -> list[str]:
    """The example ids a description gives, quoted ("such as '#W0000000'") or bare ("like
    L-12345").

    >>> _examples("The loan id, like L-12345."), _examples("such as 'A1' or 'B2'")
    (['L-12345'], ['A1', 'B2'])
    """
    found = [m.group(1) for m in _BARE_EXAMPLE.finditer(description)
             if re.search(r"\d", m.group(1))]
    for match in _EXAMPLE.finditer(description):
        found.append(match.group(2))
        rest = description[match.end():]
        more = _MORE.match(rest)
        while more:
            found.append(more.group(2))
            rest = rest[more.end():]
            more = _MORE.match(rest)
    return found


def _shape(example: str) -> str | None:
    """The id shape an example shows, or None when it does not look like an id."""
    if re.fullmatch(r"[a-z]+_[a-z]+_\d{2,4}", example):
        return f"name:{len(example.rsplit('_', 1)[1])}"
    literal = re.fullmatch(r"([#A-Za-z_\-]*?)(\d{3,})", example)
    if literal:
        return f"lit:{literal.group(1)}:{len(literal.group(2))}"
    if re.fullmatch(r"[A-Z0-9]{5,10}", example) and re.search(r"\d", example) \
            and re.search(r"[A-Z]", example):
        return f"alnum:{len(example)}"
    return None


def _shape_pattern(shape: str) -> str:
    kind, _, rest = shape.partition(":")
    if kind == "name":
        return rf"[a-z]+_[a-z]+_\d{{{rest}}}"
    if kind == "alnum":
        n = int(rest)
        return rf"(?=[A-Z]*\d)(?=\d*[A-Z])[A-Z0-9]{{{n}}}"
    prefix, _, digits = rest.rpartition(":")
    return re.escape(prefix) + rf"\d{{{digits}}}"


def _default_format(entity: str, taken: set[str], integer: bool) -> IdFormat:
    if integer:
        shape = "lit::5"
    else:
        letters = re.sub(r"[^a-z]", "", entity) or "rec"
        prefix = letters[:3].upper()
        for extra in range(3, len(letters) + 1):
            prefix = letters[:extra].upper()
            if prefix not in taken:
                break
        taken.add(prefix)
        shape = f"lit:{prefix}-:5"
    return IdFormat(entity=entity, shapes=(shape,), pattern=_shape_pattern(shape))


def _kind(param: Param, tool: ToolSpec) -> str:
    name, desc = param.name.lower(), param.description.lower()
    if param.type == "array" and param.fields:
        return "records"
    if param.type == "object":
        return "records"
    if "email" in name:
        return "email"
    if "phone" in name:
        return "phone"
    if is_id_name(name) and param.type in ("string", "integer", "array"):
        return "ids" if param.type == "array" else "id"
    if param.enum:
        return "flag" if {e.lower() for e in param.enum} <= {"yes", "no", "true", "false"} \
            else "attribute"
    if param.type == "boolean":
        return "flag"
    if name == "expression" or ("expression" in desc and tool.name.lower().startswith("calc")):
        return "expression"
    if param.type in ("integer", "number"):
        if _UNIT.search(param.description):
            return "quantity"
        if any(m in name for m in _MONEY) or "dollar" in desc or "amount" in desc:
            return "money"
        return "quantity"
    if any(w in name for w in ("date", "dob", "birth", "time", "day")):
        return "date"
    if "name" in name:
        return "name"
    if any(w in name for w in _ADDRESS):
        return "address"
    if any(name == w or name.startswith(w + "_") for w in _PLACE) or "iata" in desc \
            or "three letters" in desc:
        return "place"
    return "text"


def _unit(param: Param) -> str:
    match = _UNIT.search(param.description)
    if match:
        return match.group(1) or match.group(2)
    words = param.name.lower().split("_")
    return words[-1] if len(words) > 1 and words[-1] not in ("count", "amount") else ""


_CACHE: dict[int, tuple[AgentSpec, Lexicon]] = {}
_CACHE_SIZE = 16


def lexicon(spec: AgentSpec) -> Lexicon:
    """The roles and id formats of ``spec`` (built once per spec object)."""
    hit = _CACHE.get(id(spec))
    if hit is not None and hit[0] is spec:
        return hit[1]
    built = _build(spec)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[id(spec)] = (spec, built)
    return built


def _walk(spec: AgentSpec) -> list[tuple[ToolSpec, str, Param]]:
    """Every (tool, dotted path, param), record fields included (``flights.date``)."""
    out: list[tuple[ToolSpec, str, Param]] = []
    for tool in spec.tools:
        for param in tool.params:
            out.append((tool, param.name, param))
            out.extend((tool, f"{param.name}.{f.name}", f) for f in param.fields)
    return out


def _build(spec: AgentSpec) -> Lexicon:
    kinds: dict[tuple[str, str], str] = {}
    entities: dict[tuple[str, str], tuple[str, str]] = {}
    examples: dict[str, list[str]] = {}
    integer_ids: set[str] = set()
    walked = _walk(spec)
    for tool, path, param in walked:
        kind = _kind(param, tool)
        kinds[(tool.name, path)] = kind
        if kind in ("id", "ids"):
            entity, qualifier = _entity(param.name, param.description, tool.name)
            entities[(tool.name, path)] = (entity, qualifier)
            shapes = [s for s in map(_shape, _examples(param.description)) if s]
            examples.setdefault(entity, []).extend(shapes)
            if param.type == "integer" or param.items == "integer":
                integer_ids.add(entity)
    formats: dict[str, IdFormat] = {}
    taken: set[str] = set()
    for entity, _qualifier in entities.values():
        if entity in formats:
            continue
        shapes = examples.get(entity) or []
        if shapes:
            unique = tuple(dict.fromkeys(shapes))
            formats[entity] = IdFormat(entity=entity, shapes=unique,
                                       pattern="|".join(_shape_pattern(s) for s in unique))
        else:
            formats[entity] = _default_format(entity, taken, entity in integer_ids)
    roles: dict[tuple[str, str], Role] = {}
    for tool, path, param in reversed(walked):  # fields before the record that holds them
        key = (tool.name, path)
        kind = kinds[key]
        entity, qualifier = entities.get(key, ("", ""))
        fields = tuple(roles[(tool.name, f"{path}.{f.name}")] for f in param.fields) \
            if "." not in path else ()
        roles[key] = Role(
            param=param, kind=kind, entity=entity, qualifier=qualifier,
            unit=_unit(param) if kind == "quantity" else "",
            id_format=formats.get(entity) if entity else None, fields=fields,
        )
    by_tool = {t.name: tuple(roles[(t.name, p.name)] for p in t.params) for t in spec.tools}
    return Lexicon(roles=roles, formats=formats, tools={t.name: t for t in spec.tools},
                   by_tool=by_tool)


def role_of(spec: AgentSpec, tool: str, param: str) -> Role:
    """The role of one parameter of ``spec`` (shorthand for ``lexicon(spec).role``)."""
    return lexicon(spec).role(tool, param)


_COMPILED: dict[str, re.Pattern[str]] = {}


def _compiled(pattern: str) -> re.Pattern[str]:
    found = _COMPILED.get(pattern)
    if found is None:
        found = re.compile(rf"(?<![\w#])(?:{pattern})(?![\w-])")
        _COMPILED[pattern] = found
    return found


def person_entity(entity: str) -> bool:
    """Whether ids of this entity name the person asking (their own account)."""
    return entity in _PERSON


def describe(value: Any) -> str:
    """A value as a person would type it (enum spellings lose their underscores)."""
    return str(value).replace("_", " ") if isinstance(value, str) else str(value)
