"""Reading the agent: tools (OpenAI shape or the bare ``function`` dict), policy, spec folders.

Everything downstream (the grid, the writer, the mock world) reads an :class:`AgentSpec`, never
the caller's raw dicts. Odd schema types are normalised with a note instead of failing.

>>> spec = agent_spec(tools=[{"name": "get_order", "parameters": {"type": "object",
...     "properties": {"order_id": {"type": "string"}}}}], system_prompt="Help with orders.")
>>> spec.tools[0].name, spec.tools[0].params[0].name
('get_order', 'order_id')
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from whileai.errors import RowError, SpecError
from whileai.rows.depth import loads_limited

__all__ = [
    "AgentSpec",
    "Param",
    "ToolSpec",
    "agent_spec",
    "inspect",
    "load_spec",
    "normalize_tools",
    "policy_clauses",
]

# JSON-schema type spellings seen in the wild, mapped to the standard names.
_TYPE_ALIASES = {
    "str": "string",
    "text": "string",
    "int": "integer",
    "long": "integer",
    "float": "number",
    "double": "number",
    "decimal": "number",
    "bool": "boolean",
    "dict": "object",
    "map": "object",
    "list": "array",
    "tuple": "array",
    "set": "array",
    "any": "string",
    "none": "null",
}
_STANDARD_TYPES = {"string", "integer", "number", "boolean", "object", "array", "null"}
_MAX_CLAUSE_CHARS = 400


@dataclass(frozen=True, slots=True, kw_only=True)
class Param:
    """One tool parameter, normalised."""

    name: str
    type: str = "string"
    description: str = ""
    enum: tuple[str, ...] = ()
    required: bool = False
    items: str = ""  # an array's item type ("string", "object", ...)
    fields: tuple[Param, ...] = ()  # an object's (or an array of objects') properties


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec:
    """One tool: its name, description and parameters."""

    name: str
    description: str = ""
    params: tuple[Param, ...] = ()
    kind: str = ""  # "read", "write", ... when the tool or the spec says (generate/kinds.py)

    def to_openai(self) -> dict[str, Any]:
        """Return the tool in OpenAI function-calling shape."""
        properties: dict[str, Any] = {}
        for p in self.params:
            prop: dict[str, Any] = {"type": p.type}
            if p.description:
                prop["description"] = p.description
            if p.enum:
                prop["enum"] = list(p.enum)
            if p.type == "array" and p.items:
                prop["items"] = {"type": p.items}
            if p.fields:
                nested = ToolSpec(name=self.name, params=p.fields).to_openai()["function"]
                target = prop["items"] if p.type == "array" else prop
                target.update(nested["parameters"])
            properties[p.name] = prop
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "object",
                    "properties": properties,
                    "required": [p.name for p in self.params if p.required],
                },
            },
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentSpec:
    """The agent as the engine sees it: tools, policy, seed situations, rubric, notes."""

    tools: tuple[ToolSpec, ...] = ()
    policy: str = ""
    situations: tuple[str, ...] = ()
    rubric: str = ""
    notes: tuple[str, ...] = ()

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The tool names, in the order given."""
        return tuple(t.name for t in self.tools)


def _norm_type(raw: object, where: str, notes: list[str]) -> str:
    if isinstance(raw, list):  # ["string", "null"]: keep the first non-null type
        kinds = [k for k in raw if k != "null"] or ["null"]
        raw = kinds[0]
    if raw is None:
        return "string"
    name = str(raw).strip().lower()
    if name in _STANDARD_TYPES:
        return name
    mapped = _TYPE_ALIASES.get(name, "string")
    notes.append(f"{where}: type {raw!r} read as {mapped!r}")
    return mapped


def _norm_params(schema: object, where: str, notes: list[str]) -> tuple[Param, ...]:
    if schema is None:
        return ()
    if not isinstance(schema, Mapping):
        raise SpecError(
            f"{where}: parameters must be a JSON-schema object (a dict), got "
            f"{type(schema).__name__}; write it as {{'type': 'object', 'properties': {{...}}}}"
        )
    kind = schema.get("type", "object")
    if kind not in ("object", None) and _norm_type(kind, where, notes) != "object":
        raise SpecError(
            f"{where}: parameters schema has type {kind!r}; a tool's parameters must be "
            "an object schema with 'properties'"
        )
    props = schema.get("properties") or {}
    if not isinstance(props, Mapping):
        raise SpecError(f"{where}: 'properties' must be a dict, got {type(props).__name__}")
    required = schema.get("required") or ()
    required_set = {str(r) for r in required} if isinstance(required, list | tuple) else set()
    params = []
    for name, prop in props.items():
        prop_map = prop if isinstance(prop, Mapping) else {}
        if not isinstance(prop, Mapping):
            notes.append(f"{where}.{name}: property is not a dict; read as a string")
        enum = prop_map.get("enum") or ()
        ptype = _norm_type(prop_map.get("type"), f"{where}.{name}", notes)
        items = prop_map.get("items") if ptype == "array" else None
        items_map = items if isinstance(items, Mapping) else {}
        nested = items_map if ptype == "array" else prop_map
        fields: tuple[Param, ...] = ()
        if ptype in ("array", "object") and isinstance(nested.get("properties"), Mapping):
            fields = _norm_params({"type": "object", "properties": nested["properties"],
                                   "required": nested.get("required") or ()},
                                  f"{where}.{name}", notes)
        params.append(
            Param(
                name=str(name),
                type=ptype,
                description=str(prop_map.get("description") or ""),
                enum=tuple(str(e) for e in enum) if isinstance(enum, list | tuple) else (),
                required=str(name) in required_set,
                items=_norm_type(items_map.get("type"), f"{where}.{name}[]", notes)
                if items_map else "",
                fields=fields,
            )
        )
    return tuple(params)


