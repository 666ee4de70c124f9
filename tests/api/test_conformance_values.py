"""What values Heat shows and what it masks, through python-heatclient
against a live server (issue 13).

Heat masks the values of hidden parameters (``Parameter.__str__``, and
``get_environment``) and nothing else: outputs are shown as they resolve
(``api.format_stack_output``), resource attributes too
(``format_resource_attributes``), so a RandomString's value and an output
the author writes of a hidden parameter show in clear. Stack ``parameters``
are ``Parameters.map(str)``: text, pseudo-parameters included. Template
function descriptions are each function class's docstring summary
(``service.list_template_functions``: ``pydoc.splitdoc``).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from heatclient.client import Client

from .conftest import LiveServer, Settle

RANDOM = """\
heat_template_version: 2018-08-31
resources:
  rand: {type: OS::Heat::RandomString, properties: {length: 20}}
  copy:
    type: OS::Heat::Value
    properties: {value: {get_resource: rand}}
outputs:
  by_attr: {value: {get_attr: [rand, value]}}
  by_ref: {value: {get_resource: rand}}
  through: {value: {get_attr: [copy, value]}}
"""

HIDDEN = """\
heat_template_version: 2018-08-31
parameters:
  db_password: {type: string, hidden: true}
  db_user: {type: string, default: admin}
resources:
  holder:
    type: OS::Heat::None
    properties: {password: {get_param: db_password}}
outputs:
  p: {value: {get_param: db_password}}
  dsn:
    value:
      str_replace:
        template: user:pass
        params: {user: {get_param: db_user}, pass: {get_param: db_password}}
"""

TYPED = """\
heat_template_version: 2018-08-31
parameters:
  count: {type: number}
  count_text: {type: number, default: "10"}
  ratio: {type: number, default: 1.5}
  enabled: {type: boolean, default: true}
  flag_text: {type: boolean}
  names: {type: comma_delimited_list, default: "a,b"}
  names_list: {type: comma_delimited_list}
  data: {type: json, default: {k: [1, 2]}}
  data_text: {type: json}
  word: {type: string, default: hi}
  from_env: {type: number, default: 1}
  hush: {type: number, hidden: true, default: 7}
resources: {}
"""


def _outputs(stack: Any) -> dict[str, Any]:
    return {o["output_key"]: o["output_value"] for o in stack.outputs}


def test_a_random_string_shows_in_outputs_and_resource_show(heat: Client, settle: Settle) -> None:
    stack_id = heat.stacks.create(stack_name="rand", template=RANDOM)["stack"]["id"]
    stack = settle(heat, stack_id)
    assert stack.stack_status == "CREATE_COMPLETE"
    outputs = _outputs(stack)
    value = outputs["by_attr"]
    assert isinstance(value, str) and len(value) == 20 and value != "******"
    assert outputs["by_ref"] == outputs["through"] == value
    shown = heat.stacks.output_show(stack_id, "by_ref")["output"]
    assert shown["output_value"] == value
    listed = heat.stacks.output_list(stack_id)["outputs"]
    assert {o["output_key"] for o in listed} == {"by_attr", "by_ref", "through"}
    assert all("secret" not in o for o in listed)
    assert heat.resources.get(stack_id, "rand").attributes["value"] == value


def test_an_output_of_a_hidden_parameter_shows_only_there(
    heat: Client, settle: Settle, server: LiveServer
) -> None:
    secret = f"pw-{uuid.uuid4().hex}"
    stack_id = heat.stacks.create(
        stack_name="db", template=HIDDEN, parameters={"db_password": secret}
    )["stack"]["id"]
    stack = settle(heat, stack_id)
    assert stack.stack_status == "CREATE_COMPLETE"
    # The outputs the author wrote show the value, as Heat's do.
    assert _outputs(stack) == {"p": secret, "dsn": f"admin:{secret}"}
    assert heat.stacks.output_show(stack_id, "p")["output"]["output_value"] == secret
    # Everywhere else the parameter stays masked.
    assert stack.parameters["db_password"] == "******"
    assert stack.parameters["db_user"] == "admin"
    assert heat.stacks.environment(stack_id)["parameters"]["db_password"] == "******"
    elsewhere = [
        json.dumps(stack.parameters),
        json.dumps([e.to_dict() for e in heat.events.list(stack_id)]),
        json.dumps([r.to_dict() for r in heat.resources.list(stack_id)]),
        json.dumps(heat.stacks.environment(stack_id)),
        json.dumps([s.to_dict() for s in heat.stacks.list()]),
    ]
    assert secret not in "\n".join(elsewhere)
    assert secret not in server.logs()


def test_stack_parameters_are_heats_text(heat: Client, settle: Settle, project: str) -> None:
    given = {
        "count": 10,
        "flag_text": "yes",
        "names_list": ["x", 1],
        "data_text": '{"b":  true, "a": null}',
    }
    stack_id = heat.stacks.create(
        stack_name="typed",
        template=TYPED,
        parameters=given,
        environment={"parameter_defaults": {"from_env": "3"}},
    )["stack"]["id"]
    stack = settle(heat, stack_id)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    assert stack.parameters == {
        "OS::stack_id": stack_id,
        "OS::project_id": project,
        "OS::stack_name": "typed",
        "count": "10",
        "count_text": "10",
        "ratio": "1.5",
        "enabled": "True",
        "flag_text": "True",
        "names": "a,b",
        "names_list": "x,1",
        "data": '{"k": [1, 2]}',
        "data_text": '{"b": true, "a": null}',
        "word": "hi",
        "from_env": "3",
        "hush": "******",
    }


CHILD = """\
heat_template_version: 2018-08-31
parameters:
  token: {type: string, hidden: true, default: unset}
  shown: {type: string, default: unset}
