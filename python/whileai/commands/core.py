"""``whileai info`` and ``whileai demo``."""

from __future__ import annotations

import argparse
from typing import Any

from whileai import _backend
from whileai._version import __version__
from whileai.config import home


def register(sub: Any) -> None:
    """Add the core subcommands to the CLI."""
    info = sub.add_parser("info", help="version, kernel backend, Unicode tables and home folder",
                          epilog="example:\n  whileai info")
    info.set_defaults(func=run_info)
    demo = sub.add_parser("demo", help="run the offline quick start end to end",
                          epilog="example:\n  whileai demo")
    demo.set_defaults(func=run_demo)


def run_info(args: argparse.Namespace) -> int:
    """Print the version, which backend serves each kernel, the pinned Unicode, the home folder."""
    print(f"whileai {__version__}")
    print(f"backend: {_backend.BACKEND}")
    if _backend.NATIVE_ERROR:
        print(f"  (native not used: {_backend.NATIVE_ERROR})")
    for kernel, names in _backend.KERNELS.items():
        served = ", ".join(f"{n}={_backend.KERNEL_BACKENDS[n]}" for n in names)
        print(f"kernel {kernel}: {served}")
    print(f"unicode: {_backend.UNICODE_VERSION} (committed tables, the same on every Python)")
    print(f"home: {home()}")
    return 0


def run_demo(args: argparse.Namespace) -> int:
    """Run the offline quick start: the seeded agent through the mock world, 60 rows."""
    from collections import Counter

    # imported when the command runs: `whileai --help` loads no area
    import whileai.simulations as zps

    tools = [{
        "type": "function",
        "function": {
            "name": "get_order",
            "description": "Look up an order by id.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                           "required": ["order_id"]},
        },
    }]
    data = zps.simulate(zps.seeded_agent(tools), tools=tools,
                        system_prompt="Help customers with orders.", simulator=False, budget=60,
                        progress=False)
    print(repr(data))
    row = data.trajectories[0]
    print(f"\nfirst row {row['scenario_id']} r{row['rollout_index']}:")
    print(f"  ask:   {row['prompt']}")
    for step in row["steps"]:
        print(f"  tool:  {step['tool']}({step['arguments']}) -> {step['result']}")
    print(f"  reply: {row['final_text']}")
    faults = Counter(f["kind"] for r in data.trajectories for f in r["faults"])
    planted = Counter(k for r in data.trajectories for k in r.get("seeded", []))
    print(f"\nfaults scheduled: {dict(faults) or 'none'}")
    print(f"seeded mistakes:  {dict(planted)} on {sum(planted.values())} of {len(data)} rows")
    print(f"cells covered:    {data.search['cells_covered']} of {data.search['grid_cells']}")
    honest = data.grade(judge=lambda r: {"reward": int(not r.get("seeded"))})
    print(f"judge 'no planted mistake': {honest.pass_at}")
    return 0