def normalize_tools(tools: object, notes: list[str] | None = None) -> tuple[ToolSpec, ...]:
    """Normalise tools in OpenAI shape, bare ``function`` dicts, or ToolSpecs.

    Raises:
        SpecError: a tool has no name, or its parameters are not an object schema.

    >>> normalize_tools([{"type": "function", "function": {"name": "ping"}}])[0].name
    'ping'
    """
    notes = [] if notes is None else notes
    if tools is None:
        return ()
    if isinstance(tools, Mapping):
        tools = [tools]
    if not isinstance(tools, Sequence) or isinstance(tools, str | bytes):
        raise SpecError(f"tools must be a list of tool dicts, got {type(tools).__name__}")
    out: list[ToolSpec] = []
    seen: set[str] = set()
    for i, tool in enumerate(tools):
        if isinstance(tool, ToolSpec):
            out.append(tool)
            continue
        if not isinstance(tool, Mapping):
            raise SpecError(f"tools[{i}] must be a dict, got {type(tool).__name__}")
        fn = tool.get("function") if isinstance(tool.get("function"), Mapping) else tool
        assert isinstance(fn, Mapping)
        name = fn.get("name")
        if not isinstance(name, str) or not name.strip():
            raise SpecError(
                f"tools[{i}] has no name: give every tool a non-empty 'name' "
                "(OpenAI shape: {'type': 'function', 'function': {'name': ..., ...}})"
            )
        name = name.strip()
        if name in seen:
            notes.append(f"tools[{i}]: duplicate tool name {name!r} skipped")
            continue
        seen.add(name)
        params = _norm_params(fn.get("parameters"), f"tools[{i}] ({name})", notes)
        kind = _tool_kind(tool.get("x-kind") or fn.get("x-kind"),
                          f"tools[{i}] ({name})")
        out.append(ToolSpec(name=name, description=str(fn.get("description") or ""),
                            params=params, kind=kind))
    return tuple(out)


TOOL_KINDS = ("read", "write", "irreversible", "compute", "transfer")


def _tool_kind(raw: object, where: str) -> str:
    if raw is None or raw == "":
        return ""
    if raw not in TOOL_KINDS:
        raise SpecError(f"{where}: kind {raw!r} is not one of {', '.join(TOOL_KINDS)}; "
                        "drop it to let the kind be read from the name and description")
    return str(raw)


def _with_kinds(tools: tuple[ToolSpec, ...], kinds: object) -> tuple[ToolSpec, ...]:
    """The spec's ``tool_kinds`` mapping (tool name -> kind) applied over the tools."""
    if not kinds:
        return tools
    if not isinstance(kinds, Mapping):
        raise SpecError(f"tool_kinds must map tool names to kinds, got {type(kinds).__name__}")
    names = {t.name for t in tools}
    unknown = sorted(set(map(str, kinds)) - names)
    if unknown:
        raise SpecError(f"tool_kinds names unknown tools {unknown}; tools: {sorted(names)}")
    return tuple(replace(t, kind=_tool_kind(kinds[t.name], f"tool_kinds[{t.name!r}]"))
                 if t.name in kinds else t for t in tools)


def policy_clauses(policy: str) -> tuple[str, ...]:
    """Split a system prompt into rule clauses: bullets, numbered items, sentences of paragraphs.

    A very long line is cut at sentence ends, then at ``_MAX_CLAUSE_CHARS``, so one huge
    line still yields usable clauses.

    >>> policy_clauses("# Policy\\n- Verify identity first.\\n- Never refund twice.")
    ('Verify identity first.', 'Never refund twice.')
    """
    clauses: list[str] = []
    for raw in policy.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        line = re.sub(r"^([-*•]|\d+[.)])\s+", "", line)
        for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z(])", line):
            text = sentence.strip()
            while len(text) > _MAX_CLAUSE_CHARS:
                cut = text.rfind(" ", 0, _MAX_CLAUSE_CHARS)
                cut = cut if cut > 40 else _MAX_CLAUSE_CHARS
                clauses.append(text[:cut].strip())
                text = text[cut:].strip()
            if len(text) >= 12:
                clauses.append(text)
    return tuple(dict.fromkeys(clauses))


