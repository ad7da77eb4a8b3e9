"""The environment package template: the files ``export_environment`` writes, as text.

>>> "load_environment" in render_module("github_agent")
True
"""

from __future__ import annotations

from string import Template

__all__ = ["render_backend", "render_module", "render_pyproject"]

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
# A stdlib-only build backend ships in the folder (whileai_build.py): pip installs this package
# offline, with or without build isolation, and with no setuptools or wheel present.
requires = []
build-backend = "whileai_build"
backend-path = ["."]

[project]
name = "$name"
version = "$version"
description = "RL environment exported by whileai: tasks, mock world and reward"
requires-python = ">=3.10"
dependencies = ["whileai"]

[project.optional-dependencies]
rl = ["whileai[rl]"]
''')

_BACKEND = Template('''"""A stdlib-only PEP 517/660 build backend for this exported environment.

Written by whileai's export_environment so `pip install` works offline, with or without build
isolation, with no setuptools or wheel installed.
"""

from __future__ import annotations

import base64
import hashlib
import os
import zipfile

NAME, VERSION, MODULE = "$name", "$version", "$module"
_DIST = f"{MODULE}-{VERSION}"
_METADATA = (f"Metadata-Version: 2.1\\nName: {NAME}\\nVersion: {VERSION}\\n"
             "Summary: RL environment exported by whileai\\nRequires-Dist: whileai\\n"
             "Provides-Extra: rl\\nRequires-Dist: whileai[rl]; extra == 'rl'\\n")
_WHEEL = ("Wheel-Version: 1.0\\nGenerator: whileai_build\\nRoot-Is-Purelib: true\\n"
          "Tag: py3-none-any\\n")


def _record_line(arcname: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def _write(directory: str, files: dict[str, bytes]) -> str:
    name = f"{_DIST}-py3-none-any.whl"
    files = {**files, f"{_DIST}.dist-info/METADATA": _METADATA.encode(),
             f"{_DIST}.dist-info/WHEEL": _WHEEL.encode()}
    record = [_record_line(k, v) for k, v in files.items()] + [f"{_DIST}.dist-info/RECORD,,"]
    files[f"{_DIST}.dist-info/RECORD"] = ("\\n".join(record) + "\\n").encode()
    with zipfile.ZipFile(os.path.join(directory, name), "w", zipfile.ZIP_DEFLATED) as wheel:
        for arcname, data in files.items():
            wheel.writestr(arcname, data)
    return name


def _package_files() -> dict[str, bytes]:
    files = {}
    for root, dirs, names in os.walk(MODULE):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for file_name in sorted(names):
            path = os.path.join(root, file_name)
            with open(path, "rb") as handle:
                files[path.replace(os.sep, "/")] = handle.read()
    return files


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write(wheel_directory, _package_files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _write(wheel_directory, {f"{MODULE}.pth": (os.path.abspath(".") + "\\n").encode()})
''')


def render_module(module: str) -> str:
    """The package's ``__init__.py``."""
    return _MODULE.substitute(module=module)


def render_backend(name: str, module: str, version: str = "0.1.0") -> str:
    """The folder's ``whileai_build.py``: the stdlib build backend pip runs."""
    return _BACKEND.substitute(name=name, module=module, version=version)


def render_pyproject(name: str, module: str, version: str = "0.1.0") -> str:
    """The package's ``pyproject.toml`` (built by the in-folder ``whileai_build`` backend).

    >>> 'build-backend = "whileai_build"' in render_pyproject("demo", "demo")
    True
    """
    return _PYPROJECT.substitute(name=name, module=module, version=version)
