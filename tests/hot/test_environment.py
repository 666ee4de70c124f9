"""Environment files: sections, Heat's merge rules and the resource registry.

Expected values follow Heat's own tests (heat/tests/test_environment.py and
test_environment_util.py) where Heat has them.
"""

from __future__ import annotations

import textwrap

import pytest

from convection.common.diagnostics import Diagnostics
from convection.common.errors import InvalidInput
from convection.hot.environment import (
    Environment,
    ResourceRegistry,
    environment_from_dict,
    is_template_name,
    merge_environments,
    parse_environment,
)
from convection.hot.loader import load


def env(text: str, name: str = "env.yaml", diags: Diagnostics | None = None) -> Environment:
    own = Diagnostics() if diags is None else diags
    result = parse_environment(load(textwrap.dedent(text), name), own)
    if diags is None:
        assert not own.items, [str(d) for d in own]
    return result


def errors(text: str, name: str = "env.yaml") -> list[str]:
    diags = Diagnostics()
    parse_environment(load(textwrap.dedent(text), name), diags)
    return [str(d) for d in diags.errors]


def registry(data: dict[str, object]) -> ResourceRegistry:
    diags = Diagnostics()
    result = ResourceRegistry.from_data(data, diags=diags)
    assert not diags.items, [str(d) for d in diags]
    return result


# --- sections -------------------------------------------------------------


def test_every_section_is_read() -> None:
    e = env(
        """\
        parameters:
          key_name: heat_key
          flavor: m1.small
        parameter_defaults:
          NtpServer: pool.ntp.org
        resource_registry:
          "OS::Networking::FloatingIP": "OS::Neutron::FloatingIP"
        encrypted_param_names: [db_password]
        event_sinks:
          - type: zaqar-queue
            target: myqueue
            ttl: 1200
        parameter_merge_strategies:
          default: merge
          key_name: overwrite
        """
    )
    assert e.parameters == {"key_name": "heat_key", "flavor": "m1.small"}
    assert e.parameter_defaults == {"NtpServer": "pool.ntp.org"}
    assert e.encrypted_param_names == ("db_password",)
    assert e.event_sinks == ({"type": "zaqar-queue", "target": "myqueue", "ttl": 1200},)
    assert e.parameter_merge_strategies == {"default": "merge", "key_name": "overwrite"}
    assert e.resource_registry.resolve("OS::Networking::FloatingIP").type_name == (
        "OS::Neutron::FloatingIP"
    )
    assert e.name == "env.yaml"


def test_empty_file_is_an_empty_environment() -> None:
    assert env("") == Environment()
    assert env("{}").to_api() == {
        "resource_registry": {"resources": {}},
        "parameters": {},
        "parameter_defaults": {},
        "event_sinks": [],
    }


def test_unknown_section_uses_heats_wording_and_location() -> None:
    found = errors(
        """\
        parameters:
          flavor: m1.small
        paramters:
          image: fedora
        """,
        "prod.yaml",
    )
    assert found == [
        'prod.yaml:3:1 paramters: environment has wrong section "paramters" '
        '(did you mean "parameters"?)'
    ]


def test_unknown_section_without_a_close_match_lists_the_allowed_ones() -> None:
    (message,) = errors("outputs: {}\n")
    assert 'environment has wrong section "outputs"' in message
    assert "allowed: parameters, resource_registry, parameter_defaults" in message


def test_section_with_nothing_under_it_is_rejected_as_heat_does() -> None:
    found = errors(
        """\
        parameters:
          # key_name: heat_key
        resource_registry: {}
        """
    )
    assert found == ['env.yaml:1:1 parameters: environment has empty section "parameters"']


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("parameters: [a, b]\n", 'section "parameters" must be a mapping, not a list'),
        ("parameter_defaults: 5\n", 'section "parameter_defaults" must be a mapping'),
        ("resource_registry: OS::Heat::None\n", 'section "resource_registry" must be a mapping'),
        ("encrypted_param_names: db_password\n", "must be a list, not a string"),
        ("encrypted_param_names: [1]\n", "must list parameter names, not a number"),
        ("event_sinks: [{target: q}]\n", 'an event sink must be a mapping with a "type"'),
        ("parameter_merge_strategies: [merge]\n", "must be a mapping, not a list"),
    ],
)
def test_section_types_are_checked(text: str, expected: str) -> None:
    (message,) = errors(text)
    assert expected in message
    assert message.startswith("env.yaml:1:")


