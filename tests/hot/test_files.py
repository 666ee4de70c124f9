"""Reading get_file and template-resource files: resolution, confinement and
the files map, on real directories."""

from __future__ import annotations

import base64
import json
import os
import textwrap
from pathlib import Path

import pytest

from convection.common.diagnostics import Diagnostics
from convection.common.errors import InvalidInput
from convection.common.limits import Limits
from convection.hot.environment import merge_environments, parse_environment
from convection.hot.files import (
    FileAccessError,
    FileSource,
    StackFiles,
    base_url,
    collect_files,
    file_url,
    join_url,
    load_stack_files,
)
from convection.hot.loader import load


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def url(path: Path) -> str:
    return file_url(str(path))


def stack(
    template: Path, *envs: Path, diags: Diagnostics | None = None, **kwargs: object
) -> StackFiles:
    own = Diagnostics() if diags is None else diags
    result = load_stack_files(template, list(envs), diags=own, **kwargs)  # type: ignore[arg-type]
    if diags is None:
        assert not own.items, [str(d) for d in own]
    return result


def problems(template: Path, *envs: Path, **kwargs: object) -> list[str]:
    diags = Diagnostics()
    load_stack_files(template, list(envs), diags=diags, **kwargs)  # type: ignore[arg-type]
    return [str(d) for d in diags.errors]


SERVER = """\
heat_template_version: 2018-08-31
parameters:
  image: {type: string}
resources:
  server:
    type: OS::Nova::Server
    properties:
      image: {get_param: image}
      user_data: {get_file: scripts/boot.sh}
"""


def test_urls_follow_heatclient(tmp_path: Path) -> None:
    assert file_url(str(tmp_path / "a" / "t.yaml")) == f"file://{tmp_path}/a/t.yaml"
    assert base_url(f"file://{tmp_path}/a/t.yaml") == f"file://{tmp_path}/a/"
    assert join_url("file:///a/b/", "../c.sh") == "file:///a/c.sh"
    assert join_url("file:///a/b", "c.sh") == "file:///a/b/c.sh"
    assert join_url("file:///a/b/", "/etc/x") == "file:///etc/x"


def test_get_file_is_read_relative_to_the_template(tmp_path: Path) -> None:
    top = write(tmp_path / "stack" / "main.yaml", SERVER)
    write(tmp_path / "stack" / "scripts" / "boot.sh", "#!/bin/sh\necho hi\n")
    result = stack(top)
    key = url(tmp_path / "stack" / "scripts" / "boot.sh")
    assert result.files == {key: "#!/bin/sh\necho hi\n"}
    props = result.template.data["resources"]["server"]["properties"]
    assert props["user_data"] == {"get_file": key}
    assert result.template.source.mark(("resources", "server")) is not None
    assert result.template_url == url(top)


def test_template_resources_are_walked_and_stored_as_json(tmp_path: Path) -> None:
    top = write(
        tmp_path / "main.yaml",
        """\
        heat_template_version: 2018-08-31
        resources:
          web:
            type: lib/server.yaml
            properties: {image: fedora}
          group:
            type: OS::Heat::ResourceGroup
            properties:
              count: 2
              resource_def: {type: lib/server.yaml}
        """,
    )
    write(tmp_path / "lib" / "server.yaml", SERVER)
    write(tmp_path / "lib" / "scripts" / "boot.sh", "echo nested\n")
    result = stack(top)
    nested_key = url(tmp_path / "lib" / "server.yaml")
    script_key = url(tmp_path / "lib" / "scripts" / "boot.sh")
    assert set(result.files) == {nested_key, script_key}
    nested = json.loads(result.files[nested_key])
    assert nested["resources"]["server"]["properties"]["user_data"] == {"get_file": script_key}
    group = result.template.data["resources"]["group"]["properties"]["resource_def"]
    assert result.template.data["resources"]["web"]["type"] == nested_key == group["type"]
    doc = result.documents[nested_key]
    assert doc.data == nested
    mark = doc.source.mark(("resources", "server", "properties", "user_data"))
    assert mark is not None and mark.file.endswith("lib/server.yaml") and mark.line == 9


