"""CALLSTREAM_CONFIG and CALLSTREAM_HOME override the platformdirs locations."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.files import paths


def test_overrides_are_used(home: Path) -> None:
    assert paths.config_path() == home / "config.toml"
    data = paths.data_dir()
    assert data == home / "home" and data.is_dir()


def test_defaults_follow_platformdirs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("CALLSTREAM_CONFIG", raising=False)
    monkeypatch.delenv("CALLSTREAM_HOME", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert paths.config_path() == tmp_path / "cfg" / "callstream" / "config.toml"
    assert paths.data_dir(create=False) == tmp_path / "data" / "callstream"


def test_tilde_is_expanded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CALLSTREAM_HOME", "~/cs")
    assert paths.data_dir() == tmp_path / "cs"
