"""Mistral's inline ``key=value`` syntax, read as ``_parse_cmd_and_input`` reads it."""

from __future__ import annotations

from typing import Any

import pytest

from convection.workflows import Command, split_command


@pytest.mark.parametrize(
    ("text", "name", "params"),
    [
        ("std.noop", "std.noop", {}),
        ('std.echo output="hi" n=3', "std.echo", {"output": "hi", "n": 3}),
        ("std.echo output='single quoted'", "std.echo", {"output": "single quoted"}),
        (
            "std.http url=<% $.url %> timeout={{ _.t }}",
            "std.http",
            {"url": "<% $.url %>", "timeout": "{{ _.t }}"},
        ),
        (
            "x items=[1, 2] on=true off=false none=null",
            "x",
            {
                "items": [1, 2],
                "on": True,
                "off": False,
                "none": None,
            },
        ),
        # Mistral's value reader: digits only, so 3.5 is 3.
        ("x n=3.5", "x", {"n": 3}),
        # A list runs to the last ']': the rest is one string that JSON refuses.
        ("x a=[1] b=[2]", "x", {"a": "[1] b=[2]"}),
        # A quoted value may hold '=' and spaces.
        ('x s="a=b c=d"', "x", {"s": "a=b c=d"}),
        ("<% $.action %> x=1", "<% $.action %>", {"x": 1}),
        ("{{ _.action }} x=1", "{{ _.action }}", {"x": 1}),
        # Without a space there is nothing to split, even 'count=3'.
        ("count=3", "count=3", {}),
        ('fail(msg="boom")', 'fail(msg="boom")', {}),
        ("fail(msg=<% $.x %>)", "fail", {"msg": "<% $.x %>"}),
        ("my-action.v2 key_1=7", "my-action.v2", {"key_1": 7}),
    ],
)
def test_split(text: str, name: str, params: dict[str, Any]) -> None:
    command = split_command(text)
    assert command is not None
    assert (command.name, command.params) == (name, params)


@pytest.mark.parametrize(
    ("text", "unread"),
    [
        ("std.echo output=hello", ("output",)),
        ("std.echo n=-1 ok=1", ("n",)),
        ('std.echo a="1" b=two c=<% 3 %>', ("b",)),
        ('std.echo s="x=y"', ()),
        ("<% $.a=1 %> b=2", ()),
    ],
)
def test_values_mistral_drops_are_named(text: str, unread: tuple[str, ...]) -> None:
    command = split_command(text)
    assert command is not None
    assert command.unread == unread


def test_no_command_at_the_start() -> None:
    assert split_command("(x) y=1") is None
    assert split_command("=x y") is None
    assert split_command("x y") == Command("x")