def test_get_file_of_a_template_is_json_as_heatclient_sends_it(tmp_path: Path) -> None:
    top = write(
        tmp_path / "main.yaml",
        """\
        heat_template_version: 2018-08-31
        resources:
          config:
            type: OS::Heat::SoftwareConfig
            properties:
              config: {get_file: inner.yaml}
              notes: {get_file: notes.yaml}
        """,
    )
    write(tmp_path / "inner.yaml", "heat_template_version: 2018-08-31\nresources: {}\n")
    write(tmp_path / "notes.yaml", "just: data\n")
    result = stack(top)
    assert result.files[url(tmp_path / "inner.yaml")] == (
        '{"heat_template_version": "2018-08-31", "resources": {}}'
    )
    assert result.files[url(tmp_path / "notes.yaml")] == "just: data\n"


def test_environment_paths_resolve_relative_to_the_environment(tmp_path: Path) -> None:
    top = write(
        tmp_path / "templates" / "main.yaml",
        """\
        heat_template_version: 2018-08-31
        resources:
          web: {type: "My::Server"}
          db: {type: "OS::Nova::Server"}
        """,
    )
    env_file = write(
        tmp_path / "templates" / "environments" / "prod.yaml",
        """\
        parameters:
          flavor: m1.large
        resource_registry:
          "My::Server": ../lib/server.yaml
          "OS::Neutron::FloatingIP": "OS::Heat::None"
          resources:
            db:
              "OS::Nova::Server": ../lib/db.yaml
              hooks: pre-create
        """,
    )
    write(tmp_path / "templates" / "lib" / "server.yaml", "heat_template_version: 2018-08-31\n")
    write(tmp_path / "templates" / "lib" / "db.yaml", "heat_template_version: 2018-08-31\n")
    result = stack(top, env_file)
    server = url(tmp_path / "templates" / "lib" / "server.yaml")
    db = url(tmp_path / "templates" / "lib" / "db.yaml")
    assert result.environment_files == (url(env_file),)
    registry = result.environments[0].data["resource_registry"]
    assert registry["My::Server"] == server
    assert registry["OS::Neutron::FloatingIP"] == "OS::Heat::None"
    assert registry["resources"]["db"] == {"OS::Nova::Server": db, "hooks": "pre-create"}
    assert json.loads(result.files[url(env_file)]) == result.environments[0].data
    assert server in result.files and db in result.files

    diags = Diagnostics()
    envs = [parse_environment(d, diags) for d in result.environments]
    merged = merge_environments(envs, diags=diags)
    assert not diags.items
    web = merged.resource_registry.resolve("My::Server", "web")
    assert (web.type_name, web.is_template) == (server, True)
    assert merged.resource_registry.resolve("OS::Nova::Server", "db").type_name == db


def test_base_url_in_the_registry(tmp_path: Path) -> None:
    top = write(tmp_path / "main.yaml", "heat_template_version: 2018-08-31\n")
    env_file = write(
        tmp_path / "env.yaml",
        """\
        resource_registry:
          base_url: lib
          "My::Server": server.yaml
        """,
    )
    write(tmp_path / "lib" / "server.yaml", "heat_template_version: 2018-08-31\n")
    result = stack(top, env_file)
    registry = result.environments[0].data["resource_registry"]
    assert registry == {"base_url": "lib", "My::Server": url(tmp_path / "lib" / "server.yaml")}


# --- confinement -------------------------------------------------------------


def get_file_template(tmp_path: Path, ref: str) -> Path:
    return write(
        tmp_path / "stack" / "main.yaml",
        f"""\
        heat_template_version: 2018-08-31
        resources:
          config:
            type: OS::Heat::SoftwareConfig
            properties:
              config: {{get_file: "{ref}"}}
        """,
    )


