"""CloudFormation-format templates: the same parser as HOT, Heat's rules and words.

Fixtures are written the way Heat's own CloudFormation tests write them
(``heat/tests/test_template.py``, ``heat/tests/test_parameters.py``): YAML
with ``AWSTemplateFormatVersion`` or ``HeatTemplateFormatVersion``, and JSON.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest

from convection.common import Diagnostics, InvalidInput
from convection.hot import functions
from convection.hot.loader import load
from convection.hot.template import Template, parse_template
from convection.model import StackIdentity, StackInputs, compile_stack

WEB = """\
AWSTemplateFormatVersion: '2010-09-09'
Description: A web tier
Parameters:
  Size:
    Type: Number
    Default: 3
    MinValue: 1
    MaxValue: 10
    ConstraintDescription: between one and ten
  Env:
    Type: String
    Default: prod
    AllowedValues: [prod, dev]
  Password:
    Type: String
    NoEcho: 'true'
    Default: hunter2
Mappings:
  Zones:
    ap-southeast-1: {Name: z1}
Conditions:
  IsProd: {'Fn::Equals': [{Ref: Env}, prod]}
  IsDev: {'Fn::Not': [IsProd]}
  Both: {'Fn::And': [IsProd, {'Fn::Or': [IsDev, true]}]}
Resources:
  Word:
    Type: OS::Heat::RandomString
    Properties:
      length: {Ref: Size}
  Joined:
    Type: OS::Heat::Value
    DependsOn: Word
    Properties:
      value:
        'Fn::Join':
        - '-'
        - - {Ref: 'AWS::StackName'}
          - {'Fn::FindInMap': [Zones, {Ref: 'AWS::Region'}, Name]}
          - {'Fn::GetAtt': [Word, value]}
  DevOnly:
    Type: OS::Heat::None
    Condition: IsDev
Outputs:
  Out:
    Value: {'Fn::GetAtt': [Joined, value]}
    Description: the joined value
  Which:
    Value: {'Fn::If': [IsProd, prod-tier, dev-tier]}