def test_unknown_merge_strategy_is_a_warning_and_falls_back() -> None:
    diags = Diagnostics()
    e = env(
        """\
        parameter_merge_strategies:
          default: merge
          tags: append
        """,
        diags=diags,
    )
    assert not diags.errors
    (warning,) = diags.warnings
    assert 'unknown merge strategy "append" for "tags"; Heat uses "merge"' in str(warning)
    assert warning.mark is not None and warning.mark.line == 3
    assert e.parameter_merge_strategies["tags"] == "append"


def test_environment_from_stored_dict_round_trips() -> None:
    stored = env(
        """\
        parameters: {a: 1}
        resource_registry:
          "My::Server": server.yaml
          resources: {db: {hooks: pre-create}}
        encrypted_param_names: [a]
        """
    ).env_as_dict()
    again = environment_from_dict(stored, Diagnostics())
    assert again.env_as_dict() == stored
    assert stored["encrypted_param_names"] == ["a"]
    assert "encrypted_param_names" not in again.to_api()


# --- registry: type mappings ---------------------------------------------------


def test_alias_and_template_resource() -> None:
    r = registry(
        {
            "OS::Networking::FloatingIP": "OS::Neutron::FloatingIP",
            "My::WebServer": "file:///srv/templates/web.yaml",
            "My::Db": "db.template",
        }
    )
    alias = r.resolve("OS::Networking::FloatingIP")
    assert (alias.type_name, alias.is_template) == ("OS::Neutron::FloatingIP", False)
    assert alias.chain == ("OS::Networking::FloatingIP", "OS::Neutron::FloatingIP")
    web = r.resolve("My::WebServer")
    assert (web.type_name, web.is_template, web.registry_path) == (
        "file:///srv/templates/web.yaml",
        True,
        ("My::WebServer",),
    )
    assert r.resolve("My::Db").is_template
    plain = r.resolve("OS::Nova::Server")
    assert (plain.type_name, plain.is_template, plain.chain) == (
        "OS::Nova::Server",
        False,
        ("OS::Nova::Server",),
    )


def test_template_names_are_decided_by_suffix_only() -> None:
    assert is_template_name("nested.yaml")
    assert is_template_name("http://example.com/lb.template")
    assert not is_template_name("nested.yml")  # Heat does not accept .yml
    assert not is_template_name("http://example.com/lb")
    r = registry({})
    assert r.resolve("nested.yaml").is_template
    assert not r.resolve("nested.yml").is_template


def test_a_key_ending_in_yaml_names_its_own_template() -> None:
    r = registry({"lib/server.yaml": "OS::Nova::Server"})
    entry = r.resolve("lib/server.yaml")
    assert (entry.type_name, entry.is_template) == ("lib/server.yaml", True)
    assert r.as_dict()["lib/server.yaml"] == "lib/server.yaml"


def test_aliases_chain() -> None:
    r = registry({"My::Compute": "My::Server", "My::Server": "server.yaml"})
    entry = r.resolve("My::Compute")
    assert (entry.type_name, entry.is_template) == ("server.yaml", True)
    assert entry.chain == ("My::Compute", "My::Server")


def test_wildcard_maps_a_family_of_types() -> None:
    r = registry({"OS::Networking::*": "OS::Neutron::*"})
    assert r.resolve("OS::Networking::Router").type_name == "OS::Neutron::Router"
    assert r.resolve("OS::Nova::Server").type_name == "OS::Nova::Server"


