"""Effective configuration, and where each value came from.

Precedence, lowest first: built-in default, the config file (``--config``,
default ``~/.config/convection/convection.toml``), an environment variable
``CONVECTION_<OPTION>``, then a command-line flag. ``convection config show``
prints every value with its source, so "why is it doing that?" has an answer.
"""

from __future__ import annotations

import functools
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import platformdirs

from convection.common import EgressPolicy, InvalidInput, Limits, networks

if TYPE_CHECKING:
    from pydantic import BaseModel

ENV_PREFIX = "CONVECTION_"


class Secret:
    """A value that is never shown (pydantic's ``SecretStr``, without it)."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get_secret_value(self) -> str:
        return self._value

    def __len__(self) -> int:
        return len(self._value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __str__(self) -> str:
        return "**********" if self._value else ""

    def __repr__(self) -> str:
        return f"Secret('{self}')"


def base_url(value: str | None) -> str | None:
    """``api_url``: an absolute http(s) URL without a trailing slash, checked
    here so a typo fails at start, not inside every handle a stack creates."""
    if value is None or not value.strip():
        return None
    url = value.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{value!r} is not an http(s) URL such as http://host:8004")
    if parts.query or parts.fragment:
        raise ValueError(f"{value!r}: a base URL takes no query or fragment")
    return url


def server_url(value: str | None) -> str | None:
    """``url``: the server's base URL; ``/v1/{project}`` is added per request,
    so a heatclient-style endpoint (which already has it) is refused here
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


def cidr_list(value: str | None) -> str | None:
    """``egress_deny``/``egress_allow``: CIDRs, checked and normalised here
    so a typo fails at start, not at an action's first request."""
    return ",".join(networks(value))


#: How a boolean setting may be spelt (pydantic's lax booleans).
_BOOLEANS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False}
_BOOLEANS |= {"no": False, "off": False}


def _option(
    default: Any,
    description: str = "",
    *,
    ge: int | None = None,
    check: Callable[[str | None], str | None] | None = None,
) -> Any:
    """A setting: its default, its user-facing description, its bound
    (``ge``: at least) or its check (which may normalise the value)."""
    return field(default=default, metadata={"description": description, "ge": ge, "check": check})


@dataclass(frozen=True, slots=True)
class Settings:
    """Every option, with its default, in the order ``config show`` lists them.

    Values are validated by :func:`load_settings` as pydantic validates
    them (lax: ``"8"`` is 8); see :func:`_plain`."""

    db: str = _option("", "Store URL; empty means the SQLite file in the data dir.")
    project: str = _option("default", "Project that scopes stack names.")
    concurrency: int = _option(64, "Resources worked on at once, per engine.", ge=1)
    max_resources_per_stack: int = _option(1000, "-1 means no limit.", ge=-1)
    max_nested_stack_depth: int = _option(5, ge=1)
    max_template_size: int = _option(512 * 1024, "Bytes.", ge=1)
    stack_timeout_mins: int = _option(60, "Default stack action timeout.", ge=1)
    engine_lease_seconds: int = _option(30, "How long a job's claim lasts.", ge=1)
    yaql_limit_iterators: int = _option(10000, ge=1)
    yaql_memory_quota: int = _option(100000, ge=1)
    api_url: str | None = _option(
        None,
        "The REST API's base URL as machines outside reach it (no /v1), e.g. "
        "http://203.0.113.5:8004. Signal URLs (a WaitConditionHandle's curl_cli) point "
        "there; unset, `convection server` uses http://<bind> and the CLI falls back to "
        "`convection stack resource signal` commands.",
        check=base_url,
    )
    url: str | None = _option(
        None,
        "A `convection server` to work against (http://host:8004); the stack "
        "commands then call its API instead of opening --db. Unset: embedded mode.",
        check=server_url,
    )
    egress_allow_loopback: bool = _option(
        False,
        "Let std.http and std.mistral_http connect to loopback addresses (127.0.0.0/8, ::1): "
        "the engine's own services. Off: refused.",
    )
    egress_deny: str = _option(
        "",
        "CIDRs actions may never connect to, comma-separated (e.g. 10.0.0.0/8).",
        check=cidr_list,
    )
    egress_allow: str = _option(
        "",
        "CIDRs actions may connect to, comma-separated; given, only these (and loopback with "
        "egress_allow_loopback). Link-local and cloud-metadata addresses are refused unless "
        "listed here.",
        check=cidr_list,
    )
    api_rate_limit: int = _option(
        0,
        "`convection server`: requests a second each API token may send; over it, 429 "
        "with Retry-After. 0 means no limit.",
        ge=0,
    )
    api_rate_burst: int = _option(
        20, "`convection server`: requests a token may send at once before the rate applies.", ge=1
    )
    token: Secret | None = _option(  # noqa: RUF009 (a dataclasses.field, as every option)
        None, "X-Auth-Token sent to --url (`convection token create`); never shown."
    )

    def limits(self) -> Limits:
        return Limits(
            max_template_size=self.max_template_size,
            max_resources_per_stack=self.max_resources_per_stack,
            max_nested_stack_depth=self.max_nested_stack_depth,
            yaql_limit_iterators=self.yaql_limit_iterators,
            yaql_memory_quota=self.yaql_memory_quota,
            egress=EgressPolicy(
                allow_loopback=self.egress_allow_loopback,
                deny=networks(self.egress_deny),
                allow=networks(self.egress_allow),
            ),
        )

    def db_url(self) -> str:
        if self.db:
            return self.db
        data = Path(platformdirs.user_data_dir("convection"))
        return f"sqlite:///{data / 'convection.db'}"


