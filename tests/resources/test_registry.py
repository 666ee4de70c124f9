"""The type registry: built-ins, entry points, duplicates."""

from __future__ import annotations

import importlib.metadata
import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest

from convection.resources.api import ResourcePlugin
from convection.resources.registry import (
    ENTRY_POINT_GROUP,
    DuplicateResourceType,
    PluginLoadError,
    TypeRegistry,
    builtin_plugins,
    default_registry,
)
from convection.resources.testing import fake_type

BUILTINS = [
    "AWS::CloudFormation::WaitCondition",
    "AWS::CloudFormation::WaitConditionHandle",
    "Convection::Local::Node",
    "Convection::SSH::Host",
    "Convection::Test::Ledger",
    "OS::Heat::AutoScalingGroup",
    "OS::Heat::CloudConfig",
    "OS::Heat::Delay",
    "OS::Heat::DeployedServer",
    "OS::Heat::MultipartMime",
    "OS::Heat::None",
    "OS::Heat::RandomString",
    "OS::Heat::ResourceChain",
    "OS::Heat::ResourceGroup",
    "OS::Heat::ScalingPolicy",
    "OS::Heat::SoftwareComponent",
    "OS::Heat::SoftwareConfig",
    "OS::Heat::SoftwareDeployment",
    "OS::Heat::SoftwareDeploymentGroup",
    "OS::Heat::SoftwareDeployments",
    "OS::Heat::Stack",
    "OS::Heat::StructuredConfig",
    "OS::Heat::StructuredDeployment",
    "OS::Heat::StructuredDeploymentGroup",
    "OS::Heat::StructuredDeployments",
    "OS::Heat::TestResource",
    "OS::Heat::UpdateWaitConditionHandle",
    "OS::Heat::Value",
    "OS::Heat::WaitCondition",
    "OS::Heat::WaitConditionHandle",
    "OS::Mistral::CronTrigger",
    "OS::Mistral::ExternalResource",
    "OS::Mistral::Workflow",
]


def test_builtins_are_registered_by_name() -> None:
    registry = TypeRegistry(builtin_plugins())
    assert registry.names() == BUILTINS
    none = registry.get("OS::Heat::None")
    assert none is not None and issubclass(none, ResourcePlugin)
    assert registry.get("OS::Nova::Server") is None
    assert "OS::Heat::Value" in registry
    assert len(registry) == len(BUILTINS)


def test_default_registry_is_cached_and_has_builtins() -> None:
    assert default_registry() is default_registry()
    assert set(BUILTINS) <= set(default_registry().names())


def test_register_returns_the_class_and_is_idempotent() -> None:
    registry = TypeRegistry()
    cls = fake_type("My::Thing")
    assert registry.register(cls) is cls
    registry.register(cls)
    assert registry.names() == ["My::Thing"]


def test_duplicate_name_is_an_error_naming_both() -> None:
    registry = TypeRegistry([fake_type("My::Thing")])
    other = fake_type("My::Thing")
    with pytest.raises(DuplicateResourceType) as info:
        registry.register(other)
    assert info.value.type_name == "My::Thing"
    assert "already registered" in str(info.value)


def test_register_rejects_non_plugins() -> None:
    registry = TypeRegistry()
    with pytest.raises(TypeError, match="not a ResourcePlugin"):
        registry.register(object)  # type: ignore[arg-type]

    class Nameless(ResourcePlugin):
        async def create(self, ctx: Any, props: Any) -> None:
            return None

    with pytest.raises(TypeError, match="no type_name"):
        registry.register(Nameless)


# -- entry points, without installing a distribution ----------------------------------

PLUGIN_MODULE = "convection_test_plugins"


class Widget(ResourcePlugin):
    type_name = "Acme::Widget"

    async def create(self, ctx: Any, props: Any) -> None:
        return None


class Gadget(ResourcePlugin):
    type_name = "Acme::Gadget"

    async def create(self, ctx: Any, props: Any) -> None:
        return None


def _all_acme() -> list[type[ResourcePlugin]]:
    return [Widget, Gadget]


def _broken() -> None:
    raise ImportError("no module named acme_sdk")


@pytest.fixture
def plugin_module() -> Iterator[str]:
    """A module the entry points below can name, as an installed package would."""
    module = types.ModuleType(PLUGIN_MODULE)
    module.Widget = Widget  # type: ignore[attr-defined]
    module.all_acme = _all_acme  # type: ignore[attr-defined]
    module.broken = _broken  # type: ignore[attr-defined]
    module.not_a_plugin = 42  # type: ignore[attr-defined]
    module.none_again = fake_type("OS::Heat::None")  # type: ignore[attr-defined]
    sys.modules[PLUGIN_MODULE] = module
    yield PLUGIN_MODULE
    del sys.modules[PLUGIN_MODULE]


def ep(name: str, attr: str) -> importlib.metadata.EntryPoint:
    return importlib.metadata.EntryPoint(
        name=name, value=f"{PLUGIN_MODULE}:{attr}", group=ENTRY_POINT_GROUP
    )


def test_entry_point_naming_a_class(plugin_module: str) -> None:
    registry = TypeRegistry()
    registry.load_entry_points([ep("widget", "Widget")])
    assert registry.get("Acme::Widget") is Widget


def test_entry_point_naming_a_function_of_many(plugin_module: str) -> None:
    registry = TypeRegistry(builtin_plugins())
    registry.load_entry_points([ep("acme", "all_acme")])
    assert {"Acme::Widget", "Acme::Gadget"} <= set(registry.names())


def test_every_broken_entry_point_is_reported_together(plugin_module: str) -> None:
    registry = TypeRegistry(builtin_plugins())
    eps = [
        ep("broken", "broken"),
        ep("odd", "not_a_plugin"),
        ep("clash", "none_again"),
        ep("missing", "nothing_here"),
        ep("widget", "Widget"),
    ]
    with pytest.raises(PluginLoadError) as info:
        registry.load_entry_points(eps)
    problems = info.value.problems
    assert len(problems) == 4
    assert problems[0].startswith("broken (convection_test_plugins:broken): ImportError")
    assert "neither a plugin class" in problems[1]
    assert "OS::Heat::None is already registered" in problems[2]
    assert problems[3].startswith("missing ")
    # The good one still loaded, and the built-in was not overridden.
    assert registry.get("Acme::Widget") is Widget
    assert registry.get("OS::Heat::None") is builtin_plugins()[0]
