"""Files named by templates and environments: reading them, confined.

``get_file`` and template resources make a template read other files. Heat's
client (``heatclient/common/template_utils.py``) resolves each relative name
against the URL of the file that names it, reads it, and sends a ``files``
map keyed by the absolute ``file://`` URL, rewriting the reference to that
URL. The server then only ever looks names up in the map. We do the same in
one place, :func:`collect_files`, so everything after it is pure and works
from the map alone, and a stored stack can be replayed without the disk.

Unlike the client, reading is confined: a template is often someone else's
code, and ``get_file: ../../.ssh/id_rsa`` would otherwise ship a private key
into a stack's outputs. Nothing is read outside the allowed roots (by default
the top template's directory), symlinks are resolved before the check, and
nothing is fetched over the network. Names already in an explicit ``files``
map (as Heat's API carries them) win and are never checked or read.

Client quirks kept on purpose, since users see their results: a fetched file
that parses as a template is walked too and stored as JSON text; text that
is not UTF-8 is stored base64-encoded; only ``.yaml``/``.template`` types are
template resources; any ``resource_registry`` value without ``::`` is a file.
"""

from __future__ import annotations

import base64
import copy
import json
import os
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urljoin, urlsplit
from urllib.request import pathname2url, url2pathname

from convection.common import (
    DEFAULT_LIMITS,
    JSON,
    ConvectionError,
    Diagnostic,
    Diagnostics,
    InvalidInput,
    LimitExceeded,
    Limits,
    Mark,
    Path,
)
from convection.hot.environment import is_template_name
from convection.hot.loader import Document, load
from convection.hot.stored import CFN_VERSION_KEYS, is_cfn

__all__ = [
    "FileAccessError",
    "FileSource",
    "StackFiles",
    "base_url",
    "collect_files",
    "file_url",
    "join_url",
    "load_stack_files",
]

#: Keys whose presence makes a document a template, as heatclient checks.
_VERSION_KEYS = ("heat_template_version", *CFN_VERSION_KEYS)
_REGISTRY_SKIP = ("base_url", "hooks", "restricted_actions")


class FileAccessError(ConvectionError):
    """A named file may not, or cannot, be read; the message says which and why."""


def file_url(path: str | os.PathLike[str]) -> str:
    """The ``file://`` URL heatclient makes of a local path (absolute, not resolved)."""
    return urljoin("file:", pathname2url(os.path.abspath(path)))


def base_url(url: str) -> str:
    """The directory URL that names in ``url`` are relative to, with a trailing slash."""
    if "://" not in url and not url.startswith("file:"):
        url = file_url(url)
    directory = urljoin(url, os.path.dirname(urlsplit(url).path))
    return directory if directory.endswith("/") else directory + "/"


def join_url(base: str, ref: str) -> str:
    """Resolve a reference as heatclient does: ``urljoin(base, ref)``."""
    return urljoin(base if base.endswith("/") else base + "/", ref)


