"""The environment package template: the files ``export_environment`` writes, as text.

>>> "load_environment" in render_module("github_agent")
True
"""

from __future__ import annotations

from string import Template

__all__ = ["render_module", "render_pyproject"]

_MODULE = Template('''"""$module: an RL environment exported by whileai.

The tasks are in data/, the system prompt, tool schemas, turn cap, reward and world in
spec.json; README.md states how the tasks were gated. Load it where ``verifiers`` is installed
(pip install 'whileai[rl]'):

    import $module
    env = $module.load_environment(split="holdout")
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SPEC_PATH = Path(__file__).with_name("spec.json")
_CLASSES = ("WhileaiTask", "WhileaiTaskData", "WhileaiTaskset", "WhileaiTasksetConfig",
            "WhileaiToolset", "WhileaiToolsetConfig")


def load_environment(**kwargs: Any) -> Any:
    """Build this environment with the installed verifiers (see whileai's load_environment)."""
    from whileai.simulations.export.environment import load_environment as _load

    return _load(SPEC_PATH, **kwargs)


def __getattr__(name: str) -> Any:
    # The verifiers classes are built on first use, so importing this package needs no verifiers.
    if name in _CLASSES:
        from whileai.simulations.export.vf_env import bound_classes

        return getattr(bound_classes(SPEC_PATH, __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["WhileaiTaskset", "load_environment"]
''')

_PYPROJECT = Template('''[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "$name"
version = "$version"
description = "RL environment exported by whileai: tasks, mock world and reward"
requires-python = ">=3.10"
dependencies = ["whileai"]

[project.optional-dependencies]
rl = ["whileai[rl]"]

[tool.setuptools]
packages = ["$module"]

[tool.setuptools.package-data]
$module = ["spec.json", "data/*.jsonl"]
''')


def render_module(module: str) -> str:
    """The package's ``__init__.py``."""
    return _MODULE.substitute(module=module)


def render_pyproject(name: str, module: str, version: str = "0.1.0") -> str:
    """The package's ``pyproject.toml`` (setuptools; data files shipped as package data).

    >>> "packages = [\\"demo\\"]" in render_pyproject("demo", "demo")
    True
    """
    return _PYPROJECT.substitute(name=name, module=module, version=version)
