"""Config types as data, and the bad input a deployment must explain."""

from __future__ import annotations

import email

from .conftest import Env


def test_software_config_stores_heats_document(env: Env) -> None:
    shown = env.create(
        """
resources:
  cfg:
    type: OS::Heat::SoftwareConfig
    properties:
      config: "echo hi"
      inputs: [{name: a, default: 1}]
      outputs: [{name: b, error_output: true}]
outputs:
  config: {value: {get_attr: [cfg, config]}}
  id: {value: {get_resource: cfg}}
"""
    )
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    record = env.record("cfg")
    doc = record.data["config"]
    assert doc["group"] == "Heat::Ungrouped"
    assert doc["inputs"][0] == {
        "name": "a",
        "default": 1,
        "type": "String",
        "description": None,
        "replace_on_change": False,
    }
    assert doc["outputs"][0]["error_output"] is True
    out = env.outputs()
    assert out["config"] == "echo hi"
    assert out["id"] == record.physical_id


def test_cloud_config_and_multipart_mime(env: Env) -> None:
    shown = env.create(
        """
resources:
  cc:
    type: OS::Heat::CloudConfig
    properties:
      cloud_config: {packages: [postgresql], runcmd: [[echo, hi]]}
  script:
    type: OS::Heat::SoftwareConfig
    properties: {config: "#!/bin/sh\\necho boot\\n"}
  mime:
    type: OS::Heat::MultipartMime
    properties:
      parts:
        - config: {get_resource: cc}
        - config: {get_resource: script}
          filename: boot.sh
          subtype: x-shellscript
        - config: "plain text part"
outputs:
  cc: {value: {get_attr: [cc, config]}}
  mime: {value: {get_attr: [mime, config]}}
"""
    )
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    out = env.outputs()
    assert out["cc"] == "#cloud-config\npackages:\n- postgresql\nruncmd:\n- - echo\n  - hi\n"
    message = email.message_from_string(out["mime"])
    assert message.is_multipart()
    parts = message.get_payload()
    assert [p.get_content_type() for p in parts] == [
        "text/plain",
        "text/x-shellscript",
        "text/plain",
    ]
    assert parts[0].get_payload().startswith("#cloud-config")
    assert parts[1].get_filename() == "boot.sh"
    assert parts[1].get_payload() == "#!/bin/sh\necho boot\n"
    assert parts[2].get_payload() == "plain text part"


def test_software_component_runs_the_part_for_the_action(env: Env) -> None:
    shown = env.create(
        """
resources:
  node: {type: Convection::Local::Node}
  comp:
    type: OS::Heat::SoftwareComponent
    properties:
      configs:
        - {actions: [CREATE], tool: script, config: "#!/bin/sh\\necho created"}
        - {actions: [UPDATE], tool: script, config: "#!/bin/sh\\necho updated"}
  dep:
    type: OS::Heat::SoftwareDeployment
    properties: {config: {get_resource: comp}, server: {get_resource: node}}
outputs:
  configs: {value: {get_attr: [comp, configs]}}
  out: {value: {get_attr: [dep, deploy_stdout]}}
"""
    )
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    out = env.outputs()
    assert out["out"] == "created\n"
    assert [c["actions"] for c in out["configs"]] == [["CREATE"], ["UPDATE"]]


def test_software_component_refuses_two_configs_for_one_action(env: Env) -> None:
    text = """
resources:
  comp:
    type: OS::Heat::SoftwareComponent
    properties:
      configs:
        - {actions: [CREATE], tool: script, config: a}
        - {actions: [CREATE, UPDATE], tool: script, config: b}
"""
    try:
        env.create(text)
    except Exception as exc:  # refused at validation, as Heat does
        assert "more than one configuration for the same action" in str(exc)
    else:
        raise AssertionError("a duplicate action was accepted")


def test_unknown_group_names_the_config_property(env: Env) -> None:
    reason = env.create_failure(
        """
resources:
  cfg:
    type: OS::Heat::SoftwareConfig
    properties: {group: puppet-nope, config: x}
""",
        "cfg",
    )
    assert "resources.cfg.properties.group" in reason
    assert "'puppet-nope'" in reason and "script" in reason


def test_a_server_that_is_not_a_server(env: Env) -> None:
    reason = env.create_failure(
        """
resources:
  notaserver: {type: OS::Heat::None}
  cfg: {type: OS::Heat::SoftwareConfig, properties: {config: "true"}}
  dep:
    type: OS::Heat::SoftwareDeployment
    properties: {config: {get_resource: cfg}, server: {get_resource: notaserver}}
""",
        "dep",
    )
    assert "notaserver is not a server" in reason
    assert "OS::Heat::None" in reason


def test_a_config_that_is_not_a_config(env: Env) -> None:
    reason = env.create_failure(
        """
resources:
  node: {type: Convection::Local::Node}
  dep:
    type: OS::Heat::SoftwareDeployment
    properties: {config: {get_resource: node}, server: {get_resource: node}}
""",
        "dep",
    )
    assert "resources.dep.properties.config" in reason
    assert "is not a software config" in reason


def test_bad_input_declaration_fails_on_the_config(env: Env) -> None:
    reason = env.create_failure(
        """
resources:
  cfg:
    type: OS::Heat::SoftwareConfig
    properties:
      inputs: [{name: n, type: Json, default: "{not json"}]
""",
        "cfg",
    )
    assert "resources.cfg.properties.inputs" in reason


def test_a_server_not_in_software_config_mode(env: Env) -> None:
    reason = env.create_failure(
        """
resources:
  node: {type: Convection::Local::Node, properties: {user_data_format: RAW}}
  cfg: {type: OS::Heat::SoftwareConfig, properties: {config: "true"}}
  dep:
    type: OS::Heat::SoftwareDeployment
    properties: {config: {get_resource: cfg}, server: {get_resource: node}}
""",
        "dep",
    )
    assert "user_data_format should be set to SOFTWARE_CONFIG" in reason
