"""String functions: ``list_join``, ``str_replace`` (and its strict forms),
``str_split``, ``digest`` and ``make_url``.

Heat changed several of these between versions without renaming them, so a
version's table picks the class: ``list_join`` takes several lists and
JSON-encodes maps and lists from 2015-10-15 (:class:`JoinMultiple`), and
``str_replace`` JSON-encodes non-string values from the same version
(:class:`ReplaceJson`). Their messages keep Heat's wording, because users
search for them.

``list_join`` and ``str_replace`` can multiply a value (one parameter
substituted a thousand times), so both measure their output before building
it and refuse anything over ``Limits.max_value_size``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any, ClassVar
from urllib import parse as urlparse

from convection.common import Diagnostics
from convection.hot.functions.base import (
    ArgumentError,
    Function,
    Macro,
    Resolver,
    Scope,
    Shaped,
    key_error_text,
    limits_of,
    python_type_name,
    resolve,
)


def _too_large(name: str, limit: int) -> str:
    return f'"{name}" would build a value larger than the limit of {limit} characters'


def to_json(value: Any) -> str:
    """The JSON Heat substitutes for a map or list: sorted keys, default spacing."""
    return json.dumps(value, sort_keys=True)


class Join(Shaped):
    """``list_join: [delimiter, [strings]]`` as in 2013-05-23 to 2015-04-30:
    one list, and every item must be a string."""

    __slots__ = ()
    summary = "A function for joining strings."

    @property
    def example(self) -> str:
        return f'"{self.name}" : [ " ", [ "str1", "str2"]]'

    def check(self, args: Any) -> None:
        if not isinstance(args, list) or len(args) != 2:
            raise ArgumentError(f'Incorrect arguments to "{self.name}" should be: {self.example}')

    def evaluate(self, resolver: Resolver) -> Any:
        strings = resolve(self.args[1], resolver)
        if strings is None:
            strings = []
        if not isinstance(strings, list):
            raise self.error(f'"{self.name}" must operate on a list')
        delim = self._delimiter(resolver)
        return self._join(delim, [self._item(s) for s in strings], resolver)

    def _delimiter(self, resolver: Resolver) -> str:
        delim = resolve(self.args[0], resolver)
        if not isinstance(delim, str):
            raise self.error(f'"{self.name}" delimiter must be a string')
        return delim

    def _item(self, item: Any) -> str:
        if item is None:
            return ""
        if not isinstance(item, str):
            raise self.error(f"Items to join must be strings not {repr(item)[:200]}")
        return item

    def _join(self, delim: str, items: list[str], resolver: Resolver) -> str:
        limit = limits_of(resolver).max_value_size
        size = sum(len(s) for s in items) + len(delim) * max(len(items) - 1, 0)
        if size > limit:
            raise self.error(_too_large(self.name, limit))
        return delim.join(items)


class JoinMultiple(Join):
    """``list_join`` from 2015-10-15: several lists, and maps or lists among
    the items are joined as JSON."""

    __slots__ = ()
    summary = "A function for joining one or more lists of strings."

    @property
    def example(self) -> str:
        return f'"{self.name}" : [ " ", [ "str1", "str2"] ...]'

    def check(self, args: Any) -> None:
        if not isinstance(args, list) or len(args) < 2:
            raise ArgumentError(f'Incorrect arguments to "{self.name}" should be: {self.example}')

    def evaluate(self, resolver: Resolver) -> Any:
        strings: list[Any] = []
        for joined in resolve(self.args[1:], resolver):
            if not joined:  # Heat skips every empty or null argument
                continue
            if not isinstance(joined, list):
                raise self.error(f'"{self.name}" must operate on a list')
            strings.extend(joined)
        delim = self._delimiter(resolver)
        return self._join(delim, [self._item(s) for s in strings], resolver)

    def _item(self, item: Any) -> str:
        if item is None:
            return ""
        if isinstance(item, str):
            return item
        if isinstance(item, dict | list):
            try:
                return to_json(item)
            except (TypeError, ValueError):
                raise self.error(
                    "Items to join must be string, map or list. "
                    f"{repr(item)[:200]} failed json serialization"
                ) from None
        raise self.error(f"Items to join must be string, map or list not {repr(item)[:200]}")


class Replace(Shaped):
    """``str_replace: {template, params}`` as in 2013-05-23 to 2015-04-30:
    values must be strings or numbers.

    Heat replaces the longest placeholder first (equal lengths in string
    order) and never rescans a substituted value; the result is built from
    the template's pieces so its size is known before it exists.
    """

    __slots__ = ()
    summary = "A function for performing string substitutions."
    #: str_replace_strict: every param must occur in the template.
    strict: ClassVar[bool] = False
    #: str_replace_vstrict refuses null or empty values.
    allow_empty: ClassVar[bool] = True

    def check(self, args: Any) -> None:
        if not isinstance(args, dict):
            raise ArgumentError(f'Arguments to "{self.name}" must be a map')
        if "params" not in args or "template" not in args:
            example = (
                f"{self.name}:\n"
                "              template: This is var1 template var2\n"
                "              params:\n"
                "                var1: a\n"
                "                var2: string"
            )
            raise ArgumentError(key_error_text(f'"{self.name}" syntax should be {example}'))
        if not isinstance(args["params"], dict | Function):
            raise ArgumentError(f'"{self.name}" parameters must be a mapping')

    def _template_arg(self) -> Any:
        return self.args["template"]

    def _params_arg(self) -> Any:
        return self.args["params"]

    def evaluate(self, resolver: Resolver) -> Any:
        template = resolve(self._template_arg(), resolver)
        mapping = resolve(self._params_arg(), resolver)
        if self.strict:
            self._python(set, mapping)  # Heat notes the params to find first
        if not isinstance(template, str):
            raise self.error(f'"{self.name}" template must be a string')
        if not isinstance(mapping, dict):
            raise self.error(f'"{self.name}" params must be a map')
        order: list[str] = self._python(lambda m: sorted(sorted(m), key=len, reverse=True), mapping)
        if not all(isinstance(k, str) for k in order):
            raise self.error(f'"{self.name}" param placeholders must be strings')
        values = [self.replacement(mapping[key], key) for key in order]
        pieces, found = self._split(template, order)
        if self.strict and len(found) < len(order):
            missing = sorted(sorted(set(order) - found), key=len, reverse=True)
            raise self.error(
                f"The following params were not found in the template: {','.join(missing)}"
            )
        limit = limits_of(resolver).max_value_size
        size = sum(len(p) if isinstance(p, str) else len(values[p]) for p in pieces)
        if size > limit:
            raise self.error(_too_large(self.name, limit))
        return "".join(p if isinstance(p, str) else values[p] for p in pieces)

    def _python(self, step: Callable[[Any], Any], value: Any) -> Any:
        """``step(value)``, a step Heat takes with Python's builtins (noting
        the params, ordering the placeholders) and whose ``TypeError`` it
        lets through: a placeholder that is a number has no length, a
        strict call's params that are no collection cannot be noted."""
        try:
            return step(value)
        except TypeError as exc:
            raise self.error(str(exc)) from None

    def _split(self, template: str, order: list[str]) -> tuple[list[str | int], set[str]]:
        """The template as literal pieces and value indexes; which keys occur.
        Heat splits on each placeholder, so an empty one is Python's
        ``empty separator``."""
        pieces: list[str | int] = [template]
        found: set[str] = set()
        for index, key in enumerate(order):
            if not key:
                raise self.error("empty separator")
            split: list[str | int] = []
            for piece in pieces:
                if isinstance(piece, int) or key not in piece:
                    split.append(piece)
                    continue
                found.add(key)
                for n, part in enumerate(piece.split(key)):
                    if n:
                        split.append(index)
                    if part:
                        split.append(part)
            pieces = split
        return pieces, found

    def replacement(self, value: Any, param: str) -> str:
        if value is None:
            return ""
        if not isinstance(value, str | int | float | bool):
            raise self.error(
                f'"{self.name}" params must be strings or numbers, param {param} is not valid'
            )
        return str(value)


