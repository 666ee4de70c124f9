"""CloudFormation-format templates through Heat's API, as python-heatclient
sends them: validate, create, nested stacks that mix the two formats, the
version list and each version's functions, in Heat's words."""

from __future__ import annotations

import json
from typing import Any

import pytest
from heatclient.client import Client
from heatclient.exc import HTTPBadRequest

#: An AWSTemplateFormatVersion template as Heat's functional tests write them.
CFN = {
    "AWSTemplateFormatVersion": "2010-09-09",
    "Description": "CloudFormation web tier",
    "Parameters": {
        "Env": {"Type": "String", "Default": "prod", "AllowedValues": ["prod", "dev"]},
        "Size": {"Type": "Number", "Default": "4", "MinValue": "1", "MaxValue": "8"},
        "Password": {"Type": "String", "NoEcho": "true", "Default": "s3cret"},
    },
    "Mappings": {"Zones": {"ap-southeast-1": {"Name": "zone-a"}}},
    "Conditions": {"IsProd": {"Fn::Equals": [{"Ref": "Env"}, "prod"]}},
    "Resources": {
        "Word": {"Type": "OS::Heat::RandomString", "Properties": {"length": {"Ref": "Size"}}},
        "Where": {
            "Type": "OS::Heat::Value",
            "Properties": {
                "value": {
                    "Fn::Join": [
                        "/",
                        [
                            {"Ref": "AWS::StackName"},
                            {"Fn::FindInMap": ["Zones", {"Ref": "AWS::Region"}, "Name"]},
                        ],
                    ]
                }
            },
        },
        "DevOnly": {"Type": "OS::Heat::None", "Condition": "IsProd", "DependsOn": "Where"},
    },
    "Outputs": {
        "Where": {"Value": {"Fn::GetAtt": ["Where", "value"]}, "Description": "where"},
        "Tier": {"Value": {"Fn::If": ["IsProd", "production", "development"]}},
        "WordLength": {"Value": {"Fn::Select": [0, [{"Ref": "Size"}]]}},
    },
}

#: A HOT template resource's provider written in CloudFormation, in JSON.
CFN_CHILD = json.dumps(
    {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Parameters": {"Greeting": {"Type": "String"}},
        "Resources": {
            "v": {
                "Type": "OS::Heat::Value",
                "Properties": {"value": {"Fn::Join": [" ", [{"Ref": "Greeting"}, "world"]]}},
            }
        },
        "Outputs": {"said": {"Value": {"Fn::GetAtt": ["v", "value"]}}},
    }
)

HOT_CHILD = """\
heat_template_version: 2018-08-31
parameters:
  word: {type: string}
resources:
  v:
    type: OS::Heat::Value
    properties: {value: {list_join: ['-', [hot, {get_param: word}]]}}
outputs:
  out: {value: {get_attr: [v, value]}}
"""


def _outputs(heat: Client, stack_id: str) -> dict[str, Any]:
    return {o["output_key"]: o["output_value"] for o in heat.stacks.get(stack_id).outputs}


def test_validate_reads_a_cfn_template_as_heat_does(heat: Client) -> None:
    body = heat.stacks.validate(template=CFN)
    assert body["Description"] == "CloudFormation web tier"
    assert body["Parameters"]["Size"] == {
        "Type": "Number",
        "Description": "",
        "Default": "4",
        "NoEcho": "false",
        "Label": "Size",
        "MinValue": 1,
        "MaxValue": 8,
    }
    assert body["Parameters"]["Password"]["NoEcho"] == "true"
    assert body["Parameters"]["Env"]["AllowedValues"] == ["prod", "dev"]


def test_a_cfn_stack_is_created_with_its_pseudo_parameters_and_masking(
    heat: Client, settle: Any
) -> None:
    created = heat.stacks.create(stack_name="cfn-web", template=CFN, parameters={"Size": "6"})
    stack = settle(heat, created["stack"]["id"])
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    assert stack.description == "CloudFormation web tier"
    assert _outputs(heat, stack.id) == {
        "Where": "cfn-web/zone-a",
        "Tier": "production",
        "WordLength": 6,
    }
    params = stack.parameters
    assert params["AWS::StackName"] == "cfn-web"
    assert params["AWS::StackId"].startswith("arn:openstack:heat::")
    assert params["AWS::StackId"].endswith(f":stacks/cfn-web/{stack.id}")
    assert params["AWS::Region"] == "ap-southeast-1"
    assert "OS::stack_name" not in params
    assert params["Password"] == "******" and params["Size"] == "6"
    names = {r.resource_name: r.resource_type for r in heat.resources.list(stack.id)}
    assert names == {
        "Word": "OS::Heat::RandomString",
        "Where": "OS::Heat::Value",
        "DevOnly": "OS::Heat::None",
    }
    assert len(heat.resources.get(stack.id, "Word").attributes["value"]) == 6
    dev = heat.stacks.create(stack_name="cfn-dev", template=CFN, parameters={"Env": "dev"})
    dev_stack = settle(heat, dev["stack"]["id"])
    assert _outputs(heat, dev_stack.id)["Tier"] == "development"
    assert "DevOnly" not in {r.resource_name for r in heat.resources.list(dev_stack.id)}


