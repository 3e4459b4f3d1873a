"""The official MCP conformance suite's client scenarios, run against
callstream's command line (tests/conformance.py, scripts/conformance_client.py).

Every scenario runs (a sample by default, all with ``--run-slow``: each one
starts the suite's servers and callstream twice). ``PASSING`` lists those
callstream passes: one of them failing is a regression; one outside it that
passes fails too (strict xfail), so the list stays true. ``python -m
tests.conformance`` prints the table. Skips without the suite (``make
peers-conformance``)."""

from __future__ import annotations

import pytest

from tests import conformance

#: The scenarios callstream passes; the rest say why not.
PASSING = frozenset(conformance.SCENARIOS)

#: Run by default: the plain tool path, sign-in with discovery, machine use, a form answered with its defaults.
SAMPLE = frozenset({"initialize", "tools_call", "auth/metadata-default", "auth/client-credentials-basic",
                    "elicitation-sep1034-client-defaults", "auth/2025-03-26-oauth-metadata-backcompat",
                    "auth/cross-app-access-complete-flow"})

pytestmark = pytest.mark.skipif(conformance.unavailable() is not None,
                                reason=conformance.unavailable() or "")


def _marks(name: str) -> list[pytest.MarkDecorator]:
    marks = [] if name in SAMPLE else [pytest.mark.slow]
    if name not in PASSING:
        marks.append(pytest.mark.xfail(strict=True, reason="not passed yet (see PASSING)"))
    return marks


@pytest.mark.parametrize("scenario", [pytest.param(name, marks=_marks(name)) for name in conformance.SCENARIOS])
def test_conformance_client_scenario(scenario: str) -> None:
    outcome = conformance.run(scenario)
    assert outcome.passed, outcome.row()
