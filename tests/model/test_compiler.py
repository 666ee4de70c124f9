"""The whole pure pipeline: template + environment + values → definition and graph."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from convection.common.errors import InvalidInput, LimitExceeded
from convection.common.limits import Limits
from convection.hot import functions
from convection.model.compiler import Compiled, StackInputs, compile_stack
from convection.resources.registry import default_registry
from convection.service.sources import read_inputs

FIXTURES = Path(__file__).parent.parent / "fixtures"
CATALOG = default_registry().catalog(strict=False)


def compile_text(text: str, *envs: str, strict: bool = False, **params: str) -> Compiled:
    inputs = StackInputs.from_text(
        textwrap.dedent(text),
        name="t.yaml",
        environments=[(f"env{i}.yaml", textwrap.dedent(e)) for i, e in enumerate(envs)],
        parameters=params,
    )
    return compile_stack(inputs, catalog=CATALOG, strict=strict)


def failures(text: str, *envs: str, **params: str) -> list[str]:
    with pytest.raises(InvalidInput) as caught:
        compile_text(text, *envs, **params)
    return [str(d) for d in caught.value.diagnostics if not d.upstream]


def multienv(env: str) -> Compiled:
    return compile_stack(
        read_inputs(FIXTURES / "multienv/app.yaml", [FIXTURES / f"multienv/{env}"]),
        catalog=CATALOG,
    )


def test_conditions_switch_resources_and_outputs_per_environment() -> None:
    prod = multienv("env_prod.yaml").definition
    assert prod.conditions["is_prod"] is True
    assert prod.conditions["monitored"] is True
    assert set(prod.resources) == {"app_secret", "settings", "monitor", "failover"}
    assert prod.outputs["monitor_name"].value is not None

    dev = multienv("env_dev.yaml").definition
    assert dev.conditions == {
        "is_prod": False,
        "is_staging": False,
        "production_like": False,
        "monitored": False,
        "single_replica": True,
        "has_tags": False,
    }
    assert set(dev.resources) == {"app_secret", "settings"}
    assert dev.disabled == frozenset({"monitor", "failover"})
    assert dev.outputs["monitor_name"].value is None


def test_if_is_expanded_and_wallaby_if_drops_the_item() -> None:
    dev = multienv("env_dev.yaml").definition
    merged = dev.resources["settings"].properties["value"].args
    assert merged[1] == {}  # the false branch of a three-argument if
    assert merged[2] == {}  # the two-argument if dropped the 'tags' key
    assert dev.resources["app_secret"].properties["length"] == 16
    prod = multienv("env_prod.yaml").definition
    assert set(prod.resources["settings"].properties["value"].args[2]) == {"tags"}
    assert prod.resources["app_secret"].properties["length"] == 32


def test_environment_file_parameters_override_command_line_ones_as_in_heat() -> None:
    inputs = read_inputs(
        FIXTURES / "multienv/app.yaml",
        [FIXTURES / "multienv/env_prod.yaml"],
        ["env_type=dev"],
    )
    definition = compile_stack(inputs, catalog=CATALOG).definition
    assert definition.parameters.value("env_type") == "prod"


def test_implicit_and_explicit_dependencies_make_the_graph() -> None:
    compiled = compile_text(
        """\
        heat_template_version: 2018-08-31
        resources:
          db: {type: OS::Heat::None}
          net: {type: OS::Heat::None}
          app:
            type: OS::Heat::Value
            depends_on: net
            properties:
              value: {list_join: [",", [{get_resource: db}, {get_attr: [net, show]}]]}
          web:
            type: OS::Heat::Value
            properties: {value: {get_attr: [app, value]}}
        """
    )
    assert compiled.definition.resources["app"].requires == ("db", "net")
    assert compiled.graph.topological_order()[-1] == "web"
    assert compiled.graph.required_by("app") == ("web",)


def test_a_cycle_is_an_error_that_prints_it() -> None:
    (err,) = failures(
        """\
        heat_template_version: 2016-10-14
        resources:
          a: {type: OS::Heat::Value, properties: {value: {get_attr: [c, value]}}}
          b: {type: OS::Heat::Value, properties: {value: {get_attr: [a, value]}}}
          c: {type: OS::Heat::Value, properties: {value: {get_attr: [b, value]}}}
        """
    )
    assert "Circular Dependency Found: a -> c -> b -> a" in err
    assert err.startswith("t.yaml:3:3")


def test_a_property_reference_to_a_disabled_resource_is_an_error() -> None:
    """Heat drops only an explicit ``depends_on`` on a switched-off resource
    (tests/model/test_accepted_references.py); ``get_resource`` of one in a
    property is still 'The specified reference ... is incorrect.'"""
    (err,) = failures(
        """\
        heat_template_version: 2016-10-14
        conditions: {never: false}
        resources:
          dark: {type: OS::Heat::None, condition: never}
          lit:
            type: OS::Heat::Value
            depends_on: [dark]
            properties: {value: {get_resource: dark}}
        """
    )
    assert err.startswith("t.yaml:8:18 resources.lit.properties.value: ")
    assert 'The specified reference "dark"' in err


def test_unknown_attribute_of_a_built_in_type_is_an_error() -> None:
    (err,) = failures(
        """\
        heat_template_version: 2016-10-14
        resources:
          a: {type: OS::Heat::RandomString}
          b: {type: OS::Heat::Value, properties: {value: {get_attr: [a, nope]}}}
        """
    )
    assert "The Referenced Attribute (a nope) is incorrect." in err


def test_property_names_are_checked_but_values_only_when_strict() -> None:
    text = """\
        heat_template_version: 2016-10-14
        resources:
          a: {type: OS::Heat::RandomString, properties: {length: lots}}
        """
    assert compile_text(text).warnings  # validate mode: a warning, as Heat skips values
    strict = default_registry().catalog(strict=True)
    with pytest.raises(InvalidInput, match="lots"):
        compile_stack(StackInputs.from_text(textwrap.dedent(text)), catalog=strict)


def test_resource_limit() -> None:
    text = "heat_template_version: 2016-10-14\nresources:\n" + "".join(
        f"  r{i}: {{type: OS::Heat::None}}\n" for i in range(5)
    )
    inputs = StackInputs.from_text(text)
    with pytest.raises(LimitExceeded, match="maximum per stack is 4"):
        compile_stack(inputs, limits=Limits(max_resources_per_stack=4))
    compile_stack(inputs, limits=Limits(max_resources_per_stack=-1))


def test_template_resource_interface_is_checked() -> None:
    inputs = read_inputs(FIXTURES / "nested/parent.yaml", [FIXTURES / "nested/env.yaml"])
    compiled = compile_stack(inputs, catalog=CATALOG)
    assert compiled.definition.resources["api"].requires == ("web",)

    bad = FIXTURES / "nested" / "bad_parent.yaml"
    try:
        bad.write_text(
            "heat_template_version: 2017-09-01\nresources:\n"
            "  t:\n    type: tier.yaml\n    properties: {tier_nam: x, size: small}\n"
            "  u:\n    type: OS::Heat::Value\n    properties: {value: {get_attr: [t, nope]}}\n"
        )
        with pytest.raises(InvalidInput) as caught:
            compile_stack(read_inputs(bad), catalog=CATALOG)
    finally:
        bad.unlink()
    messages = [d.message for d in caught.value.diagnostics]
    assert "Unknown Property tier_nam; did you mean tier_name?" in messages
    # Heat checks get_attr names only against schemas of resources that do
    # not answer attributes themselves; a TemplateResource answers its own
    # (outputs, resource.NAME...), so an unknown one is read as nothing.
    assert not any("Referenced Attribute" in m for m in messages)


@pytest.mark.parametrize(
    "name",
    [
        "software_config_server.yaml",
        "resource_group.yaml",
        "lamp_network.yaml",
        "legacy_2013.yaml",
    ],
)
def test_every_fixture_validates(name: str) -> None:
    compiled = compile_stack(read_inputs(FIXTURES / name), catalog=CATALOG, strict=False)
    for resource in compiled.definition.resources.values():
        assert not any(isinstance(f, functions.Macro) for f in _walk(resource.properties)), (
            "macros must be expanded in the definition"
        )


def _walk(tree: object) -> list[object]:
    out: list[object] = [tree]
    if isinstance(tree, dict):
        for v in tree.values():
            out += _walk(v)
    elif isinstance(tree, list):
        for v in tree:
            out += _walk(v)
    elif isinstance(tree, functions.Function):
        out += _walk(tree.args)
    return out