def test_wildcard_many_to_one_does_not_recurse() -> None:
    r = registry({"OS::*": "OS::Heat::None"})
    assert r.resolve("OS::Some::Name").type_name == "OS::Heat::None"
    assert r.resolve("OS::Heat::None").type_name == "OS::Heat::None"


def test_wildcard_sorts_before_an_exact_entry_as_in_heat() -> None:
    # Heat sorts candidates by path text, and "*" sorts before letters.
    r = registry({"OS::Nova::Server": "My::Server", "OS::*": "OS::Heat::None"})
    assert r.resolve("OS::Nova::Server").type_name == "OS::Heat::None"


def test_unknown_target_falls_back_to_the_next_candidate() -> None:
    r = registry({"OS::*": "Dreamhost::*", "OS::Nova::Server": "OS::Heat::None"})
    known = {"OS::Heat::None", "OS::Nova::Server", "Dreamhost::Neutron::Net"}
    assert r.resolve("OS::Nova::Server", is_known=known.__contains__).type_name == "OS::Heat::None"
    assert r.resolve("OS::Neutron::Net", is_known=known.__contains__).type_name == (
        "Dreamhost::Neutron::Net"
    )
    assert r.resolve("OS::Cinder::Volume", is_known=known.__contains__).type_name == (
        "OS::Cinder::Volume"
    )


def test_per_resource_override_wins_over_global_entries() -> None:
    r = registry(
        {
            "OS::Networking::FloatingIP": "OS::Nova::FloatingIP",
            "resources": {"my_fip": {"OS::Networking::FloatingIP": "ip.yaml"}},
        }
    )
    mine = r.resolve("OS::Networking::FloatingIP", "my_fip")
    assert (mine.type_name, mine.registry_path) == (
        "ip.yaml",
        ("resources", "my_fip", "OS::Networking::FloatingIP"),
    )
    assert r.resolve("OS::Networking::FloatingIP", "other").type_name == "OS::Nova::FloatingIP"


def test_per_resource_type_overrides_match_names_exactly() -> None:
    r = registry({"resources": {"web_*": {"OS::Nova::Server": "OS::Heat::None"}}})
    assert r.resolve("OS::Nova::Server", "web_1").type_name == "OS::Nova::Server"


def test_null_removes_earlier_entries_of_the_same_file() -> None:
    r = registry(
        {
            "OS::Food": "fruity.yaml",
            "AWS::EC2::Instance": "instance.yaml",
            "AWS::IAM::User": "user.yaml",
            "AWS::*": None,
            "OS::Food ": None,
        }
    )
    assert r.as_dict() == {"resources": {}, "OS::Food": "fruity.yaml"}
    r2 = registry({"OS::Food": "fruity.yaml", "resources": {"db": {"hooks": "pre-create"}}})
    assert registry({**r2.as_dict(), "OS::Food": None}).as_dict() == {
        "resources": {"db": {"hooks": "pre-create"}}
    }


def test_alias_loop_is_reported_with_its_location() -> None:
    diags = Diagnostics()
    e = parse_environment(
        load(
            textwrap.dedent(
                """\
                resource_registry:
                  "My::A": "My::B"
                  "My::B": "My::A"
                """
            ),
            "loop.yaml",
        ),
        diags,
    )
    with pytest.raises(InvalidInput) as caught:
        e.resource_registry.resolve("My::A")
    (diag,) = caught.value.diagnostics
    assert "in a loop: My::A -> My::B -> My::A" in diag.message
    assert str(diag.mark) == "loop.yaml:3:3"


def test_self_feeding_wildcard_is_a_loop() -> None:
    r = registry({"OS::*": "OS::Heat::*"})
    with pytest.raises(InvalidInput, match="in a loop"):
        r.resolve("OS::Nova::Server")


