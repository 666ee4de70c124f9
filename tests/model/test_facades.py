"""A template standing in for a class type is checked against it, as Heat's
``TemplateResource._validate_against_facade`` (heat/engine/resources/
template_resource.py) checks it: at create (strict), not at
template-validate, which Heat runs without ``TemplateResource.validate``."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from convection.common.errors import InvalidInput
from convection.model.compiler import Compiled, StackInputs, compile_stack
from convection.resources.registry import default_registry

HOT = "heat_template_version: 2018-08-31\n"

#: A provider that fits OS::Heat::RandomString: its Integer ``length`` is a
#: number parameter (Heat's ``allowed_param_prop_type``), and ``value`` is an
#: output; ``show`` is every resource's, so no output is needed for it.
RANDOM = HOT + textwrap.dedent(
    """\
    parameters:
      length: {type: number, default: 8}
      salt: {type: string, default: ""}
    outputs:
      value: {value: fixed}
    """
)

PARENT = HOT + textwrap.dedent(
    """\
    resources:
      pick:
        type: OS::Heat::RandomString
    """
)

MAPPED = "resource_registry:\n  OS::Heat::RandomString: random.yaml\n"


def compile_parent(
    provider: str,
    *,
    parent: str = PARENT,
    env: str = MAPPED,
    strict: bool = True,
    files: dict[str, str] | None = None,
) -> Compiled:
    inputs = StackInputs.from_text(
        parent,
        name="t.yaml",
        environments=[("env.yaml", env)],
        files={"random.yaml": provider, **(files or {})},
    )
    return compile_stack(inputs, catalog=default_registry().catalog(strict=strict), strict=strict)


def errors(provider: str, **kwargs: Any) -> list[str]:
    with pytest.raises(InvalidInput) as caught:
        compile_parent(provider, **kwargs)
    return [str(d) for d in caught.value.diagnostics if d.is_error]


AT_TYPE = "t.yaml:4:5 resources.pick.type: "


def test_a_provider_that_fits_its_facade_is_accepted() -> None:
    compiled = compile_parent(RANDOM)
    assert compiled.definition.resources["pick"].resolved_type == "random.yaml"
    assert not compiled.warnings


def test_a_facade_attribute_the_provider_has_no_output_for_fails() -> None:
    provider = RANDOM.replace("  value: {value: fixed}\n", "  other: {value: fixed}\n")
    assert errors(provider) == [
        AT_TYPE + "Attribute value for facade OS::Heat::RandomString missing in provider"
    ]


def test_a_property_of_another_type_fails_with_both_types() -> None:
    provider = RANDOM.replace("salt: {type: string", "salt: {type: number")
    provider = provider.replace('default: ""', "default: 1")
    assert errors(provider) == [
        AT_TYPE + "Property salt type mismatch between facade OS::Heat::RandomString "
        "(String) and provider (Number)"
    ]


def test_an_integer_property_is_not_supplied_by_a_string_parameter() -> None:
    provider = RANDOM.replace("length: {type: number, default: 8}", "length: {type: string}")
    assert errors(provider, parent=PARENT + "    properties: {length: '8'}\n") == [
        AT_TYPE + "Property length type mismatch between facade OS::Heat::RandomString "
        "(Integer) and provider (String)"
    ]


def test_a_parameter_the_provider_requires_must_be_known_to_the_facade() -> None:
    provider = RANDOM.replace("parameters:\n", "parameters:\n  seed: {type: string}\n")
    found = errors(provider, parent=PARENT + "    properties: {seed: s}\n")
    assert found == [
        AT_TYPE + "Provider requires property seed unknown in facade OS::Heat::RandomString"
    ]


def test_parameter_defaults_make_a_provider_parameter_optional() -> None:
    provider = RANDOM.replace("parameters:\n", "parameters:\n  seed: {type: string}\n")
    compile_parent(provider, env=MAPPED + "parameter_defaults: {seed: s}\n")


def test_a_property_the_facade_requires_must_be_a_provider_parameter() -> None:
    parent = HOT + textwrap.dedent(
        """\
        resources:
          web:
            type: OS::Nova::Server
            properties: {image: cirros}
        """
    )
    server = HOT + "parameters:\n  image: {type: string}\noutputs: {}\n"
    found = errors(
        server,
        parent=parent,
        env="resource_registry:\n  OS::Nova::Server: server.yaml\n",
        files={"server.yaml": server},
    )
    at = "t.yaml:4:5 resources.web.type: "
    required = "Required property flavor for facade OS::Nova::Server missing in provider"
    assert found[0] == at + required
    missing = [f for f in found if "Attribute" in f]
    assert at + "Attribute first_address for facade OS::Nova::Server missing in provider" in missing
    assert not any(" show " in f for f in found)


def test_template_validate_only_warns() -> None:
    provider = RANDOM.replace("  value: {value: fixed}\n", "  other: {value: fixed}\n")
    compiled = compile_parent(provider, strict=False)
    assert [str(w) for w in compiled.warnings] == [
        AT_TYPE + "warning: Attribute value for facade OS::Heat::RandomString missing in provider"
    ]


def test_a_per_resource_template_has_the_class_as_its_facade() -> None:
    env = "resource_registry:\n  resources:\n    pick:\n      OS::Heat::RandomString: random.yaml\n"
    provider = RANDOM.replace("  value: {value: fixed}\n", "  other: {value: fixed}\n")
    assert errors(provider, env=env) == [
        AT_TYPE + "Attribute value for facade OS::Heat::RandomString missing in provider"
    ]


def test_an_alias_through_to_the_template_keeps_the_written_type_as_facade() -> None:
    env = "resource_registry:\n  OS::Heat::RandomString: My::Random\n  My::Random: random.yaml\n"
    provider = RANDOM.replace("  value: {value: fixed}\n", "  other: {value: fixed}\n")
    assert errors(provider, env=env) == [
        AT_TYPE + "Attribute value for facade OS::Heat::RandomString missing in provider"
    ]


def test_a_per_resource_template_over_another_has_that_template_as_facade() -> None:
    """Heat's next match for the type is the registry's own template then,
    not the class."""
    env = (
        "resource_registry:\n  OS::Heat::RandomString: wide.yaml\n"
        "  resources:\n    pick:\n      OS::Heat::RandomString: random.yaml\n"
    )
    wide = HOT + "outputs:\n  value: {value: v}\n  extra: {value: e}\n"
    assert errors(RANDOM, env=env, files={"wide.yaml": wide}) == [
        AT_TYPE + "Attribute extra for facade OS::Heat::RandomString missing in provider"
    ]


@pytest.mark.parametrize(
    "parent",
    [
        HOT + "resources:\n  pick:\n    type: random.yaml\n",
        HOT + "resources:\n  pick:\n    type: My::Random\n",
    ],
    ids=["a template path", "an alias no class has"],
)
def test_a_type_no_class_has_has_no_facade(parent: str) -> None:
    """The same file stands in for RandomString elsewhere in the registry,
    and would not fit it; written as itself or as My::Random it has no
    facade (Heat finds no other entry for the type as written)."""
    env = MAPPED + "  My::Random: random.yaml\n"
    provider = HOT + "parameters:\n  seed: {type: string}\n"
    compiled = compile_parent(provider, parent=parent + "    properties: {seed: s}\n", env=env)
    assert not compiled.warnings