def test_dot_dot_escape_is_refused_at_the_get_file(tmp_path: Path) -> None:
    write(tmp_path / "secret.txt", "key")
    top = get_file_template(tmp_path, "../secret.txt")
    assert problems(top) == [
        f"{top}:6:16 resources.config.properties.config.get_file: get_file path "
        f'"../secret.txt" escapes the template directory {tmp_path / "stack"}; '
        "allow another directory explicitly to read it"
    ]


def test_dot_dot_that_stays_inside_is_fine(tmp_path: Path) -> None:
    write(tmp_path / "stack" / "scripts" / "run.sh", "run")
    top = get_file_template(tmp_path, "lib/../scripts/run.sh")
    assert stack(top).files == {url(tmp_path / "stack" / "scripts" / "run.sh"): "run"}


def test_symlink_out_of_the_root_is_refused(tmp_path: Path) -> None:
    write(tmp_path / "home" / ".ssh" / "id_rsa", "PRIVATE")
    top = get_file_template(tmp_path, "key.txt")
    os.symlink(tmp_path / "home" / ".ssh" / "id_rsa", tmp_path / "stack" / "key.txt")
    (message,) = problems(top)
    assert "resolves through a symbolic link to" in message
    assert str(tmp_path / "home" / ".ssh" / "id_rsa") in message


def test_symlinked_directory_out_of_the_root_is_refused(tmp_path: Path) -> None:
    write(tmp_path / "elsewhere" / "x.sh", "x")
    top = get_file_template(tmp_path, "linked/x.sh")
    os.symlink(tmp_path / "elsewhere", tmp_path / "stack" / "linked")
    (message,) = problems(top)
    assert "symbolic link" in message


def test_symlink_inside_the_root_is_fine(tmp_path: Path) -> None:
    write(tmp_path / "stack" / "real" / "x.sh", "x")
    top = get_file_template(tmp_path, "alias.sh")
    os.symlink(tmp_path / "stack" / "real" / "x.sh", tmp_path / "stack" / "alias.sh")
    assert list(stack(top).files.values()) == ["x"]


def test_root_reached_through_a_symlink_still_works(tmp_path: Path) -> None:
    write(tmp_path / "real" / "stack" / "boot.sh", "boot")
    os.symlink(tmp_path / "real", tmp_path / "link")
    top = write(
        tmp_path / "link" / "stack" / "main.yaml",
        "heat_template_version: 2018-08-31\noutputs:\n  o: {value: {get_file: boot.sh}}\n",
    )
    assert list(stack(top).files.values()) == ["boot"]


def test_absolute_paths_and_file_urls(tmp_path: Path) -> None:
    inside = write(tmp_path / "stack" / "inside.txt", "in")
    write(tmp_path / "outside.txt", "out")
    top = get_file_template(tmp_path, str(inside))
    assert stack(top).files == {url(inside): "in"}
    top = get_file_template(tmp_path, url(inside))
    assert stack(top).files == {url(inside): "in"}
    top = get_file_template(tmp_path, str(tmp_path / "outside.txt"))
    (message,) = problems(top)
    assert f'"{tmp_path / "outside.txt"}" is outside the template directory' in message
    top = get_file_template(tmp_path, "file:///etc/passwd")
    (message,) = problems(top)
    assert '"file:///etc/passwd" is outside the template directory' in message


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("https://example.com/boot.sh", "is a remote URL; Convection does not fetch"),
        ("http://example.com/boot.sh", "is a remote URL"),
        ("ftp://example.com/boot.sh", "unsupported URL scheme (ftp)"),
        ("file://otherhost/boot.sh", "unsupported URL scheme (file)"),
    ],
)
def test_network_urls_are_refused(tmp_path: Path, ref: str, expected: str) -> None:
    (message,) = problems(get_file_template(tmp_path, ref))
    assert expected in message