def load_spec(path: str | Path) -> dict[str, Any]:
    """Read a spec folder (``spec.json`` + optional ``rubric.md``) or a JSON file into a dict.

    Raises:
        SpecError: the path does not exist or holds no readable JSON.
    """
    p = Path(path)
    if p.is_dir():
        candidates = [p / "spec.json", p / "tools.json"]
        json_path = next((c for c in candidates if c.is_file()), None)
        if json_path is None:
            raise SpecError(f"{p}: spec folder has no spec.json; add one with 'tools' and 'policy'")
        rubric_path = p / "rubric.md"
        policy_path = p / "system_prompt.md"
    elif p.is_file():
        json_path, rubric_path, policy_path = p, p.with_name("rubric.md"), p.with_name("_none_")
    else:
        raise SpecError(f"spec {str(path)!r} does not exist: pass a folder or a JSON file")
    try:
        data = loads_limited(json_path.read_bytes().decode("utf-8-sig"), where=str(json_path))
    except json.JSONDecodeError as exc:
        raise SpecError(f"{json_path}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
    except UnicodeDecodeError as exc:
        raise SpecError(f"{json_path}: not UTF-8 text (byte {exc.start})") from None
    except RowError as exc:  # nested too deep
        raise SpecError(str(exc)) from None
    if isinstance(data, list):
        data = {"tools": data}
    if not isinstance(data, dict):
        raise SpecError(
            f"{json_path}: expected a JSON object with 'tools', got {type(data).__name__}"
        )
    if rubric_path.is_file() and "rubric" not in data:
        data["rubric"] = rubric_path.read_text(encoding="utf-8")
    if policy_path.is_file() and not (data.get("policy") or data.get("system_prompt")):
        data["policy"] = policy_path.read_text(encoding="utf-8")
    return data


def agent_spec(
    *,
    tools: object = None,
    system_prompt: str | None = None,
    spec: str | Path | Mapping[str, Any] | None = None,
) -> AgentSpec:
    """Build the :class:`AgentSpec` from inline tools/prompt and/or a spec folder or file.

    Inline values win over the spec's. Raises ``SpecError`` when there are neither tools nor
    a policy.
    """
    notes: list[str] = []
    loaded: Mapping[str, Any] = {}
    if spec is not None:
        loaded = spec if isinstance(spec, Mapping) else load_spec(spec)
    raw_tools = tools if tools is not None else loaded.get("tools")
    policy = system_prompt if system_prompt is not None else (
        loaded.get("policy") or loaded.get("system_prompt") or ""
    )
    if not isinstance(policy, str):
        raise SpecError(f"system_prompt must be a string, got {type(policy).__name__}")
    norm = normalize_tools(raw_tools, notes)
    if not norm and not policy.strip():
        raise SpecError(
            "no tools and no system prompt: pass tools=[...] and/or system_prompt='...' "
            "(or spec='folder/' with spec.json)"
        )
    situations = loaded.get("situations") or ()
    seeds = tuple(
        s if isinstance(s, str) else str(s.get("prompt") or s.get("situation") or "")
        for s in situations
        if isinstance(s, str | Mapping)
    )
    norm = _with_kinds(norm, loaded.get("tool_kinds"))
    return AgentSpec(
        tools=norm,
        policy=policy,
        situations=tuple(s for s in seeds if s),
        rubric=str(loaded.get("rubric") or ""),
        notes=tuple(notes),
    )


def inspect(agent: object) -> dict[str, Any]:
    """Read the tools and system prompt an agent object carries (attributes or dict keys).

    >>> class Bot:
    ...     tools = [{"name": "ping"}]
    ...     system_prompt = "Be brief."
    >>> inspect(Bot())["tools"][0]["function"]["name"]
    'ping'
    """
    def grab(*names: str) -> Any:
        for name in names:
            value = agent.get(name) if isinstance(agent, Mapping) else getattr(agent, name, None)
            if value:
                return value
        return None

    notes: list[str] = []
    tools = normalize_tools(grab("tools", "functions", "tool_schemas"), notes)
    prompt = grab("system_prompt", "instructions", "policy", "prompt")
    return {
        "tools": [t.to_openai() for t in tools],
        "system_prompt": prompt if isinstance(prompt, str) else "",
        "notes": notes,
    }