def _display(path: str) -> str:
    """A path as users typed it: relative when under the working directory."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def _within(path: str, root: str) -> bool:
    return path == root or os.path.commonpath([path, root]) == root


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return base64.encodebytes(data).decode("ascii")  # heatclient's fallback


class FileSource:
    """Where file references are read from: an explicit map, then confined disk.

    Immutable after construction, so one source can serve concurrent reads.
    """

    __slots__ = ("files", "limits", "roots")

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        extra_roots: Sequence[str | os.PathLike[str]] = (),
        files: Mapping[str, str] | None = None,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        #: Allowed directories, absolute; the first is "the template directory".
        self.roots: tuple[str, ...] = tuple(os.path.abspath(r) for r in (root, *extra_roots))
        #: Names to contents, as Heat's API ``files`` carries them; looked up first.
        self.files: Mapping[str, str] = dict(files or {})
        self.limits = limits

    def __repr__(self) -> str:
        return f"FileSource(roots={self.roots!r}, files={len(self.files)} entries)"

    @classmethod
    def for_template(
        cls,
        template_path: str | os.PathLike[str],
        *,
        extra_roots: Sequence[str | os.PathLike[str]] = (),
        files: Mapping[str, str] | None = None,
        limits: Limits = DEFAULT_LIMITS,
    ) -> FileSource:
        """Confine reads to the template's directory plus ``extra_roots``."""
        top = os.path.dirname(os.path.abspath(template_path))
        return cls(top, extra_roots=extra_roots, files=files, limits=limits)

    def lookup(self, ref: str, base: str, *, what: str = "get_file") -> tuple[str, str]:
        """``(name, content)`` for ``ref`` relative to the directory URL ``base``
        (see :func:`base_url`).

        ``name`` is the key the ``files`` map uses: the reference itself when
        the map has it, else the absolute URL. Raises :class:`FileAccessError`.
        """
        if ref in self.files:
            return ref, self._sized(ref, self.files[ref], what)
        url = join_url(base, ref)
        if url in self.files:
            return url, self._sized(ref, self.files[url], what)
        return url, self._read(ref, url, what)

    def _sized(self, ref: str, content: str, what: str) -> str:
        size = len(content.encode("utf-8"))
        if size > self.limits.max_template_size:
            raise FileAccessError(
                f'{what} path "{ref}" is too large: {size} bytes exceeds the maximum '
                f"allowed size ({self.limits.max_template_size} bytes)"
            )
        return content

    def _where(self) -> str:
        if len(self.roots) == 1:
            return f"the template directory {self.roots[0]}"
        return "the allowed directories (" + ", ".join(self.roots) + ")"

    def _local_path(self, ref: str, url: str, what: str) -> str:
        parts = urlsplit(url)
        if parts.scheme in ("http", "https"):
            raise FileAccessError(
                f'{what} path "{ref}" is a remote URL; Convection does not fetch over the '
                "network (download it next to the template, or pass it in the files map)"
            )
        if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
            scheme = parts.scheme or "no"
            raise FileAccessError(f'{what} path "{ref}" has an unsupported URL scheme ({scheme})')
        return os.path.normpath(url2pathname(parts.path))

    def _confine(self, ref: str, path: str, what: str) -> str:
        """The real path to open, if it lies inside a root after resolving links."""
        real = os.path.realpath(path)
        real_roots = [os.path.realpath(r) for r in self.roots]
        if any(_within(real, r) for r in real_roots):
            return real
        if any(_within(path, r) for r in (*self.roots, *real_roots)):
            raise FileAccessError(
                f'{what} path "{ref}" resolves through a symbolic link to {real}, '
                f"outside {self._where()}"
            )
        relative = not urlsplit(ref).scheme and not ref.startswith("/")
        verb = "escapes" if relative else "is outside"
        raise FileAccessError(
            f'{what} path "{ref}" {verb} {self._where()}; '
            "allow another directory explicitly to read it"
        )

    def _read(self, ref: str, url: str, what: str) -> str:
        try:
            real = self._confine(ref, self._local_path(ref, url, what), what)
            info = os.stat(real)
        except FileNotFoundError:
            raise FileAccessError(f'{what} path "{ref}" not found ({url})') from None
        except (OSError, ValueError) as exc:
            raise FileAccessError(f'{what} path "{ref}" cannot be read: {exc}') from None
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise FileAccessError(f'{what} path "{ref}" is {kind} ({real})')
        limit = self.limits.max_template_size
        try:
            # O_NOFOLLOW: a link swapped in after the check is refused, not followed.
            flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
            with os.fdopen(os.open(real, flags), "rb") as handle:
                data = handle.read(limit + 1)
        except OSError as exc:
            raise FileAccessError(f'{what} path "{ref}" cannot be read: {exc}') from None
        if len(data) > limit:
            raise FileAccessError(
                f'{what} path "{ref}" is too large: it exceeds the maximum allowed size '
                f"({limit} bytes)"
            )
        return _decode(data)


@dataclass(frozen=True, slots=True)
class StackFiles:
    """Everything a stack operation needs from disk, as values."""

    #: The top template, its references rewritten to ``files`` keys.
    template: Document
    template_url: str
    #: Environment files in order, their registry paths rewritten.
    environments: tuple[Document, ...]
    #: Heat's ``files`` map: nested templates as JSON text, other files as read,
    #: and each environment file (as heatclient sends them).
    files: Mapping[str, str]
    #: Heat's ``environment_files``: the ``files`` keys of the environments, in order.
    environment_files: tuple[str, ...]
    #: Nested templates parsed, rewritten and located in their own files, by ``files`` key.
    documents: Mapping[str, Document]


