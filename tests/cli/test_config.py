"""Configuration precedence: default < file < environment < flag."""

from __future__ import annotations

from pathlib import Path

import pytest

from convection.cli.config import load_settings
from convection.common.errors import InvalidInput


def test_each_layer_overrides_the_one_below(tmp_path: Path) -> None:
    cfg = tmp_path / "convection.toml"
    cfg.write_text("concurrency = 8\nmax_resources_per_stack = 50\nproject = 'ops'\n")
    eff = load_settings(
        config_file=cfg,
        environ={"CONVECTION_MAX_RESOURCES_PER_STACK": "-1", "CONVECTION_PROJECT": "env"},
        flags={"project": "cli", "db": None},
    )
    assert eff.settings.concurrency == 8
    assert eff.sources["concurrency"] == f"file:{cfg}"
    assert eff.settings.max_resources_per_stack == -1
    assert eff.sources["max_resources_per_stack"] == "env:CONVECTION_MAX_RESOURCES_PER_STACK"
    assert eff.settings.project == "cli"
    assert eff.sources["project"] == "flag"
    assert eff.sources["db"] == "default"  # a flag left unset does not count


def test_missing_default_file_is_fine_but_missing_explicit_file_is_not(tmp_path: Path) -> None:
    eff = load_settings(environ={"CONVECTION_CONFIG": str(tmp_path / "absent.toml")})
    assert eff.settings.concurrency == 64
    with pytest.raises(InvalidInput, match="does not exist"):
        load_settings(config_file=tmp_path / "absent.toml", environ={})


def test_unknown_option_in_file_is_named(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("concurency = 3\n")
    with pytest.raises(InvalidInput, match=r"unknown option.*concurency"):
        load_settings(config_file=cfg, environ={})


def test_bad_value_names_option_and_source() -> None:
    with pytest.raises(InvalidInput, match=r"concurrency \(env:CONVECTION_CONCURRENCY\)"):
        load_settings(environ={"CONVECTION_CONCURRENCY": "lots"})


def test_limits_follow_settings() -> None:
    eff = load_settings(environ={"CONVECTION_MAX_TEMPLATE_SIZE": "1000"})
    assert eff.settings.limits().max_template_size == 1000


def test_default_db_is_sqlite_in_user_data_dir() -> None:
    url = load_settings(environ={}).settings.db_url()
    assert url.startswith("sqlite:///") and url.endswith("convection.db")