resources: {}
"""


def test_environment_masks_a_nested_templates_hidden_parameter(
    heat: Client, settle: Settle
) -> None:
    """Heat's ``get_environment`` judges a name by ``all_param_schemata``:
    the stack's template, else the templates among its files."""
    secret = f"tok-{uuid.uuid4().hex}"
    parent = "heat_template_version: 2018-08-31\nresources:\n  child: {type: child.yaml}\n"
    stack_id = heat.stacks.create(
        stack_name="nest",
        template=parent,
        files={"child.yaml": CHILD},
        environment={"parameter_defaults": {"token": secret, "shown": "plain"}},
    )["stack"]["id"]
    assert settle(heat, stack_id).stack_status == "CREATE_COMPLETE"
    defaults = heat.stacks.environment(stack_id)["parameter_defaults"]
    assert defaults == {"token": "******", "shown": "plain"}


#: Heat's template function list for the newest version, with the
#: condition functions (its docstrings' summary lines, word for word).
WALLABY = {
    "get_attr": "A function for resolving resource attributes.",
    "get_file": "A function for including a file inline.",
    "get_param": "A function for resolving parameter references.",
    "get_resource": "A function for resolving resource references.",
    "list_join": "A function for joining one or more lists of strings.",
    "repeat": "A function for iterating over a list of items or a dict of keys.",
    "resource_facade": "A function for retrieving data in a parent provider template.",
    "str_replace": "A function for performing string substitutions.",
    "digest": "A function for performing digest operations.",
    "str_split": "A function for splitting delimited strings into a list.",
    "map_merge": "A function for merging maps.",
    "yaql": "A function for executing a yaql expression.",
    "map_replace": "A function for performing substitutions on maps.",
    "if": "A function to return corresponding value based on condition evaluation.",
    "filter": "A function for filtering out values from lists.",
    "str_replace_strict": "A function for performing string substitutions.",
    "make_url": "A function for performing substitutions on maps.",
    "list_concat": "A function for extending lists.",
    "str_replace_vstrict": "A function for performing string substitutions.",
    "list_concat_unique": "A function for extending lists with unique items.",
    "contains": "A function for checking whether specific value is in sequence.",
    "equals": "A function for comparing whether two values are equal.",
    "not": "A function that acts as a NOT operator on a condition.",
    "and": "A function that acts as an AND operator on conditions.",
    "or": "A function that acts as an OR operator on conditions.",
}

#: The CloudFormation functions and the older classes of 2013-05-23.
JUNE_2013 = {
    "Fn::GetAZs": "A function for retrieving the availability zones.",
    "get_param": "A function for resolving parameter references.",
    "get_resource": "A function for resolving resource references.",
    "Ref": "A function for resolving parameters or resource references.",
    "get_attr": "A function for resolving resource attributes.",
    "Fn::Select": "A function for selecting an item from a list or map.",
    "Fn::Join": "A function for joining strings.",
    "list_join": "A function for joining strings.",
    "Fn::Split": "A function for splitting strings.",
    "str_replace": "A function for performing string substitutions.",
    "Fn::Replace": "A function for performing string substitutions.",
    "Fn::Base64": "A placeholder function for converting to base64.",
    "Fn::MemberListToMap": (
        "A function to convert lists with enumerated keys and values to mapping."
    ),
    "resource_facade": "A function for retrieving data in a parent provider template.",
    "Fn::ResourceFacade": "A function for retrieving data in a parent provider template.",
    "get_file": "A function for including a file inline.",
}


def _functions(heat: Client, version: str, **kwargs: Any) -> dict[str, str]:
    found = heat.template_versions.get(version, **kwargs)
    return {f.functions: f.description for f in found}


def test_template_function_descriptions_are_heats_words(heat: Client) -> None:
    newest = _functions(heat, "heat_template_version.2021-04-16", with_condition_func=True)
    assert newest == WALLABY
    plain = _functions(heat, "heat_template_version.wallaby")
    assert plain == {k: v for k, v in WALLABY.items() if k not in ("equals", "not", "and", "or")}
    assert _functions(heat, "heat_template_version.2013-05-23") == JUNE_2013
    kilo = _functions(heat, "heat_template_version.2015-04-30")
    assert kilo["repeat"] == "A function for iterating over a list of items."
    assert kilo["list_join"] == "A function for joining strings."