"""


def parse(text: str, name: str = "t.yaml") -> tuple[Template | None, Diagnostics]:
    return parse_template(load(textwrap.dedent(text), name))


def errors(text: str) -> list[str]:
    return [str(d) for d in parse(text)[1] if d.is_error]


def compiled(text: str, **parameters: Any) -> Any:
    doc = load(textwrap.dedent(text), "t.yaml")
    identity = StackIdentity("web", "7f3c", "demo")
    return compile_stack(StackInputs(doc, parameters=parameters), identity=identity)


def test_a_cfn_template_is_read_with_its_sections_and_functions() -> None:
    template, diags = parse(WEB)
    assert not diags.has_errors, [str(d) for d in diags]
    assert template is not None
    assert (template.version.key, template.version.format) == (
        "AWSTemplateFormatVersion.2010-09-09",
        "cfn",
    )
    assert template.description == "A web tier"
    assert template.resources["Joined"].depends_on == ("Word",)
    assert template.parameters["Password"].hidden
    assert template.parameters["Size"].type == "number"
    assert isinstance(template.outputs["Which"].value, functions.Macro)
    assert template.raw["Resources"]["Word"]["Type"] == "OS::Heat::RandomString"


def test_its_definition_has_aws_pseudo_parameters_conditions_and_mappings() -> None:
    definition = compiled(WEB).definition
    params = definition.parameters
    assert params.value("AWS::StackName") == "web"
    assert params.value("AWS::StackId") == "arn:openstack:heat::demo:stacks/web/7f3c"
    assert params.value("AWS::Region") == "ap-southeast-1"
    assert "OS::stack_name" not in params
    assert definition.conditions == {"IsProd": True, "IsDev": False, "Both": True}
    assert set(definition.resources) == {"Word", "Joined"}  # DevOnly is switched off
    assert definition.resources["Joined"].requires == ("Word",)
    assert definition.outputs["Which"].value == "prod-tier"
    dev = compiled(WEB, Env="dev").definition
    assert set(dev.resources) == {"Word", "Joined", "DevOnly"}
    assert dev.outputs["Which"].value == "dev-tier"


def test_find_in_map_resolves_and_names_what_is_missing() -> None:
    call = compiled(WEB).definition.resources["Joined"].properties["value"].args[1][1]
    assert isinstance(call, functions.Function)
    assert call.to_data() == {"Fn::FindInMap": ["Zones", {"Ref": "AWS::Region"}, "Name"]}

    class Regions:
        def parameter(self, name: str) -> str:
            return {"AWS::Region": "ap-southeast-1"}[name]

    assert functions.resolve(call, Regions()) == "z1"  # type: ignore[arg-type]
    with pytest.raises(InvalidInput) as caught:
        compiled(WEB.replace("[Zones, {Ref: 'AWS::Region'}, Name]", "[Zones, nowhere, Name]"))
    (err,) = (str(d) for d in caught.value.diagnostics)
    assert "Resources.Joined.Properties.value.Fn::Join[1][1]" in err
    assert "key 'nowhere' not found in Mappings" in err


def test_the_older_heat_format_has_no_conditions() -> None:
    template, diags = parse(
        """\
        HeatTemplateFormatVersion: '2012-12-12'
        Resources:
          r:
            Type: OS::Heat::None
            Metadata: {'Fn::Select': [1, [a, b]]}
        """
    )
    assert not diags.has_errors and template is not None
    assert template.version.key == "HeatTemplateFormatVersion.2012-12-12"
    (err,) = errors("HeatTemplateFormatVersion: '2012-12-12'\nConditions: {c: true}\n")
    assert err == "t.yaml:2:1 Conditions: The template section is invalid: Conditions"
    template, diags = parse(
        "HeatTemplateFormatVersion: '2012-12-12'\nOutputs:\n  o: {Value: {'Fn::If': [c, 1, 2]}}\n"
    )
    assert template is not None and not isinstance(template.outputs["o"].value, functions.Macro)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "AWSTemplateFormatVersion: '2010-09-09'\nheat_template_version: 2016-10-14\n",
            "The template version is invalid: Ambiguous versions "
            "(heat_template_version, AWSTemplateFormatVersion)",
        ),
        (
            "AWSTemplateFormatVersion: '2012-12-12'\n",
            "t.yaml:1:1 AWSTemplateFormatVersion: The template version is invalid: "
            '"AWSTemplateFormatVersion: 2012-12-12". '
            '"AWSTemplateFormatVersion" should be one of: 2010-09-09',
        ),
        (
            "AWSTemplateFormatVersion: '2010-09-09'\nresources: {}\n",
            "t.yaml:2:1 resources: The template section is invalid: resources",
        ),
    ],
)
def test_version_and_section_errors(text: str, expected: str) -> None:
    (err,) = errors(text)
    assert expected in err


def test_errors_name_the_place_as_the_file_spells_it() -> None:
    found = errors(
        """\
        AWSTemplateFormatVersion: '2010-09-09'
        Resources:
          bare: plain
          untyped: {Properties: {}}
          web:
            Type: OS::Heat::Value
            Properties: [1]
          joined:
            Type: OS::Heat::Value
            Properties:
              value: {'Fn::GetAtt': [web]}
        """
    )
    assert found == [
        "t.yaml:3:3 Resources.bare: Resources must contain Resource. "
        "Found a [<class 'str'>] instead",
        "t.yaml:4:3 Resources.untyped: Every Resource object must contain a Type member.",
        "t.yaml:7:5 Resources.web.Properties: Resource web properties type must be object",
        "t.yaml:11:7 Resources.joined.Properties.value: "
        'Arguments to "Fn::GetAtt" must be of the form [resource_name, attribute]',
    ]


def test_keys_heat_ignores_are_warned_about() -> None:
    template, diags = parse(
        """\
        AWSTemplateFormatVersion: '2010-09-09'
        Resources:
          r: {Type: OS::Heat::None, Typo: 1}
        Outputs:
          o: {Value: 1, Extra: 2}
        """
    )
    assert not diags.has_errors and template is not None
    shown = sorted(f"{d.where()} {d.message}" for d in diags.warnings)
    assert shown == [
        't.yaml:3:29 Resources.r.Typo "Typo" is not a key Heat reads here; it is ignored',
        't.yaml:5:17 Outputs.o.Extra "Extra" is not a key Heat reads here; it is ignored',
    ]


def test_a_hot_function_is_plain_data_with_a_warning() -> None:
    template, diags = parse(
        """\
        AWSTemplateFormatVersion: '2010-09-09'
        Resources:
          r: {Type: OS::Heat::Value, Properties: {value: {get_param: x}}}
        """
    )
    assert template is not None and not diags.has_errors
    assert template.resources["r"].properties == {"value": {"get_param": "x"}}
    (warning,) = diags.warnings
    assert "'get_param' is not a function in AWSTemplateFormatVersion 2010-09-09" in str(warning)
    assert "HOT function" in str(warning)


@pytest.mark.parametrize(
    ("schema", "needle"),
    [
        ("{Type: string}", "Parameters.p.Type: Invalid type (string)"),
        ("{Default: 1}", "Parameters.p: Missing parameter type for parameter: p"),
        ("{Type: String, hidden: true}", "Invalid key 'hidden' for parameter (p)"),
        ("{Type: String, MinValue: 1}", "Range constraint invalid for String"),
        ("{Type: Number, MinLength: 1}", "Length constraint invalid for Number"),
        ("{Type: Number, MaxValue: x}", "Parameters.p.MaxValue: could not convert string"),
        (
            "{Type: String, Default: abc, AllowedPattern: '[0-9]+'}",
            "Parameters.p.Default: Parameter 'p' is invalid: Invalid default abc",
        ),
        ("7", "Parameters.p: Invalid parameter (p), expected a mapping"),
    ],
)
def test_parameter_schema_errors(schema: str, needle: str) -> None:
    found = errors(f"AWSTemplateFormatVersion: '2010-09-09'\nParameters:\n  p: {schema}\n")
    assert any(needle in e for e in found), found


def test_parameter_values_are_checked_as_heat_checks_them() -> None:
    text = """\
        AWSTemplateFormatVersion: '2010-09-09'
        Parameters:
          Size: {Type: Number, MinValue: 1, MaxValue: 10, ConstraintDescription: one to ten}
          Tags: {Type: CommaDelimitedList, Default: 'a,b'}
          Enabled: {Type: Boolean, Default: 'yes'}
          Name: {Type: String}
        Resources: {}
        """
    with pytest.raises(InvalidInput) as caught:
        compiled(text, Size="11", Name="n")
    assert "Parameter 'Size' is invalid: one to ten" in str(caught.value)
    with pytest.raises(InvalidInput) as missing:
        compiled(text, Size="2")
    assert "The Parameter (Name) was not provided." in str(missing.value)
    values = compiled(text, Size="2", Name="n").definition.parameters
    assert (values.value("Size"), values.value("Tags"), values.value("Enabled")) == (
        2,
        ["a", "b"],
        True,
    )


def test_condition_functions_and_refs_in_conditions() -> None:
    (err,) = errors(
        """\
        AWSTemplateFormatVersion: '2010-09-09'
        Conditions:
          Bad: {'Fn::Not': IsProd}
        """
    )
    assert (
        err == 't.yaml:3:3 Conditions.Bad: Arguments to "Fn::Not" must be of the form: [condition]'
    )
    with pytest.raises(InvalidInput) as caught:
        compiled(
            """\
            AWSTemplateFormatVersion: '2010-09-09'
            Conditions:
              ByResource: {'Fn::Equals': [{Ref: r}, x]}
            Resources:
              r: {Type: OS::Heat::None, Condition: ByResource}
            """
        )
    assert 'The specified reference "r" (in unknown) is incorrect.' in str(caught.value)
    (err,) = errors(
        """\
        AWSTemplateFormatVersion: '2010-09-09'
        Conditions:
          Joined: {'Fn::Join': [',', [a]]}
        """
    )
    assert 'The function "Fn::Join" is invalid in this context' in err


def test_a_json_template_reads_like_its_yaml() -> None:
    data = {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Parameters": {"Name": {"Type": "String", "Default": "n"}},
        "Resources": {
            "r": {
                "Type": "OS::Heat::Value",
                "Properties": {"value": {"Fn::Join": ["", ["x-", {"Ref": "Name"}]]}},
            }
        },
        "Outputs": {"o": {"Value": {"Fn::GetAtt": ["r", "value"]}}},
    }
    doc = load(json.dumps(data, indent=2), "t.json")
    definition = compile_stack(StackInputs(doc)).definition
    value = definition.resources["r"].properties["value"]

    class Names:
        def parameter(self, name: str) -> str:
            return definition.parameters.value(name)  # type: ignore[no-any-return]

    assert functions.resolve(value, Names()) == "x-n"  # type: ignore[arg-type]
    bad = json.dumps({**data, "Resources": {"r": {"Type": 5}}}, indent=2)
    with pytest.raises(InvalidInput) as caught:
        compile_stack(StackInputs(load(bad, "t.json")))
    where = [str(d) for d in caught.value.diagnostics if "Resources.r.Type" in str(d)]
    assert where == ["t.json:11:7 Resources.r.Type: Resource r type type must be string"]
