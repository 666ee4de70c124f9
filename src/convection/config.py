"""Effective configuration, and where each value came from.

Precedence, lowest first: built-in default, the config file (``--config``,
default ``~/.config/convection/convection.toml``), an environment variable
``CONVECTION_<OPTION>``, then a command-line flag. ``convection config show``
prints every value with its source, so "why is it doing that?" has an answer.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from convection.errors import InvalidInput
from convection.limits import Limits

ENV_PREFIX = "CONVECTION_"


class Settings(BaseModel):
    """Every option, with its default. Field descriptions are user-facing."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    db: str = Field("", description="Store URL; empty means the SQLite file in the data dir.")
    project: str = Field("default", description="Project that scopes stack names.")
    concurrency: int = Field(64, ge=1, description="Resources worked on at once, per engine.")
    max_resources_per_stack: int = Field(1000, ge=-1, description="-1 means no limit.")
    max_nested_stack_depth: int = Field(5, ge=1)
    max_template_size: int = Field(512 * 1024, ge=1, description="Bytes.")
    stack_timeout_mins: int = Field(60, ge=1, description="Default stack action timeout.")
    engine_lease_seconds: int = Field(30, ge=1, description="How long a job's claim lasts.")
    yaql_limit_iterators: int = Field(10000, ge=1)
    yaql_memory_quota: int = Field(100000, ge=1)
    api_url: str | None = Field(
        None,
        description="The REST API's base URL as machines outside reach it (no /v1), e.g. "
        "http://203.0.113.5:8004. Signal URLs (a WaitConditionHandle's curl_cli) point "
        "there; unset, `convection server` uses http://<bind> and the CLI falls back to "
        "`convection stack resource signal` commands.",
    )

    @field_validator("api_url")
    @classmethod
    def _base_url(cls, value: str | None) -> str | None:
        """An absolute http(s) URL without a trailing slash, checked here so a
        typo fails at start, not inside every handle a stack creates."""
        if value is None or not value.strip():
            return None
        url = value.strip().rstrip("/")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{value!r} is not an http(s) URL such as http://host:8004")
        if parts.query or parts.fragment:
            raise ValueError(f"{value!r}: a base URL takes no query or fragment")
        return url

    url: str | None = Field(
        None,
        description="A `convection server` to work against (http://host:8004); the stack "
        "commands then call its API instead of opening --db. Unset: embedded mode.",
    )
    token: SecretStr | None = Field(
        None, description="X-Auth-Token sent to --url (`convection token create`); never shown."
    )

    @field_validator("url")
    @classmethod
    def _server_url(cls, value: str | None) -> str | None:
        """The server's base URL; ``/v1/{project}`` is added per request, so
        a heatclient-style endpoint (which already has it) is refused here
        rather than producing ``/v1/p/v1/p`` paths that 404."""
        if value is None or not value.strip():
            return None
        url = value.strip().rstrip("/")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{value!r} is not an http(s) URL such as http://127.0.0.1:8004")
        if parts.query or parts.fragment or "/v1/" in parts.path + "/":
            raise ValueError(f"{value!r}: give the server's base URL, without /v1/... or a query")
        return url

    def limits(self) -> Limits:
        return Limits(
            max_template_size=self.max_template_size,
            max_resources_per_stack=self.max_resources_per_stack,
            max_nested_stack_depth=self.max_nested_stack_depth,
            yaql_limit_iterators=self.yaql_limit_iterators,
            yaql_memory_quota=self.yaql_memory_quota,
        )

    def db_url(self) -> str:
        if self.db:
            return self.db
        data = Path(platformdirs.user_data_dir("convection"))
        return f"sqlite:///{data / 'convection.db'}"


@dataclass(frozen=True, slots=True)
class Effective:
    settings: Settings
    #: option -> "default" | "file:<path>" | "env:<NAME>" | "flag"
    sources: Mapping[str, str]


def default_config_path() -> Path:
    return Path(platformdirs.user_config_dir("convection", roaming=False)) / "convection.toml"


def _read_file(path: Path, explicit: bool) -> dict[str, Any]:
    if not path.exists():
        if explicit:
            raise InvalidInput.single(f"config file {path} does not exist")
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InvalidInput.single(f"{path}: invalid config file: {exc}") from None
    unknown = sorted(set(data) - set(Settings.model_fields))
    if unknown:
        known = ", ".join(Settings.model_fields)
        names = ", ".join(unknown)
        raise InvalidInput.single(f"{path}: unknown option(s) {names} (known: {known})")
    return data


def load_settings(
    *,
    config_file: Path | None = None,
    flags: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Effective:
    """Merge the four layers and validate the result once."""
    environ = os.environ if environ is None else environ
    path = config_file or Path(environ.get(ENV_PREFIX + "CONFIG", "") or default_config_path())
    values: dict[str, Any] = {}
    sources = {name: "default" for name in Settings.model_fields}
    for key, value in _read_file(path, explicit=config_file is not None).items():
        values[key] = value
        sources[key] = f"file:{path}"
    for name in Settings.model_fields:
        env_name = ENV_PREFIX + name.upper()
        if env_name in environ:
            values[name] = environ[env_name]
            sources[name] = f"env:{env_name}"
    for name, value in (flags or {}).items():
        if value is not None:
            values[name] = value
            sources[name] = "flag"
    try:
        settings = Settings.model_validate(values)
    except ValidationError as exc:
        problems = "; ".join(_problem(e, sources) for e in exc.errors())
        raise InvalidInput.single(f"invalid configuration: {problems}") from None
    return Effective(settings, sources)


def _problem(error: Any, sources: Mapping[str, str]) -> str:
    name = ".".join(str(p) for p in error["loc"])
    origin = sources.get(str(error["loc"][0]), "?")
    return f"{name} ({origin}): {error['msg']}"
