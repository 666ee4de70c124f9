"""Resource types by name: the built-ins plus third-party plugins.

Third-party packages register types through the ``convection.resources``
entry point group. An entry point may name a :class:`ResourcePlugin`
subclass, or a callable returning an iterable of them (for a package with
many types); the type name comes from each class's ``type_name``, so entry
point names are only labels (``OS::`` names cannot be keys in setup.cfg).

Lookups are explicit: nothing here is consulted behind a constructor's back
(Heat's ``Resource.__new__``). Two types claiming one name is an error, never
a silent override, and a plugin that fails to load is reported with the
entry point that named it: a stack must not quietly lose a resource type.
"""

from __future__ import annotations

import functools
import importlib.metadata
import inspect
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from convection.common import ConvectionError, Diagnostic, Diagnostics, Path, Severity, suggest
from convection.model import FacadeProperty, TypeInterface
from convection.resources import openstack_catalog
from convection.resources._plugin import ResourcePlugin
from convection.resources._schema import BASE_ATTRIBUTES, HEAT_TYPE_NAMES

ENTRY_POINT_GROUP = "convection.resources"


class DuplicateResourceType(ConvectionError):
    """Two plugin classes claim the same type name."""

    def __init__(self, type_name: str, existing: type[Any], new: type[Any]) -> None:
        self.type_name = type_name
        self.existing = existing
        self.new = new
        super().__init__(
            f"resource type {type_name} is already registered by "
            f"{_qualname(existing)}; {_qualname(new)} cannot register it again"
        )

    def __repr__(self) -> str:
        return f"DuplicateResourceType({self.type_name!r})"


class PluginLoadError(ConvectionError):
    """One or more ``convection.resources`` entry points could not be loaded."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("cannot load resource plugins: " + "; ".join(problems))


def _qualname(cls: type[Any]) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


class TypeRegistry:
    """A mapping of type name to plugin class, filled explicitly."""

    __slots__ = ("_types",)

    def __init__(self, plugins: Iterable[type[ResourcePlugin]] = ()) -> None:
        self._types: dict[str, type[ResourcePlugin]] = {}
        for cls in plugins:
            self.register(cls)

    def register(self, cls: type[ResourcePlugin]) -> type[ResourcePlugin]:
        """Add ``cls`` under its ``type_name``; returns it, so it can decorate.

        Registering the same class again is harmless; a different class under
        a taken name raises :class:`DuplicateResourceType`.
        """
        if not (inspect.isclass(cls) and issubclass(cls, ResourcePlugin)):
            raise TypeError(f"{cls!r} is not a ResourcePlugin subclass")
        name = getattr(cls, "type_name", None)
        if not isinstance(name, str) or not name:
            raise TypeError(f"{_qualname(cls)} has no type_name")
        existing = self._types.get(name)
        if existing is not None and existing is not cls:
            raise DuplicateResourceType(name, existing, cls)
        self._types[name] = cls
        return cls

    def get(self, type_name: str) -> type[ResourcePlugin] | None:
        return self._types.get(type_name)

    def names(self) -> list[str]:
        """Every registered type name, sorted."""
        return sorted(self._types)

    def __contains__(self, type_name: object) -> bool:
        return type_name in self._types

    def __len__(self) -> int:
        return len(self._types)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __repr__(self) -> str:
        return f"<TypeRegistry {len(self._types)} types>"

    def catalog(self, *, strict: bool = True, stack_timeout: float | None = None) -> TypeCatalog:
        """The view the definition builder validates templates against."""
        return TypeCatalog(self, strict=strict, stack_timeout=stack_timeout)

    def load_entry_points(self, entry_points: Iterable[importlib.metadata.EntryPoint]) -> None:
        """Register every type the given entry points provide.

        All of them are tried before failing, so one error report lists every
        broken plugin; the types that did load stay registered.
        """
        problems: list[str] = []
        for ep in entry_points:
            try:
                for cls in _plugins_of(ep.load()):
                    self.register(cls)
            except (DuplicateResourceType, TypeError) as exc:
                problems.append(f"{ep.name} ({ep.value}): {exc}")
            except Exception as exc:  # an import error in someone else's package
                problems.append(f"{ep.name} ({ep.value}): {type(exc).__name__}: {exc}")
        if problems:
            raise PluginLoadError(problems)


@dataclass(frozen=True, slots=True)
class TypeInfo:
    """One type as template validation sees it (``definition.TypeInfo``)."""

    plugin: type[ResourcePlugin]
    strict: bool = True
    stack_timeout: float | None = None

    @property
    def attribute_names(self) -> Collection[str] | None:
        return self.plugin.attribute_names()

    @property
    def ignores_properties(self) -> bool:
        """A type that takes any properties and reads none (OS::Heat::None,
        whose ``reparse`` in Heat drops them): a create does not resolve
        them (``definition._validate_values``)."""
        return self.plugin.accepts_anything

    def interface(self) -> TypeInterface:
        """The declared schemas, as Heat's facade check reads a class's
        (``properties_schema``, and ``attributes_schema`` with the base
        attributes): a template standing in for this type must fit them."""
        props = {
            name: FacadeProperty(schema.heat_type, schema.required)
            for name, schema in self.plugin.properties_schema.items()
        }
        attrs = frozenset(self.plugin.attributes_schema) | frozenset(BASE_ATTRIBUTES)
        return TypeInterface(props, attrs)

    def validate_properties(self, properties: Any, path: Path, diags: Diagnostics) -> None:
        _, found = self.plugin.validate(
            properties, path, strict=self.strict, stack_timeout=self.stack_timeout
        )
        diags.extend(found)


@dataclass(frozen=True, slots=True)
class TypeCatalog:
    """Lookups for template validation (``definition.TypeCatalog``), with the
    validation mode fixed once for the whole template."""

    registry: TypeRegistry
    strict: bool = True
    stack_timeout: float | None = None

    def names(self) -> list[str]:
        """Every type name a template may use here (for suggestions)."""
        return sorted({*self.registry.names(), *openstack_catalog.names(include_hidden=False)})

    def lookup(self, type_name: str) -> TypeInfo | OpenStackTypeInfo | None:
        plugin = self.registry.get(type_name)
        if plugin is not None:
            return TypeInfo(plugin, self.strict, self.stack_timeout)
        known = openstack_catalog.lookup(type_name)
        if known is None or not known.registered_by_default:
            return None
        return OpenStackTypeInfo(known, self.strict)


@dataclass(frozen=True, slots=True)
class OpenStackTypeInfo:
    """A Heat OpenStack type Convection knows by schema only.

    Validation matches Heat's; creating one needs a resource_registry
    mapping to a type Convection implements, so strict (create-time)
    validation says so.
    """

    known: openstack_catalog.OpenStackType
    strict: bool = True

    @property
    def attribute_names(self) -> Collection[str] | None:
        k = self.known
        if k.placeholder or k.dynamic_attributes or k.attributes is None:
            return None
        return k.attributes

    def interface(self) -> TypeInterface:
        """What Heat's facade check reads of the type: its schemas as
        catalogued (a part not catalogued is not checked); a placeholder is
        Heat's NoneResource, which declares nothing."""
        k = self.known
        if k.placeholder:
            return TypeInterface({}, frozenset(BASE_ATTRIBUTES))
        props = None
        if k.properties is not None:
            props = {
                name: FacadeProperty(HEAT_TYPE_NAMES[spec.type], spec.required)
                for name, spec in k.properties.items()
            }
        return TypeInterface(props, k.attributes)

    def validate_properties(self, properties: Any, path: Path, diags: Diagnostics) -> None:
        severity = Severity.ERROR if self.strict else Severity.WARNING
        if self.strict:
            diags.add(
                Diagnostic(
                    f"{self.known.name} is an OpenStack resource type, which Convection "
                    "cannot create; map it in the environment's resource_registry to a "
                    "type Convection implements (or to a template)",
                    (*path[:-1], "type"),
                )
            )
        if not isinstance(properties, dict):
            return
        for key in properties:
            if not self.known.accepts_property(key):
                hint = suggest(key, self.known.properties or {})
                diags.add(Diagnostic(f"Unknown Property {key}{hint}", (*path, key)))
        for name in self.known.missing_required(properties):
            diags.add(Diagnostic(f"Property {name} not assigned", (*path, name), severity=severity))


