"""Deprecated alias: ``zeroproof_simulations`` is now ``whileai.simulations``.

``import zeroproof_simulations`` returns the ``whileai.simulations`` module itself; submodules
(``zeroproof.rows.schema``, ...) resolve to the same objects as their ``whileai`` names.
"""

from __future__ import annotations

import sys
import warnings

with warnings.catch_warnings():
    # The package's own name is announced below; `zeroproof` only installs the submodule alias.
    warnings.simplefilter("ignore", DeprecationWarning)
    import zeroproof  # noqa: F401

warnings.warn(
    "the `zeroproof_simulations` package is now `whileai.simulations`: replace "
    "`import zeroproof_simulations` with `import whileai.simulations as zps`; the old name "
    "will be removed.",
    DeprecationWarning,
    stacklevel=2,
)

import whileai.simulations  # noqa: E402 - after the warning, so the alias is announced first

sys.modules[__name__] = whileai.simulations