def test_bad_registry_entries_are_located_errors() -> None:
    found = errors(
        """\
        resource_registry:
          "My::Server": 42
          "My::Net": {hooks: pre-create}
          resources:
            db: "OS::Trove::Instance"
            web:
              hooks: pre-creat
              restricted_actions: [update, delete]
        """
    )
    assert found == [
        'env.yaml:2:3 resource_registry.My::Server: resource_registry entry "My::Server" must '
        "be a resource type or a template path, not a number",
        'env.yaml:3:3 resource_registry.My::Net: resource_registry entry "My::Net" is a '
        'mapping; only "resources" holds per-resource settings',
        'env.yaml:5:5 resource_registry.resources.db: resource_registry "db" must be a mapping '
        "(hooks, restricted_actions, type overrides or nested resources), not a string",
        'env.yaml:7:7 resource_registry.resources.web.hooks: Invalid hook type "pre-creat" for '
        "resource breakpoint, acceptable hook types are: ('pre-create', 'pre-update', "
        "'pre-delete', 'post-create', 'post-update', 'post-delete')",
        "env.yaml:8:7 resource_registry.resources.web.restricted_actions: Invalid "
        "restricted_action type \"['update', 'delete']\" for resource, acceptable "
        "restricted_action types are: ('update', 'replace')",
    ]


# --- registry: hooks and restricted actions ------------------------------------

HOOKED = """\
resource_registry:
  resources:
    my_server:
      "OS::DBInstance": file:///home/mine/all_my_cool_templates/db.yaml
      hooks: pre-create
      restricted_actions: replace
    "*_server":
      hooks: [pre-update, post-create]
    nested_stack:
      nested_resource:
        hooks: pre-update
        restricted_actions: update
      another_resource:
        hooks: [pre-create, pre-update]
        restricted_actions: [update, replace]
    "nest*":
      "*":
        hooks: pre-delete
"""


def test_hooks_by_name_and_wildcard() -> None:
    r = env(HOOKED).resource_registry
    assert r.hooks_for("my_server") == {"pre-create", "pre-update", "post-create"}
    assert r.hooks_for("app_server") == {"pre-update", "post-create"}
    assert r.hooks_for("server") == frozenset()
    assert r.hooks_for(["app_server"]) == r.hooks_for("app_server")
    assert r.matches_hook("my_server", "pre-create")
    assert not r.matches_hook("my_server", "pre-delete")
    assert r.restricted_actions_for("my_server") == {"replace"}
    assert r.restricted_actions_for("app_server") == frozenset()


def test_hooks_in_nested_stacks_follow_the_path() -> None:
    r = env(HOOKED).resource_registry
    assert r.hooks_for(["nested_stack", "nested_resource"]) == {"pre-update", "pre-delete"}
    assert r.hooks_for(["nested_stack", "another_resource"]) == {
        "pre-create",
        "pre-update",
        "pre-delete",
    }
    assert r.restricted_actions_for(["nested_stack", "another_resource"]) == {
        "update",
        "replace",
    }
    assert r.hooks_for(["nestling", "anything"]) == {"pre-delete"}
    assert r.hooks_for(["other_stack", "nested_resource"]) == frozenset()
    assert r.hooks_for("nested_resource") == frozenset()


def test_nested_settings_prefer_the_exact_name() -> None:
    # Heat's test_drill_down_prefer_exact_match.
    r = registry(
        {
            "resources": {
                "*esource": {"hooks": "pre-create"},
                "res*": {"hooks": "pre-create"},
                "resource": {"OS::Fruit": "carrots.yaml", "hooks": "pre-update"},
                "resource*": {"hooks": "pre-create"},
            }
        }
    )
    child = r.for_nested("resource")
    assert child.as_dict()["resources"] == {"OS::Fruit": "carrots.yaml", "hooks": "pre-update"}