def test_template_resources_mix_the_two_formats(heat: Client, settle: Any) -> None:
    hot_parent = {
        "heat_template_version": "2018-08-31",
        "resources": {"c": {"type": "child.template", "properties": {"Greeting": "hello"}}},
        "outputs": {"said": {"value": {"get_attr": ["c", "said"]}}},
    }
    created = heat.stacks.create(
        stack_name="hot-over-cfn", template=hot_parent, files={"child.template": CFN_CHILD}
    )
    stack = settle(heat, created["stack"]["id"])
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    assert _outputs(heat, stack.id) == {"said": "hello world"}
    cfn_parent = {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Resources": {"h": {"Type": "hot_child.yaml", "Properties": {"word": "w1"}}},
        "Outputs": {"out": {"Value": {"Fn::GetAtt": ["h", "out"]}}},
    }
    created = heat.stacks.create(
        stack_name="cfn-over-hot", template=cfn_parent, files={"hot_child.yaml": HOT_CHILD}
    )
    stack = settle(heat, created["stack"]["id"])
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    assert _outputs(heat, stack.id) == {"out": "hot-w1"}
    [owner] = heat.resources.list(stack.id)
    assert owner.resource_type == "hot_child.yaml"
    template = heat.stacks.template(stack.id)
    assert template["AWSTemplateFormatVersion"] == "2010-09-09"  # stored as written


def test_a_facade_parameter_the_cfn_child_requires_is_named(heat: Client) -> None:
    hot_parent = {
        "heat_template_version": "2018-08-31",
        "resources": {"c": {"type": "child.template"}},
    }
    with pytest.raises(HTTPBadRequest) as caught:
        heat.stacks.create(
            stack_name="cfn-missing", template=hot_parent, files={"child.template": CFN_CHILD}
        )
    assert "Greeting" in str(caught.value)


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"Resorces": {}}, "The template section is invalid: Resorces"),
        (
            {"Resources": {"r": {"Properties": {}}}},
            "Every Resource object must contain a Type member.",
        ),
        (
            {"Outputs": {"o": {"Value": {"Fn::GetAtt": ["Word"]}}}},
            'Arguments to "Fn::GetAtt" must be of the form [resource_name, attribute]',
        ),
        (
            {"Conditions": {"c": {"Fn::Not": "IsProd"}}},
            'Arguments to "Fn::Not" must be of the form: [condition]',
        ),
        (
            {"Parameters": {"p": {"Type": "string"}}},
            "Invalid type (string)",
        ),
    ],
)
def test_bad_cfn_templates_get_heats_words(
    heat: Client, change: dict[str, Any], needle: str
) -> None:
    with pytest.raises(HTTPBadRequest) as caught:
        heat.stacks.validate(template={**CFN, **change})
    assert needle in str(caught.value)


def test_versions_and_functions_list_the_cfn_formats(heat: Client) -> None:
    versions = {v.version: v.type for v in heat.template_versions.list()}
    assert versions["AWSTemplateFormatVersion.2010-09-09"] == "cfn"
    assert versions["HeatTemplateFormatVersion.2012-12-12"] == "cfn"
    assert versions["heat_template_version.2021-04-16"] == "hot"
    found = heat.template_versions.get(
        "AWSTemplateFormatVersion.2010-09-09", with_condition_func=True
    )
    described = {f.functions: f.description for f in found}
    assert described["Fn::FindInMap"] == "A function for resolving keys in the template mappings."
    assert described["Fn::GetAtt"] == "A function for resolving resource attributes."
    assert described["Fn::If"] == (
        "A function to return corresponding value based on condition evaluation."
    )
    assert described["Fn::Not"] == "A function that acts as a NOT operator on a condition."
    older = {
        f.functions for f in heat.template_versions.get("HeatTemplateFormatVersion.2012-12-12")
    }
    assert "Fn::If" not in older and "Fn::FindInMap" in older


def test_validate_show_nested_reads_a_cfn_parents_children(heat: Client) -> None:
    cfn_parent = {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Resources": {"h": {"Type": "hot_child.yaml", "Properties": {"word": "w1"}}},
    }
    body = heat.stacks.validate(
        template=cfn_parent, files={"hot_child.yaml": HOT_CHILD}, show_nested=True
    )
    nested = body["NestedParameters"]["h"]
    assert nested["Type"] == "hot_child.yaml"
    assert nested["Parameters"]["word"]["Value"] == "w1"
