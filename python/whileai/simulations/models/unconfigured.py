"""What to set when a role has no model: there are no hosted defaults for agent, writer or judge.

One message per role, shared by every error and warning that meets an unconfigured role, so each
names the same settings (docs/models.md, "No hosted defaults").

>>> "WHILEAI_JUDGE" in no_model_message("judge") and "judge=" in no_model_message("judge")
True
"""

from __future__ import annotations

__all__ = ["LOCAL_SPEC", "no_model_message"]

LOCAL_SPEC = "vllm:<model>@http://127.0.0.1:8000/v1"
_SPEC_EXAMPLES = (f"'openai:gpt-4.1-mini' (with OPENAI_API_KEY) or, for a local "
                  f"OpenAI-compatible server, '{LOCAL_SPEC}'")


def no_model_message(role: str) -> str:
    """The sentence for a role (``agent``, ``writer`` or ``judge``) that no setting names.

    >>> no_model_message("agent").startswith("no agent")
    True
    """
    if role == "agent":
        return ("no agent: there is no hosted default agent. Pass agent= a callable "
                "(message -> {'steps', 'final_text'}), an object with run(situation, *, world, "
                f"seed), zps.seeded_agent(TOOLS), or a model spec such as {_SPEC_EXAMPLES}; or "
                "set WHILEAI_AGENT to such a spec (docs/models.md, 'No hosted defaults')")
    if role == "judge":
        return ("no judge model: there is no hosted default judge. Pass judge= a model spec such "
                f"as {_SPEC_EXAMPLES}, or a callable row -> {{'reward': ...}}; or call "
                "whileai.configure(judge=...), or set WHILEAI_JUDGE to such a spec "
                "(docs/models.md, 'No hosted defaults')")
    if role == "writer":
        return ("no simulator model is configured: used the built-in template writer. For "
                "model-written situations pass simulator= a model spec such as "
                f"{_SPEC_EXAMPLES}, or set WHILEAI_SIMULATOR to one; pass simulator=False to "
                "silence this")
    raise ValueError(f"unknown role {role!r}; use agent, writer or judge")