#: Each option's name -> its description, in declaration order.
OPTIONS: dict[str, str] = {f.name: f.metadata["description"] for f in fields(Settings)}


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
    unknown = sorted(set(data) - set(OPTIONS))
    if unknown:
        known = ", ".join(OPTIONS)
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
    sources = {name: "default" for name in OPTIONS}
    for key, value in _read_file(path, explicit=config_file is not None).items():
        values[key] = value
        sources[key] = f"file:{path}"
    for name in OPTIONS:
        env_name = ENV_PREFIX + name.upper()
        if env_name in environ:
            values[name] = environ[env_name]
            sources[name] = f"env:{env_name}"
    for name, value in (flags or {}).items():
        if value is not None:
            values[name] = value
            sources[name] = "flag"
    settings = _plain(values)
    if settings is None:
        settings = _validated(values, sources)
    return Effective(settings, sources)


#: A decimal integer as pydantic reads it from a string, and Python too.
_INTEGER = re.compile(r"-?[0-9]{1,18}")
#: What :func:`_plain_value` returns for a value it leaves to pydantic.
_UNSURE = object()


def _plain_value(kind: str, ge: int | None, check: Any, value: Any) -> Any:
    """``value`` validated, if it is a plain one of its kind (a string for
    a string, an int or a decimal string for an int, within bounds, passing
    its check); otherwise :data:`_UNSURE`."""
    if kind == "int":
        if type(value) is str and _INTEGER.fullmatch(value):
            value = int(value)
        if type(value) is not int or (ge is not None and value < ge):
            return _UNSURE
        return value
    if kind == "bool":
        if type(value) is str:
            value = _BOOLEANS.get(value.lower(), value)
        return value if type(value) is bool else _UNSURE
    if value is None and kind.endswith(" | None"):
        return None
    if type(value) is not str:
        return _UNSURE
    if kind == "Secret | None":
        return Secret(value)
    if check is not None:
        try:
            return check(value)
        except ValueError:
            return _UNSURE
    return value


def _plain(values: Mapping[str, Any]) -> Settings | None:
    """The settings, if every value is plain (see :func:`_plain_value`):
    what pydantic would make of them, without importing it (its import and
    the model's build cost more than the rest of ``config show``). None
    for anything else, which :func:`_validated` validates, or explains."""
    kinds = {f.name: f for f in fields(Settings)}
    given: dict[str, Any] = {}
    for name, value in values.items():
        spec = kinds.get(name)
        if spec is None:
            return None
        checked = _plain_value(str(spec.type), spec.metadata["ge"], spec.metadata["check"], value)
        if checked is _UNSURE:
            return None
        given[name] = checked
    return Settings(**given)


def _validated(values: Mapping[str, Any], sources: Mapping[str, str]) -> Settings:
    """The settings as pydantic validates ``values``, or every problem."""
    from pydantic import SecretStr, ValidationError

    try:
        model = _model().model_validate(values)
    except ValidationError as exc:
        problems = "; ".join(_problem(e, sources) for e in exc.errors())
        raise InvalidInput.single(f"invalid configuration: {problems}") from None
    given: dict[str, Any] = {}
    for name in OPTIONS:
        value = getattr(model, name)
        given[name] = Secret(value.get_secret_value()) if isinstance(value, SecretStr) else value
    return Settings(**given)


@functools.cache
def _model() -> type[BaseModel]:
    """:class:`Settings` as a pydantic model: types, defaults, bounds, checks."""
    from pydantic import ConfigDict, Field, SecretStr, create_model, field_validator

    types: dict[str, Any] = {
        "str": str,
        "int": int,
        "bool": bool,
        "str | None": str | None,
        "Secret | None": SecretStr | None,
    }
    definitions: dict[str, Any] = {}
    validators: dict[str, Any] = {}
    for f in fields(Settings):
        definitions[f.name] = (types[str(f.type)], Field(f.default, ge=f.metadata["ge"]))
        if f.metadata["check"] is not None:
            validators[f"_check_{f.name}"] = field_validator(f.name)(_checker(f.metadata["check"]))
    model: type[BaseModel] = create_model(
        "Settings",
        __config__=ConfigDict(extra="forbid", frozen=True),
        __validators__=validators,
        **definitions,
    )
    return model


def _checker(check: Callable[[str | None], str | None]) -> Callable[[Any, str | None], str | None]:
    def run(cls: Any, value: str | None) -> str | None:
        return check(value)

    return run


def _problem(error: Any, sources: Mapping[str, str]) -> str:
    name = ".".join(str(p) for p in error["loc"])
    origin = sources.get(str(error["loc"][0]), "?")
    return f"{name} ({origin}): {error['msg']}"