def _plugins_of(obj: Any) -> Iterable[Any]:
    if inspect.isclass(obj):
        return (obj,)
    if callable(obj):
        result = obj()
        if isinstance(result, Iterable):
            return list(result)
        raise TypeError("an entry point function must return an iterable of plugin classes")
    raise TypeError(f"{obj!r} is neither a plugin class nor a function returning them")


def builtin_plugins() -> tuple[type[ResourcePlugin], ...]:
    """The types Convection ships, Heat's utility types and the test types."""
    from convection.resources.heat.autoscaling import AutoScalingGroup, ScalingPolicy
    from convection.resources.heat.delay import Delay
    from convection.resources.heat.none import NoneResource
    from convection.resources.heat.random_string import RandomString
    from convection.resources.heat.resource_chain import ResourceChain
    from convection.resources.heat.resource_group import ResourceGroup
    from convection.resources.heat.stack import Stack
    from convection.resources.heat.test_resource import TestResource
    from convection.resources.heat.value import Value
    from convection.resources.heat.wait_condition import AWSWaitCondition, HeatWaitCondition
    from convection.resources.heat.wait_condition_handle import (
        AWSWaitConditionHandle,
        HeatWaitConditionHandle,
        UpdateWaitConditionHandle,
    )
    from convection.resources.mistral import (
        MistralCronTrigger,
        MistralExternalResource,
        MistralWorkflow,
    )
    from convection.resources.nodes import LocalNodeResource, SSHHostResource
    from convection.resources.nodes.deployed_server import DeployedServer
    from convection.resources.software import plugins as software_plugins
    from convection.resources.testing import LedgerResource

    return (
        NoneResource,
        Value,
        RandomString,
        Stack,
        Delay,
        TestResource,
        LedgerResource,
        HeatWaitConditionHandle,
        HeatWaitCondition,
        UpdateWaitConditionHandle,
        AWSWaitConditionHandle,
        AWSWaitCondition,
        LocalNodeResource,
        SSHHostResource,
        DeployedServer,
        ResourceGroup,
        ResourceChain,
        AutoScalingGroup,
        ScalingPolicy,
        MistralWorkflow,
        MistralExternalResource,
        MistralCronTrigger,
        *software_plugins(),
    )


def installed_entry_points() -> list[importlib.metadata.EntryPoint]:
    return list(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


@functools.cache
def default_registry() -> TypeRegistry:
    """The built-ins plus every installed plugin, loaded once per process."""
    registry = TypeRegistry(builtin_plugins())
    registry.load_entry_points(installed_entry_points())
    return registry
