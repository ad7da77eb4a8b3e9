# mypy: disable-error-code="misc,untyped-decorator,import-untyped,import-not-found"
"""The exported environment on the installed ``verifiers`` (the 0.4 ``verifiers.v1`` API).

Imported only where ``verifiers`` is installed. ``bound_classes(spec_path, module)`` builds the
classes one exported package exposes: a ``Taskset`` reading ``data/<split>.jsonl``, a ``Task``
whose reward is the spec's reward (default ``task_checklist``) read through the judge contract,
and a ``Toolset`` serving the spec's tools from the mock world seeded with each task's world
state and fault plan (or the spec's ``execute``). ``build_environment`` wraps them in the
release's ``Env``.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import verifiers.v1 as vf
from pydantic import Field

from whileai.errors import ConfigError
from whileai.simulations.export.checklist import row_from_messages
from whileai.simulations.export.reference import resolve_reference
from whileai.simulations.world.rollout import RolloutContext, using_rollout

__all__ = ["bound_classes", "build_environment", "score_messages", "trace_messages"]

_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool,
                          "array": list, "object": dict}


def trace_messages(trace: Any) -> list[dict[str, Any]]:
    """A verifiers trace's final branch as OpenAI-style chat messages."""
    out: list[dict[str, Any]] = []
    for message in trace.messages:
        item = message.model_dump(exclude_none=True)
        calls = item.get("tool_calls")
        if calls:
            item["tool_calls"] = [{"id": c["id"], "type": "function", "function": {
                "name": c["name"], "arguments": c.get("arguments", "")}} for c in calls]
        out.append(item)
    return out


def score_messages(reward: Callable[..., Any], messages: list[dict[str, Any]],
                   info: Mapping[str, Any]) -> tuple[float, dict[str, float]]:
    """Run ``reward`` on a chat through the judge contract: ``(reward, markers)``.

    The reward gets a row (``prompt``, ``steps``, ``final_text``, ``messages`` and the task's
    ``info``); it may return a number, a bool or ``{"reward": ..., "markers": {...}}``.
    """
    row = row_from_messages(messages, {k: v for k, v in info.items() if k != "rollouts"})
    row["messages"] = messages
    result = reward(row)
    if isinstance(result, Mapping):
        value, markers = result.get("reward"), dict(result.get("markers") or {})
    else:
        value, markers = result, {}
    if isinstance(value, bool):
        value = float(value)
    if not isinstance(value, (int, float)):
        raise TypeError(f"reward returned {value!r}; return a number or {{'reward': number}}")
    return float(value), {str(k): float(v) for k, v in markers.items()}


def _tool_function(call: Callable[[str, dict[str, Any]], str], schema: Mapping[str, Any]) -> Any:
    function = schema.get("function", schema)
    name = str(function["name"])
    parameters = function.get("parameters") or {}
    required = set(parameters.get("required") or [])
    params = []
    for key, prop in (parameters.get("properties") or {}).items():
        kind = _TYPES.get(str(prop.get("type")) if isinstance(prop, Mapping) else "", Any)
        params.append(inspect.Parameter(
            key, inspect.Parameter.KEYWORD_ONLY,
            default=inspect.Parameter.empty if key in required else None,
            annotation=kind if key in required else (kind | None if kind is not Any else Any)))

    def tool(**kwargs: Any) -> str:
        return call(name, {k: v for k, v in kwargs.items() if v is not None or k in required})

    tool.__name__ = name
    tool.__doc__ = function.get("description") or name
    tool.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    return tool