class _Collector:
    """One walk over a template tree, as heatclient's ``get_file_contents``."""

    def __init__(self, source: FileSource, diags: Diagnostics) -> None:
        self.source = source
        self.diags = diags
        self.files: dict[str, str] = {}
        self.documents: dict[str, Document] = {}
        self.open: set[str] = set()
        self.reopened: set[str] = set()

    def template(self, doc: Document, url: str, depth: int) -> Document:
        """The document with each file it names fetched and the name rewritten.

        It is copied only when it names a file: most templates name none,
        and copying a large one costs more than everything else here.
        """
        references = list(_references(doc.data))
        if not references:
            return doc
        data = copy.deepcopy(doc.data)
        base = base_url(url)
        self.open.add(url)
        for path, what, ref in references:
            _replace_at(data, path, self.fetch(doc, base, ref, path, depth, what))
        self.open.discard(url)
        return replace(doc, data=data)

    def environment(self, doc: Document, url: str) -> Document:
        data = copy.deepcopy(doc.data)
        registry = data.get("resource_registry")
        if isinstance(registry, dict):
            top = _registry_base(registry, base_url(url))
            self._registry_level(doc, registry, ("resource_registry",), top)
            resources = registry.get("resources")
            for name, entry in resources.items() if isinstance(resources, dict) else ():
                if isinstance(entry, dict):
                    where = ("resource_registry", "resources", name)
                    self._registry_level(doc, entry, where, _registry_base(entry, top))
        return replace(doc, data=data)

    def _registry_level(self, doc: Document, level: dict[str, JSON], path: Path, base: str) -> None:
        # heatclient reads every string value without "::" at this one level.
        for key, value in level.items():
            if key in _REGISTRY_SKIP or not isinstance(value, str) or "::" in value:
                continue
            level[key] = self.fetch(doc, base, value, (*path, key), 0, "resource_registry")

    def fetch(self, doc: Document, base: str, ref: str, path: Path, depth: int, what: str) -> str:
        """Read one reference into the map; returns the name to write in its place."""
        try:
            name, content = self.source.lookup(ref, base, what=what)
        except FileAccessError as exc:
            self.diags.add(doc.source.diagnostic(str(exc), path))
            return ref
        if name in self.open:
            self.reopened.add(name)
        elif name not in self.files:
            url = join_url(base, name)
            strict = what == "template resource" or (what != "get_file" and is_template_name(url))
            self.files[name] = self._content(name, url, content, doc, path, depth, strict)
        return name

    def _content(
        self, name: str, url: str, content: str, doc: Document, path: Path, depth: int, strict: bool
    ) -> str:
        nested = self._as_template(url, content, strict=strict)
        if nested is None:
            return content
        limit = self.source.limits.max_nested_stack_depth
        if depth + 1 > limit:
            self.diags.add(doc.source.diagnostic(f"Recursion depth exceeds {limit}.", path))
            return content
        rewritten = self.template(nested, url, depth + 1)
        self.documents[name] = rewritten
        return json.dumps(rewritten.data)

    def _as_template(self, url: str, content: str, *, strict: bool) -> Document | None:
        """The file as a template document, or None when it is plain content."""
        parts = urlsplit(url)
        shown = _display(url2pathname(parts.path)) if parts.scheme == "file" else url
        try:
            doc = load(content, shown, limits=self.source.limits)
        except InvalidInput as exc:
            if strict:  # a template resource that does not load cannot work
                self.diags.extend(exc.diagnostics)
            return None
        if not any(key in doc.data for key in _VERSION_KEYS):
            return None
        self.diags.extend(doc.warnings)
        return doc


def _references(data: JSON) -> Iterator[tuple[Path, str, str]]:
    """Where a template names a file, in document order, as heatclient walks
    it: ``(path, what, name)`` for each ``get_file: name`` and each ``type``
    that is a template name. In a CloudFormation-format template a
    resource's ``Type`` is read too (heatclient reads only ``type``), so a
    template resource written there works from the CLI as in HOT."""
    cfn = is_cfn(data)
    stack: list[tuple[Iterator[tuple[str | int, JSON]], Path]] = [(_members(data), ())]
    while stack:
        members, path = stack[-1]
        for key, value in members:
            if isinstance(value, dict | list):
                stack.append((_members(value), (*path, key)))
                break
            if key == "get_file" and isinstance(value, str):
                yield (*path, key), "get_file", value
            elif (
                _is_type_key(key, path, cfn) and isinstance(value, str) and is_template_name(value)
            ):
                yield (*path, key), "template resource", value
        else:
            stack.pop()