class ReplaceJson(Replace):
    """``str_replace`` from 2015-10-15: maps and lists are substituted as JSON."""

    __slots__ = ()

    def _empty(self, param: str) -> Exception:
        return self.error(
            f"{self.name} has an undefined or empty value for param {param}, "
            "must be a defined non-empty value"
        )

    def replacement(self, value: Any, param: str) -> str:
        if value is None:
            if self.allow_empty:
                return ""
            raise self._empty(param)
        if not isinstance(value, str | int | float | bool):
            if not isinstance(value, dict | list):
                raise self.error(f'"{self.name}" params must be strings, numbers, list or map.')
            if not self.allow_empty and len(value) == 0:
                raise self._empty(param)
            try:
                return to_json(value)
            except (TypeError, ValueError):
                raise self.error(
                    f'"{self.name}" params must be strings, numbers, list or map. '
                    f"Failed to json serialize {value}"
                ) from None
        text = str(value)
        if not self.allow_empty and not text:
            raise self._empty(param)
        return text


class ReplaceJsonStrict(ReplaceJson):
    """``str_replace_strict`` (2017-02-24): a param missing from the template
    is an error, because it is almost always a typo."""

    __slots__ = ()
    summary = "A function for performing string substitutions."
    strict = True


class ReplaceJsonVeryStrict(ReplaceJsonStrict):
    """``str_replace_vstrict`` (2017-09-01): an empty value is an error too."""

    __slots__ = ()
    summary = "A function for performing string substitutions."
    allow_empty = False


