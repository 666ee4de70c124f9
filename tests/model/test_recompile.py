"""Recompiling a stack's template from its previous compile equals a full compile.

``compile_stack`` remembers a stack's last compile and, when an update
changes a few resources, compiles only those (``convection.model._recompile``).
Random templates get random edits, including the kinds that must fall back
to a full compile (a changed type, condition or parameter, a cycle, a bad
reference), and every result is compared with a compile from scratch.
"""

from __future__ import annotations

import copy
import json
import random
import uuid
from typing import Any

import pytest

from convection.common.errors import InvalidInput
from convection.model import compiler
from convection.model.compiler import Compiled, StackIdentity, StackInputs, compile_stack
from convection.plan.digest import digests
from convection.resources.registry import default_registry

CATALOG = default_registry().catalog()


def make_template(rng: random.Random, n: int) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    for i in range(n):
        kind = rng.choice(["OS::Heat::None", "OS::Heat::RandomString"])
        body: dict[str, Any] = {"type": kind}
        if kind == "OS::Heat::RandomString":
            body["properties"] = {"length": rng.randint(4, 12)}
        else:
            body["properties"] = {"tag": {"get_param": "tag"}, "n": i}
        earlier = [f"r{j}" for j in range(i)]
        if earlier and rng.random() < 0.5:
            body["depends_on"] = rng.sample(earlier, min(len(earlier), rng.randint(1, 2)))
        if i % 7 == 3:
            body["condition"] = "on"
        resources[f"r{i}"] = body
    return {
        "heat_template_version": "2018-08-31",
        "parameters": {"tag": {"type": "string", "default": "a"}},
        "conditions": {"on": {"equals": [{"get_param": "tag"}, "a"]}},
        "resources": resources,
        "outputs": {"first": {"value": {"get_resource": "r0"}}},
    }


def edit(rng: random.Random, data: dict[str, Any]) -> str:
    """Change the template in place; returns what was done (for failures)."""
    resources = data["resources"]
    names = list(resources)
    name = rng.choice(names)
    body = resources[name]
    index = names.index(name)
    other = rng.choice(names)
    kind = rng.choice(
        [
            "literal",
            "reference",
            "attribute",
            "depends_on",
            "type",
            "condition",
            "parameter",
            "unknown",
            "bad-attribute",
            "cycle",
            "nothing",
            "two",
        ]
    )
    props = body.setdefault("properties", {})
    if kind == "literal":
        props["extra"] = rng.randint(0, 1000)
    elif kind == "reference" and index:
        props["ref"] = {"get_resource": names[rng.randrange(index)]}
    elif kind == "attribute":
        target = rng.choice(names[:index] or names)
        props["attr"] = {"get_attr": [target, "value"]}
    elif kind == "depends_on" and index:
        body["depends_on"] = [names[rng.randrange(index)]]
    elif kind == "type":
        body["type"] = "OS::Heat::None"
        body["properties"] = {"changed": True}
    elif kind == "condition":
        body["condition"] = "on" if "condition" not in body else {"not": "on"}
    elif kind == "parameter":
        data["parameters"]["tag"]["default"] = "b"
    elif kind == "unknown":
        props["ref"] = {"get_resource": "no_such_resource"}
    elif kind == "bad-attribute":
        props["attr"] = {"get_attr": [other, "no_such_attribute"]}
    elif kind == "cycle" and index:
        resources[names[0]]["depends_on"] = [name]
        body["depends_on"] = [names[0]]
    elif kind == "two":
        props["extra"] = 1
        resources[other].setdefault("properties", {})["extra2"] = 2
    return f"{kind} {name}"


def compile_for(identity: StackIdentity, data: dict[str, Any], *, fresh: bool) -> Compiled:
    inputs = StackInputs.from_text(json.dumps(data), name="t.json")
    if fresh:  # from scratch: the cache neither read nor written
        return compiler._compile_stack(inputs, identity=identity, catalog=CATALOG)
    return compile_stack(inputs, identity=identity, catalog=CATALOG)


def outcome(identity: StackIdentity, data: dict[str, Any], *, fresh: bool) -> Any:
    try:
        c = compile_for(identity, data, fresh=fresh)
    except InvalidInput as exc:
        return ("error", [str(d) for d in exc.diagnostics])
    d = c.definition
    return (
        list(d.resources.items()),
        list(d.outputs.items()),
        d.conditions,
        d.disabled,
        list(c.template.resources.items()),
        c.template.raw,
        c.graph.nodes,
        c.graph.edges(),
        c.warnings,
        digests(d),
        d.parameters.value("tag"),
    )


@pytest.mark.parametrize("seed", range(60))
def test_a_recompile_equals_a_full_compile(seed: int) -> None:
    rng = random.Random(seed)
    identity = StackIdentity("s", str(uuid.uuid4()), "p")
    data = make_template(rng, rng.randint(8, 40))
    compile_for(identity, data, fresh=False)  # the stack's last compile
    for _ in range(3):
        edited = copy.deepcopy(data)
        what = edit(rng, edited)
        incremental = outcome(identity, edited, fresh=False)
        assert incremental == outcome(identity, edited, fresh=True), what
        if incremental[0] != "error":
            data = edited


def test_unchanged_resources_are_shared_with_the_previous_compile() -> None:
    identity = StackIdentity("s", str(uuid.uuid4()), "p")
    data = make_template(random.Random(1), 40)
    before = compile_for(identity, data, fresh=False).definition
    data["resources"]["r5"]["properties"]["extra"] = 1
    after = compile_for(identity, data, fresh=False).definition
    assert after.resources["r4"] is before.resources["r4"]
    assert after.resources["r5"] is not before.resources["r5"]
    assert after.resources["r5"].properties["extra"] == 1


def test_validation_compiles_are_not_remembered() -> None:
    data = make_template(random.Random(2), 12)
    first = compile_for(compiler.VALIDATION_IDENTITY, data, fresh=False)
    again = compile_for(compiler.VALIDATION_IDENTITY, data, fresh=False)
    assert again is not first
