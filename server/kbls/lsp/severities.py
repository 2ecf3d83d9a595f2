"""How a link problem shows in the editor: the diagnostics' source, and each kind's severity
from the root's `diagnostics:` config (`off`: not shown)."""

from __future__ import annotations

from lsprotocol import types

from kbls.config import DiagnosticsConfig, Severity
from kbls.editing.linkcheck import LinkProblem

SOURCE = "kbls"
SEVERITIES: dict[Severity, types.DiagnosticSeverity] = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}


def severity_of(config: DiagnosticsConfig, problem: LinkProblem) -> types.DiagnosticSeverity | None:
    chosen: Severity = getattr(config, problem.problem.value)
    return SEVERITIES.get(chosen)