def test_extra_roots_allow_more_directories(tmp_path: Path) -> None:
    shared = write(tmp_path / "shared" / "common.sh", "common")
    top = get_file_template(tmp_path, "../shared/common.sh")
    assert problems(top)
    result = stack(top, extra_roots=[tmp_path / "shared"])
    assert result.files == {url(shared): "common"}
    (message,) = problems(get_file_template(tmp_path, "../elsewhere.sh"), extra_roots=["/opt"])
    assert f"escapes the allowed directories ({tmp_path / 'stack'}, /opt)" in message


def test_environment_outside_the_root_gets_no_special_access(tmp_path: Path) -> None:
    top = write(tmp_path / "stack" / "main.yaml", "heat_template_version: 2018-08-31\n")
    env_file = write(tmp_path / "envs" / "prod.yaml", 'resource_registry: {"My::X": x.yaml}\n')
    write(tmp_path / "envs" / "x.yaml", "heat_template_version: 2018-08-31\n")
    (message,) = problems(top, env_file)
    assert message.startswith(f"{env_file}:1:21 resource_registry.My::X: resource_registry ")
    assert 'path "x.yaml" is outside' not in message and "escapes the template directory" in message
    assert stack(top, env_file, extra_roots=[tmp_path / "envs"]).files


def test_missing_directory_and_oversized_files(tmp_path: Path) -> None:
    (message,) = problems(get_file_template(tmp_path, "nope.sh"))
    assert 'get_file path "nope.sh" not found' in message
    (tmp_path / "stack" / "dir").mkdir()
    (message,) = problems(get_file_template(tmp_path, "dir"))
    assert 'get_file path "dir" is a directory' in message
    write(tmp_path / "stack" / "big.bin", "x" * 2000)
    (message,) = problems(
        get_file_template(tmp_path, "big.bin"), limits=Limits(max_template_size=1000)
    )
    assert "is too large: it exceeds the maximum allowed size (1000 bytes)" in message


def test_fifo_is_not_read(tmp_path: Path) -> None:
    top = get_file_template(tmp_path, "pipe")
    os.mkfifo(tmp_path / "stack" / "pipe")
    (message,) = problems(top)
    assert "is not a regular file" in message