def test_nested_registry_for_a_child_stack() -> None:
    # Heat's test_drill_down_to_child_resource.
    r = registry(
        {
            "OS::Food": "fruity.yaml",
            "resources": {
                "a": {"OS::Fruit": "apples.yaml", "hooks": "pre-create"},
                "nested": {
                    "b": {"OS::Fruit": "carrots.yaml"},
                    "nested_res": {"hooks": "pre-create"},
                },
            },
        }
    )
    child = r.for_nested("nested")
    assert child.hooks_for("nested_res") == {"pre-create"}
    assert child.resolve("OS::Food", "abc").type_name == "fruity.yaml"
    assert child.resolve("OS::Fruit", "a").type_name == "OS::Fruit"
    assert child.resolve("OS::Fruit", "b").type_name == "carrots.yaml"
    assert r.resolve("OS::Fruit", ["nested", "b"]).type_name == "carrots.yaml"


def test_a_wrapping_template_does_not_recurse_into_itself() -> None:
    # OS::Nova::Server -> server.yaml, and server.yaml itself has an OS::Nova::Server.
    r = registry(
        {
            "OS::Nova::Server": "server.yaml",
            "resources": {"db": {"OS::Nova::Server": "db_server.yaml"}},
        }
    )
    used = r.resolve("OS::Nova::Server", "web")
    inside = r.for_nested("web", remove=used)
    assert inside.resolve("OS::Nova::Server", "server").type_name == "OS::Nova::Server"
    assert r.resolve("OS::Nova::Server", "web").type_name == "server.yaml"
    db = r.resolve("OS::Nova::Server", "db")
    in_db = r.for_nested("db", remove=db)
    assert in_db.resolve("OS::Nova::Server", "server").type_name == "server.yaml"
    assert "OS::Nova::Server" not in in_db.as_dict()["resources"]


def test_wrapping_template_removal_works_in_deeper_stacks() -> None:
    r = registry({"resources": {"outer": {"inner": {"OS::Nova::Server": "wrapped.yaml"}}}})
    outer = r.for_nested("outer")
    used = outer.resolve("OS::Nova::Server", "inner")
    assert used.registry_path == ("resources", "outer", "inner", "OS::Nova::Server")
    inside = outer.for_nested("inner", remove=used)
    assert inside.resolve("OS::Nova::Server", "server").type_name == "OS::Nova::Server"
    assert outer.resolve("OS::Nova::Server", "inner").type_name == "wrapped.yaml"


def test_as_dict_keeps_hooks_and_lists_used_template_types() -> None:
    r = env(HOOKED).resource_registry
    shown = r.as_dict()
    assert shown["resources"]["my_server"] == {
        "OS::DBInstance": "file:///home/mine/all_my_cool_templates/db.yaml",
        "hooks": "pre-create",
        "restricted_actions": "replace",
    }
    used = r.with_template_types(["file:///t/nested.yaml", "OS::Nova::Server"])
    assert used.as_dict()["file:///t/nested.yaml"] == "file:///t/nested.yaml"
    assert "OS::Nova::Server" not in used.as_dict()
    assert used != r and r == env(HOOKED).resource_registry


# --- merging: Heat's test_environment_util scenarios ---------------------------

SCHEMA = {
    "str_value1": "string",
    "str_value2": "string",
    "del_lst_value1": "comma_delimited_list",
    "del_lst_value2": "comma_delimited_list",
    "lst_value1": "comma_delimited_list",
    "lst_value2": "comma_delimited_list",
    "json_value1": "json",
    "json_value2": "json",
}
ENV_1 = """\
parameters:
  str_value1: string1
  str_value2: string2
  del_lst_value1: '1,2'
  del_lst_value2: '3,4'
  lst_value1: [1, 2]
  json_value1: {"1": [str1, str2]}
  json_value2: {"2": [test1, test2]}
resource_registry:
  "test::R1": OS::Heat::RandomString
  "test::R2": BROKEN
parameter_defaults:
  lst_value2: [3, 4]
"""
ENV_2 = """\
parameters:
  str_value1: string3
  str_value2: string4
  del_lst_value1: '5,6'
  del_lst_value2: '7,8'
  lst_value1: [5, 6]
  json_value1: {"3": [str3, str4]}
  json_value2: {"4": [test3, test4]}
resource_registry:
  "test::R2": OS::Heat::None
parameter_defaults:
  lst_value2: [7, 8]
"""