class StrSplit(Shaped):
    """``str_split: [delimiter, string, (index)]`` (2015-10-15)."""

    __slots__ = ()
    summary = "A function for splitting delimited strings into a list."

    @property
    def _usage(self) -> str:
        return f'Incorrect arguments to "{self.name}" should be: {self._example}'

    @property
    def _example(self) -> str:
        return f'"{self.name}" : [ ",", "apples,pears", <index>]'

    def check(self, args: Any) -> None:
        if isinstance(args, str | dict):
            raise ArgumentError(self._usage)

    def evaluate(self, resolver: Resolver) -> Any:
        """Heat pops the delimiter and the string off the resolved list
        (a map there has no item 0: the bare ``KeyError`` text ``0``), then
        calls ``str.split`` and ``int`` unguarded, so a wrong delimiter,
        string or index type fails in Python's words."""
        args = resolve(self.args, resolver)
        if isinstance(args, dict):
            raise self.error(str(KeyError(0)))
        if not isinstance(args, list) or len(args) < 2:
            raise self.error(self._usage)
        delim, text = args[0], args[1]
        if text is None:
            return None
        parts = self._split(text, delim)
        if len(args) == 2:
            return parts
        try:
            index = int(args[2])
        except ValueError:
            raise self.error(
                f'Incorrect index to "{self.name}" should be: {self._example}'
            ) from None
        except (TypeError, OverflowError) as exc:
            raise self.error(str(exc)) from None
        try:
            return parts[index]
        except IndexError:
            raise self.error(
                f'Incorrect index to "{self.name}" should be between 0 and {len(parts) - 1}'
            ) from None

    def _split(self, text: Any, delim: Any) -> list[str]:
        """``text.split(delim)``, refusing what Python refuses, in its words."""
        if not isinstance(text, str):
            raise self.error(f"'{type(text).__name__}' object has no attribute 'split'")
        if delim is not None and not isinstance(delim, str):
            raise self.error(f"must be str or None, not {python_type_name(delim)}")
        if delim == "":
            raise self.error("empty separator")
        return text.split(delim)