def _is_type_key(key: str | int, path: Path, cfn: bool) -> bool:
    return key == "type" or (cfn and key == "Type" and len(path) == 2 and path[0] == "Resources")


def _is_template_ref(value: JSON) -> bool:
    return isinstance(value, str) and is_template_name(value)


def _members(node: JSON) -> Iterator[tuple[str | int, JSON]]:
    if isinstance(node, dict):
        return iter(node.items())
    if isinstance(node, list):
        return enumerate(node)
    return iter(())


def _replace_at(data: JSON, path: Path, value: str) -> None:
    node: Any = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


def _registry_base(level: dict[str, JSON], base: str) -> str:
    """A registry level's ``base_url``, relative to the environment file."""
    value = level.get("base_url")
    return join_url(base, value.rstrip("/") + "/") if isinstance(value, str) else base


def collect_files(
    template: Document,
    environments: Sequence[Document],
    source: FileSource,
    *,
    diags: Diagnostics | None = None,
    template_url: str | None = None,
    environment_urls: Sequence[str] | None = None,
) -> StackFiles:
    """Walk a template, its environments and every nested template they name,
    as heatclient does before ``stack create``, and return the files map.

    URLs default to ``file_url(doc.name)``. Problems become diagnostics
    located at the reference (the ``get_file`` or ``type`` that named the
    file); without ``diags`` they raise :class:`InvalidInput` at the end.
    """
    own = Diagnostics() if diags is None else diags
    collector = _Collector(source, own)
    top_url = template_url or file_url(template.name)
    env_urls = list(environment_urls or [file_url(d.name) for d in environments])
    envs = tuple(collector.environment(d, u) for d, u in zip(environments, env_urls, strict=True))
    top = collector.template(template, top_url, 0)
    if top_url in collector.reopened:  # the template names itself
        collector.files[top_url] = json.dumps(top.data)
        collector.documents[top_url] = top
    for env, url in zip(envs, env_urls, strict=True):
        collector.files[url] = json.dumps(env.data)
    if diags is None and own.has_errors:
        raise InvalidInput(own.items)
    return StackFiles(
        template=top,
        template_url=top_url,
        environments=envs,
        files=collector.files,
        environment_files=tuple(env_urls),
        documents=collector.documents,
    )


def _load_given(path: str | os.PathLike[str], what: str, limits: Limits) -> Document:
    """Read a file the user named on the command line (not confined)."""
    name = os.fspath(path)
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            data = handle.read(limits.max_template_size + 1)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise InvalidInput([Diagnostic(f"cannot read {what} {name}: {reason}")]) from None
    if len(data) > limits.max_template_size:
        raise LimitExceeded(
            [
                Diagnostic(
                    f"Template size ({size} bytes) exceeds maximum allowed size "
                    f"({limits.max_template_size} bytes).",
                    (),
                    Mark(name, 1, 1),
                )
            ]
        )
    return load(data, name, limits=limits)


def load_stack_files(
    template_path: str | os.PathLike[str],
    environment_paths: Sequence[str | os.PathLike[str]] = (),
    *,
    diags: Diagnostics,
    extra_roots: Sequence[str | os.PathLike[str]] = (),
    files: Mapping[str, str] | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> StackFiles:
    """What ``stack create -t T -e E1 -e E2`` reads, confined to T's directory.

    Raises :class:`InvalidInput` when the template or an environment file
    cannot be read or parsed at all; other problems go to ``diags``.
    """
    template = _load_given(template_path, "template", limits)
    environments = [_load_given(p, "environment file", limits) for p in environment_paths]
    for doc in (template, *environments):
        diags.extend(doc.warnings)
    source = FileSource.for_template(
        template_path, extra_roots=extra_roots, files=files, limits=limits
    )
    return collect_files(
        template,
        environments,
        source,
        diags=diags,
        template_url=file_url(template_path),
        environment_urls=[file_url(p) for p in environment_paths],
    )