def merged(*texts: str, **kwargs: object) -> Environment:
    envs = [env(t, f"env_{i}.yaml") for i, t in enumerate(texts, 1)]
    return merge_environments(envs, param_types=SCHEMA, **kwargs)  # type: ignore[arg-type]


def test_default_strategy_overwrites() -> None:
    e = merged(ENV_1, ENV_2)
    assert e.parameters == {
        "str_value1": "string3",
        "str_value2": "string4",
        "del_lst_value1": "5,6",
        "del_lst_value2": "7,8",
        "lst_value1": [5, 6],
        "json_value1": {"3": ["str3", "str4"]},
        "json_value2": {"4": ["test3", "test4"]},
    }
    assert e.parameter_defaults == {"lst_value2": [7, 8]}
    assert e.resource_registry.as_dict() == {
        "resources": {},
        "test::R1": "OS::Heat::RandomString",
        "test::R2": "OS::Heat::None",
    }


def test_a_default_strategy_in_the_first_file_carries_on() -> None:
    e = merged("parameter_merge_strategies: {default: deep_merge}\n" + ENV_1, ENV_2)
    assert e.parameters == {
        "str_value1": "string1string3",
        "str_value2": "string2string4",
        "del_lst_value1": "1,2,5,6",
        "del_lst_value2": "3,4,7,8",
        "lst_value1": [1, 2, 5, 6],
        "json_value1": {"1": ["str1", "str2"], "3": ["str3", "str4"]},
        "json_value2": {"2": ["test1", "test2"], "4": ["test3", "test4"]},
    }
    assert e.parameter_defaults == {"lst_value2": [3, 4, 7, 8]}


def test_parameter_specific_strategies() -> None:
    strategies = """\
parameter_merge_strategies:
  default: overwrite
  lst_value1: merge
  lst_value2: merge
  json_value1: deep_merge
"""
    e = merged(strategies + ENV_1, ENV_2)
    assert e.parameters["lst_value1"] == [1, 2, 5, 6]
    assert e.parameters["json_value1"] == {"1": ["str1", "str2"], "3": ["str3", "str4"]}
    assert e.parameters["json_value2"] == {"4": ["test3", "test4"]}
    assert e.parameters["str_value1"] == "string3"
    assert e.parameter_defaults == {"lst_value2": [3, 4, 7, 8]}
    assert e.parameter_merge_strategies["lst_value1"] == "merge"


def test_conflicting_strategy_is_located_in_the_later_file() -> None:
    first = "parameter_merge_strategies: {lst_value1: merge, json_value1: deep_merge}\n"
    third = """\
parameter_merge_strategies:
  default: overwrite
  lst_value1: deep_merge
  json_value1: merge
parameters:
  lst_value1: [9, 10]
  json_value1: {"5": [str5]}
"""
    diags = Diagnostics()
    envs = [env(first + ENV_1, "a.yaml"), env(ENV_2, "b.yaml"), env(third, "c.yaml")]
    merge_environments(envs, param_types=SCHEMA, diags=diags)
    messages = [str(d) for d in diags.errors]
    assert messages == [
        "c.yaml:3:3 parameter_merge_strategies.lst_value1: Conflicting merge strategy "
        "'deep_merge' for parameter 'lst_value1' in file 'c.yaml'. (an earlier file chose "
        "'merge')",
        "c.yaml:4:3 parameter_merge_strategies.json_value1: Conflicting merge strategy "
        "'merge' for parameter 'json_value1' in file 'c.yaml'. (an earlier file chose "
        "'deep_merge')",
    ]
    with pytest.raises(InvalidInput, match="Conflicting merge strategy"):
        merge_environments(envs, param_types=SCHEMA)