def _classes(spec_path: Path | None, spec: dict[str, Any], module: str) -> SimpleNamespace:
    root = spec_path.parent if spec_path is not None else None

    class WhileaiTaskData(vf.TaskData):
        info: dict[str, Any] = Field(default_factory=dict)

    class WhileaiToolsetConfig(vf.ToolsetConfig):
        spec: dict[str, Any] = Field(default_factory=lambda: dict(spec))

    class WhileaiToolset(vf.Toolset[WhileaiToolsetConfig, vf.State]):  # type: ignore[misc]
        TOOL_PREFIX = None

        def __init__(self, config: Any) -> None:
            super().__init__(config)
            self.spec = dict(config.spec)
            self.context: RolloutContext | None = None
            execute = self.spec.get("execute")
            self.execute = resolve_reference(execute, "execute") if execute else None
            factory = resolve_reference(self.spec.get("world") or "whileai.simulations.world:world")
            tools = self.spec.get("tools") or []
            self.world: Any = factory(tools) if self.execute is None else None

        async def setup_task(self, task: Any) -> None:
            self.bind(task.data.info, task.data.prompt_text, task.data.id or "")

        def bind(self, info: Mapping[str, Any], prompt: str = "", scenario: str = "") -> None:
            """Seed the world with one task's records and fault plan."""
            self.context = RolloutContext(
                scenario_id=str(info.get("scenario_id") or scenario), prompt=prompt,
                rollout_index=0, seed=0, world_state=info.get("world_state") or {},
                faults=info.get("faults") or [])

        def call(self, tool: str, arguments: dict[str, Any]) -> str:
            if self.context is None:
                self.bind({})
            assert self.context is not None
            with using_rollout(self.context):
                answer = self.execute if self.execute is not None else self.world.call
                result = answer(tool, arguments)
            return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)

        def register(self, mcp: Any) -> None:
            for schema in self.spec.get("tools") or []:
                fn = _tool_function(self.call, schema)
                mcp.add_tool(fn, name=fn.__name__, description=fn.__doc__)

    class WhileaiTask(vf.Task[WhileaiTaskData, vf.State, vf.TaskConfig]):  # type: ignore[misc]
        @classmethod
        def toolsets(cls, config: Any) -> list[Any]:
            return [WhileaiToolset(WhileaiToolsetConfig())]

        @functools.cached_property
        def reward_fn(self) -> Callable[..., Any]:
            return resolve_reference(spec["reward"], "reward")  # type: ignore[no-any-return]

        @vf.reward
        async def whileai_reward(self, trace: Any) -> float:
            return score_messages(self.reward_fn, trace_messages(trace), self.data.info)[0]

        @vf.metric
        async def whileai_markers(self, trace: Any) -> dict[str, float]:
            markers = score_messages(self.reward_fn, trace_messages(trace), self.data.info)[1]
            return {f"marker_{k}": v for k, v in markers.items()}

    class WhileaiTasksetConfig(vf.TasksetConfig):
        split: str = "train"

    class WhileaiTaskset(vf.Taskset[WhileaiTask, WhileaiTasksetConfig]):  # type: ignore[misc]
        def load(self) -> Iterator[Any]:
            split = getattr(self.config, "split", "train")
            if split not in spec.get("splits", {}) or root is None:
                raise ConfigError(f"split {split!r}: this environment has splits "
                                 f"{sorted(spec.get('splits', {}))}")
            text = (root / spec["splits"][split]).read_text(encoding="utf-8")
            for line in text.splitlines():
                if not line.strip():
                    continue
                row = json.loads(line)
                yield WhileaiTask(WhileaiTaskData(
                    id=row["id"], prompt=row["prompt"][-1]["content"],
                    system_prompt=spec.get("system_prompt"), info=row.get("info") or {},
                ), self.config.task)

        @classmethod
        def toolsets(cls, config: Any) -> list[Any]:
            return []

    names = {"WhileaiTaskData": WhileaiTaskData, "WhileaiToolsetConfig": WhileaiToolsetConfig,
             "WhileaiToolset": WhileaiToolset, "WhileaiTask": WhileaiTask,
             "WhileaiTasksetConfig": WhileaiTasksetConfig, "WhileaiTaskset": WhileaiTaskset}
    for name, cls in names.items():
        cls.__module__, cls.__qualname__ = module, name
    return SimpleNamespace(**names)


@functools.cache
def _bound(spec_path: str, module: str) -> SimpleNamespace:
    path = Path(spec_path)
    return _classes(path, json.loads(path.read_text(encoding="utf-8")), module)


def bound_classes(spec_path: Path | str, module: str) -> SimpleNamespace:
    """The verifiers classes for one exported package (built once per spec file)."""
    return _bound(str(Path(spec_path).resolve()), module)


def build_environment(spec: dict[str, Any], path: Path | None, *, split: str = "train",
                      env_config: Mapping[str, Any] | None = None) -> Any:
    """The environment for ``spec``: the release's ``Env`` when the package imports, else the
    taskset (a spec without an importable package has no address for the rollout workers)."""
    module = str(spec.get("name") or "whileai_env")
    if path is None:
        classes = _classes(None, spec, module)
        return classes.WhileaiTaskset(classes.WhileaiTasksetConfig(split=split))
    overridden = spec != json.loads(path.read_text(encoding="utf-8"))
    classes = bound_classes(path, module) if not overridden else _classes(path, spec, module)
    taskset = classes.WhileaiTaskset(classes.WhileaiTasksetConfig(id=module, split=split))
    try:
        imported = __import__(module)
    except ImportError:
        imported = None
    if imported is None or getattr(imported, "SPEC_PATH", None) is None or overridden:
        return taskset
    raw: dict[str, Any] = {"taskset": {"id": module, "split": split},
                           "agent": {"harness": {"id": "null"},
                                     "max_turns": int(spec.get("max_turns") or 10)}}
    for key, value in dict(env_config or {}).items():
        if isinstance(value, Mapping) and isinstance(raw.get(key), dict):
            raw[key] = {**raw[key], **value}
        else:
            raw[key] = value
    return vf.load_environment(vf.resolve_env_config(raw))