class Digest(Function):
    """``digest: [algorithm, value]`` (2015-04-30): a hex digest, with any
    algorithm the platform's hashlib offers, as in Heat."""

    __slots__ = ()
    summary = "A function for performing digest operations."

    def result(self, resolver: Resolver) -> Any:
        args = resolve(self.args, resolver)
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise self.error(f'Argument to function "{self.name}" must be a list of strings')
        if len(args) != 2:
            raise self.error(f'Function "{self.name}" usage: ["<algorithm>", "<value>"]')
        algorithm, value = args[0].lower(), args[1]
        available = hashlib.algorithms_available
        if algorithm not in available:
            raise self.error(f"Algorithm must be one of {', '.join(sorted(available))}")
        try:
            digest = hashlib.new(algorithm)
            # Heat hashes the latin-1 bytes of the value (six.b on Python 3).
            digest.update(value.encode("latin-1"))
            return digest.hexdigest()
        except (TypeError, ValueError) as exc:
            raise self.error(f'"{self.name}" cannot digest this value: {exc}') from None


class MakeURL(Function):
    """``make_url: {scheme, username, password, host, port, path, query,
    fragment}`` (2017-09-01): a correctly escaped URL.

    Heat checks the keys and the literal values in ``validate`` and checks
    again after resolving; both happen here at the same points.
    """

    __slots__ = ()
    summary = "A function for performing substitutions on maps."
    keys: ClassVar[tuple[str, ...]] = (
        "scheme",
        "username",
        "password",
        "host",
        "port",
        "path",
        "query",
        "fragment",
    )

    def validate(self, scope: Scope, diags: Diagnostics) -> None:
        super().validate(scope, diags)
        if isinstance(self.args, Macro):
            return  # checked once expansion has chosen the arguments
        if not isinstance(self.args, dict):
            diags.error(f'The arguments to "{self.name}" must be a map', self.path)
            return
        invalid = [k for k in self.args if k not in self.keys]
        if invalid:
            diags.error(f'Invalid arguments to "{self.name}": {", ".join(invalid)}', self.path)
            return
        problem = self._check(self.args)
        if problem:
            diags.error(problem, self.path)

    def _check(self, args: dict[str, Any]) -> str | None:
        for key in self.keys:
            if key not in args:
                continue
            value = args[key]
            if key == "query":
                if not isinstance(value, dict | Function):
                    return f'The "query" argument to "{self.name}" must be a map'
                return None  # Heat stops checking at the query
            if isinstance(value, Function):
                continue
            if key == "port":
                problem = self._check_port(value, args)
                if problem:
                    return problem
            elif not isinstance(value, str):
                return f'The "{key}" argument to "{self.name}" must be a string'
        return None

    def _check_port(self, port: Any, args: dict[str, Any]) -> str | None:
        if not isinstance(port, int):
            try:
                port = int(port)
            except (TypeError, ValueError):
                return f'Invalid URL port "{port}" for {self.name} called with {args}'
        if not 0 < port <= 65535:
            return f"Invalid URL port {port}, must be in range 1-65535"
        return None

    def result(self, resolver: Resolver) -> Any:
        args = resolve(self.args, resolver)
        if not isinstance(args, dict):
            raise self.error(f'The arguments to "{self.name}" must be a map')
        problem = self._check(args)
        if problem:
            raise self.error(problem)
        scheme = args.get("scheme", "")
        if ":" in scheme:
            raise self.error("URL \"scheme\" should not contain ':'")
        path = urlparse.quote(args.get("path", ""))
        query = urlparse.urlencode(args.get("query", {})).replace("%2F", "/")
        fragment = urlparse.quote(args.get("fragment", ""))
        return urlparse.urlunsplit((scheme, self._netloc(args), path, query, fragment))

    @staticmethod
    def _netloc(args: dict[str, Any]) -> str:
        out = []
        username = urlparse.quote(args.get("username", ""), safe="")
        password = urlparse.quote(args.get("password", ""), safe="")
        if username or password:
            out.append(username)
            if password:
                out += [":", password]
            out.append("@")
        host = args.get("host", "")
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        host = urlparse.quote(host, safe=":")
        out.append(f"[{host}]" if ":" in host else host)
        port = args.get("port", "")
        if port:
            out += [":", str(port)]
        return "".join(out)