def test_a_later_file_cannot_change_a_keys_strategy() -> None:
    # The key got "overwrite" (the default) from the first file that set it.
    diags = Diagnostics()
    merge_environments(
        [
            env("parameters: {lst_value1: [1]}\n"),
            env("parameters: {lst_value1: [2]}\nparameter_merge_strategies: {lst_value1: merge}\n"),
        ],
        param_types=SCHEMA,
        diags=diags,
    )
    (error,) = diags.errors
    assert "Conflicting merge strategy 'merge' for parameter 'lst_value1'" in error.message
    # A later file's *default* does not conflict: the key keeps its strategy.
    e = merged(
        "parameter_merge_strategies: {default: merge}\nparameters: {str_value1: a}\n",
        "parameter_merge_strategies: {default: overwrite}\nparameters: {str_value1: b}\n",
    )
    assert e.parameters == {"str_value1": "ab"}


def test_zeros_are_values_not_gaps() -> None:
    e = merge_environments(
        [env("parameter_defaults: {value1: 1}\n"), env("parameter_defaults: {value1: 0}\n")],
        param_types={"value1": "number"},
    )
    assert e.parameter_defaults == {"value1": 0}
    e = merge_environments(
        [
            env(
                "parameter_defaults: {value1: {foo: 1}}\n"
                "parameter_merge_strategies: {value1: deep_merge}\n"
            ),
            env("parameter_defaults: {value1: {foo: 0}}\n"),
        ],
        param_types={"value1": "json"},
    )
    assert e.parameter_defaults == {"value1": {"foo": 0}}


def test_undeclared_keys_are_dropped_after_the_first_file() -> None:
    e = merged(
        "parameters: {str_value1: a, stray_one: x}\n",
        "parameters: {str_value1: b, stray_two: y}\n",
    )
    assert e.parameters == {"str_value1": "b", "stray_one": "x"}


def test_null_values_never_replace() -> None:
    e = merged("parameters: {str_value1: a}\n", "parameters: {str_value1: null}\n")
    assert e.parameters == {"str_value1": "a"}


def test_environment_files_override_command_line_parameters() -> None:
    e = merged("parameters: {str_value1: from-file}\n", user_parameters={"str_value1": "cli"})
    assert e.parameters == {"str_value1": "from-file"}


def test_registry_merges_shallowly_and_later_nulls_are_skipped() -> None:
    e = merged(
        """\
        resource_registry:
          "My::Server": server.yaml
          "My::Net": net.yaml
          resources:
            web: {hooks: pre-create}
        """,
        """\
        resource_registry:
          "My::Net": null
          "My::Volume": volume.yaml
          resources:
            db: {hooks: pre-update}
        """,
    )
    assert e.resource_registry.as_dict() == {
        "resources": {"db": {"hooks": "pre-update"}},
        "My::Server": "server.yaml",
        "My::Net": "net.yaml",
        "My::Volume": "volume.yaml",
    }
    assert e.resource_registry.hooks_for("web") == frozenset()
    assert str(e.mark(("resource_registry", "resources", "db"))).startswith("env_2.yaml:5:")


def test_a_null_in_the_first_registry_applies_after_the_merge() -> None:
    e = merged(
        'resource_registry: {"OS::A": a.yaml, "OS::*": null}\n',
        'resource_registry: {"OS::A": b.yaml, "OS::B": c.yaml}\n',
    )
    assert e.resource_registry.as_dict() == {"resources": {}, "OS::B": "c.yaml"}


def test_list_sections_append() -> None:
    e = merged(
        "encrypted_param_names: [a]\nevent_sinks: [{type: zaqar-queue, target: q1}]\n",
        "encrypted_param_names: [a, b]\nevent_sinks: [{type: zaqar-queue, target: q2}]\n",
    )
    assert e.encrypted_param_names == ("a", "b")
    assert [s["target"] for s in e.event_sinks] == ["q1", "q2"]
    assert e.env_as_dict()["encrypted_param_names"] == ["a", "b"]


