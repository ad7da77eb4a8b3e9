"""Why a conversation gave no row, and what to turn on: one wording for every place that says it.

``read_otel`` counts conversations without a row under these reasons; the platform's receiver
keeps such a trace "raw" under the same reason and says it in the OTLP response's
``partialSuccess.errorMessage``, the trace listing shows the counts, and ``trace_report`` warns.

>>> explain({"without_content": 2, "merged": 0}).split(":")[0]
'2 trace(s) without a row of their own'
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["REASONS", "explain"]

REASONS: dict[str, str] = {
    "without_content": (
        "GenAI spans without message content: turn content capture on "
        "(openai-v2 2.4: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only, not "
        "'true'; openai-v2 up to 2.3: 'true' and an OTLPLogExporter sending the log records to "
        "/v1/logs; OpenLLMetry: TRACELOOP_TRACE_CONTENT=true; OpenInference: "
        "OPENINFERENCE_HIDE_INPUTS/OUTPUTS unset)"),
    "not_genai": (
        "no GenAI attributes (gen_ai.*, OpenInference llm.*): instrument the model client "
        "(docs/traces.md lists the libraries)"),
    "merged": (
        "a truncated copy of a later call's conversation (each call its own trace, no parent "
        "span), merged into it; a parent span per conversation keeps it one trace"),
}


def explain(counts: Mapping[str, int]) -> str:
    """One sentence per reason counted (none for a zero count), joined; "" when all are zero."""
    parts = [f"{n} trace(s) without a row of their own: {REASONS.get(reason, reason)} ({reason})"
             for reason, n in sorted(counts.items()) if n]
    return "; ".join(parts)