def test_binary_content_is_base64_as_heatclient_sends_it(tmp_path: Path) -> None:
    top = get_file_template(tmp_path, "logo.png")
    (tmp_path / "stack" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\xff")
    (content,) = stack(top).files.values()
    assert base64.b64decode(content) == b"\x89PNG\r\n\x1a\n\xff"


# --- the files map -----------------------------------------------------------


def test_files_map_wins_by_exact_name_and_by_url(tmp_path: Path) -> None:
    top = write(
        tmp_path / "main.yaml",
        """\
        heat_template_version: 2018-08-31
        resources:
          a: {type: OS::Heat::SoftwareConfig, properties: {config: {get_file: a.sh}}}
          b: {type: OS::Heat::SoftwareConfig, properties: {config: {get_file: b.sh}}}
        """,
    )
    write(tmp_path / "b.sh", "from disk")
    given = {"a.sh": "from the map", url(tmp_path / "b.sh"): "map by url"}
    result = stack(top, files=given)
    assert result.files == given
    resources = result.template.data["resources"]
    assert resources["a"]["properties"]["config"] == {"get_file": "a.sh"}
    assert resources["b"]["properties"]["config"] == {"get_file": url(tmp_path / "b.sh")}


def test_files_map_entries_skip_confinement_but_not_the_size_limit(tmp_path: Path) -> None:
    source = FileSource(
        tmp_path,
        files={"../../etc/x": "ok", "big": "y" * 50},
        limits=Limits(max_template_size=10),
    )
    assert source.lookup("../../etc/x", url(tmp_path / "t.yaml")) == ("../../etc/x", "ok")
    with pytest.raises(FileAccessError, match="too large"):
        source.lookup("big", url(tmp_path / "t.yaml"))


# --- nesting -------------------------------------------------------------------


def test_nesting_deeper_than_the_limit_is_refused(tmp_path: Path) -> None:
    for level in range(1, 4):
        write(
            tmp_path / f"level{level}.yaml",
            "heat_template_version: 2018-08-31\n"
            f"resources:\n  next: {{type: level{level + 1}.yaml}}\n",
        )
    write(tmp_path / "level4.yaml", "heat_template_version: 2018-08-31\n")
    top = tmp_path / "level1.yaml"
    assert len(stack(top, limits=Limits(max_nested_stack_depth=3)).files) == 3
    (message,) = problems(top, limits=Limits(max_nested_stack_depth=2))
    assert message == (
        f"{tmp_path / 'level3.yaml'}:3:10 resources.next.type: Recursion depth exceeds 2."
    )


def test_templates_that_name_each_other_are_walked_once(tmp_path: Path) -> None:
    write(
        tmp_path / "a.yaml",
        "heat_template_version: 2018-08-31\nresources:\n  b: {type: b.yaml}\n",
    )
    write(
        tmp_path / "b.yaml",
        "heat_template_version: 2018-08-31\nresources:\n  a: {type: a.yaml}\n",
    )
    result = stack(tmp_path / "a.yaml")
    a, b = url(tmp_path / "a.yaml"), url(tmp_path / "b.yaml")
    assert set(result.files) == {a, b}
    assert json.loads(result.files[b])["resources"]["a"]["type"] == a
    assert json.loads(result.files[a]) == result.template.data


def test_a_broken_nested_template_is_reported_in_its_own_file(tmp_path: Path) -> None:
    top = write(
        tmp_path / "main.yaml",
        "heat_template_version: 2018-08-31\nresources:\n  web: {type: web.yaml}\n",
    )
    write(tmp_path / "web.yaml", "heat_template_version: 2018-08-31\nresources:\n\tbad: 1\n")
    (message,) = problems(top)
    assert "web.yaml:3:1" in message and "tab character" in message


def test_unreadable_top_level_files_raise(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="cannot read template"):
        load_stack_files(tmp_path / "missing.yaml", diags=Diagnostics())
    top = write(tmp_path / "main.yaml", "heat_template_version: 2018-08-31\n")
    with pytest.raises(InvalidInput, match="cannot read environment file"):
        load_stack_files(top, [tmp_path / "missing-env.yaml"], diags=Diagnostics())


def test_oversized_top_level_template_reports_its_size(tmp_path: Path) -> None:
    top = write(tmp_path / "main.yaml", "heat_template_version: 2018-08-31\n" + "#" * 300)
    with pytest.raises(InvalidInput, match=r"Template size \(334 bytes\) exceeds maximum"):
        load_stack_files(top, diags=Diagnostics(), limits=Limits(max_template_size=100))


def test_relative_roots_are_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "stack" / "run.sh", "run")
    monkeypatch.chdir(tmp_path)
    source = FileSource("stack", extra_roots=["shared"])
    assert source.roots == (str(tmp_path / "stack"), str(tmp_path / "shared"))
    assert source.lookup("run.sh", base_url(url(tmp_path / "stack" / "t.yaml")))[1] == "run"


def test_collect_files_from_loaded_documents(tmp_path: Path) -> None:
    top = get_file_template(tmp_path, "run.sh")
    write(tmp_path / "stack" / "run.sh", "run")
    doc = load(top.read_text(), str(top))
    diags = Diagnostics()
    result = collect_files(doc, [], FileSource.for_template(top), diags=diags)
    assert not diags.items
    assert result.files == {url(tmp_path / "stack" / "run.sh"): "run"}
    assert result.environments == () and result.environment_files == ()
    missing = load(get_file_template(tmp_path, "gone.sh").read_text(), str(top))
    with pytest.raises(InvalidInput, match=r'get_file path "gone\.sh" not found'):
        collect_files(missing, [], FileSource(tmp_path / "stack"))