@pytest.mark.parametrize(
    ("kind", "first", "second", "expected"),
    [
        ("string", "'abc'", "'def'", "abcdef"),
        ("comma_delimited_list", "'a,b'", "'c'", "a,b,c"),
        ("comma_delimited_list", "[a, b]", "[c]", ["a", "b", "c"]),
        ("comma_delimited_list", "[a]", "'b,c'", ["a", "b", "c"]),
        ("json", "{a: {x: 1}, b: 1}", "{a: {y: 2}}", {"a": {"y": 2}, "b": 1}),
        ("json", "'{\"a\": 1}'", "'{\"b\": 2}'", {"a": 1, "b": 2}),
        ("number", "'1'", "'2'", "12"),
    ],
)
def test_merge_by_parameter_type(kind: str, first: str, second: str, expected: object) -> None:
    e = merge_environments(
        [
            env(
                "parameter_merge_strategies: {default: merge}\n"
                f"parameters: {{p: x, q: {first}}}\n"
            ),
            env(f"parameters: {{q: {second}}}\n"),
        ],
        param_types={"p": "string", "q": kind},
    )
    assert e.parameters["q"] == expected


def test_deep_merge_recurses_into_json() -> None:
    e = merge_environments(
        [
            env(
                """\
                parameter_merge_strategies: {ExtraConfig: deep_merge}
                parameter_defaults:
                  ExtraConfig:
                    nova::compute: {reserved_host_memory: 2048, tags: [a]}
                    motd: "hello "
                """
            ),
            env(
                """\
                parameter_defaults:
                  ExtraConfig:
                    nova::compute: {cpu_allocation_ratio: 4, tags: [b]}
                    motd: world
                    dropped: null
                """
            ),
        ],
        param_types={"ExtraConfig": "json"},
    )
    assert e.parameter_defaults["ExtraConfig"] == {
        "nova::compute": {
            "reserved_host_memory": 2048,
            "tags": ["a", "b"],
            "cpu_allocation_ratio": 4,
        },
        "motd": "hello world",
    }


@pytest.mark.parametrize(
    ("kind", "value", "message"),
    [
        ("boolean", "true", "Invalid merge strategy 'merge' for parameter 'q'."),
        ("number", "2", 'Heat cannot merge number parameter "q"'),
        ("json", "'{not json'", "Invalid parameter in environment Expecting property name"),
        ("string", "[a]", 'cannot merge a list into "q"'),
    ],
)
def test_impossible_merges_are_located_errors(kind: str, value: str, message: str) -> None:
    diags = Diagnostics()
    merge_environments(
        [
            env("parameter_merge_strategies: {default: merge}\nparameters: {p: x, q: 1}\n"),
            env(f"parameters:\n  q: {value}\n", "later.yaml"),
        ],
        param_types={"p": "string", "q": kind},
        diags=diags,
    )
    (error,) = diags.errors
    assert message in error.message
    assert str(error.mark) == "later.yaml:2:3"


def test_without_a_schema_types_come_from_the_values() -> None:
    e = merge_environments(
        [
            env(
                "parameter_merge_strategies: {default: merge}\n"
                "parameters: {names: [a], config: {x: 1}, motd: hi}\n"
            ),
            env("parameters: {names: [b], config: {y: 2}, motd: ' there', extra: 1}\n"),
        ]
    )
    assert e.parameters == {
        "names": ["a", "b"],
        "config": {"x": 1, "y": 2},
        "motd": "hi there",
        "extra": 1,
    }


def test_merging_nothing_gives_the_empty_environment() -> None:
    assert merge_environments([]) == Environment()
    assert merge_environments([], user_parameters={"a": 1}).parameters == {"a": 1}
