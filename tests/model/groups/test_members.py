"""Member names, index substitution, removal policies and batch members."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from convection.model.groups.members import (
    Member,
    member_definition,
    member_definitions,
    member_names,
    ordered,
    rolling_members,
    short_id,
    substitute_index,
    updated_blacklist,
)

OLD = {"type": "T", "properties": {"v": "old"}}
NEW = {"type": "T", "properties": {"v": "new"}}


def test_index_var_is_substituted_in_strings_at_any_depth_only() -> None:
    value = {"a": "x-%index%", "b": ["%index%", {"c": "%index%%index%"}], "n": 3, "t": True}
    assert substitute_index(value, "%index%", "7") == {
        "a": "x-7",
        "b": ["7", {"c": "77"}],
        "n": 3,
        "t": True,
    }


def test_member_definition_substitutes_properties_not_metadata_and_drops_nulls() -> None:
    rdef = {"type": "T", "properties": {"name": "s-$i", "gone": None}, "metadata": {"m": "$i"}}
    assert member_definition(rdef, "2", "$i") == {
        "type": "T",
        "properties": {"name": "s-2"},
        "metadata": {"m": "$i"},
    }


def test_names_skip_the_blacklist_and_never_reuse_it() -> None:
    assert member_names(3) == ["0", "1", "2"]
    assert member_names(3, {"1"}) == ["0", "2", "3"]
    assert member_names(0, {"0"}) == []


@given(size=st.integers(0, 30), banned=st.sets(st.integers(0, 40).map(str)))
def test_names_are_unique_and_never_blacklisted(size: int, banned: set[str]) -> None:
    names = member_names(size, banned)
    assert len(names) == size == len(set(names))
    assert not set(names) & banned


def test_removal_policies_append_by_name_int_and_reference() -> None:
    members = ["0", "1", "2"]
    refs = {"0": "id-a", "1": "id-b", "2": "id-c"}
    policies = [{"resource_list": [1, "id-c", "nope"]}]
    assert updated_blacklist([], "append", policies, members, refs, created=True) == ["1", "2"]
    # append keeps what was removed before
    later = updated_blacklist(["5"], "append", [{"resource_list": ["0"]}], members, refs, True)
    assert later == ["0", "5"]


def test_removal_policies_update_mode_starts_afresh() -> None:
    members = ["0", "1"]
    assert updated_blacklist(["0"], "update", [], members, None, created=True) == []
    # a name listed again stays on the list even when no longer a member
    assert updated_blacklist(["9"], "update", [{"resource_list": ["9"]}], members, None, True) == [
        "9"
    ]


def test_before_create_every_entry_is_a_name() -> None:
    assert updated_blacklist([], "append", [{"resource_list": ["x"]}], [], None, False) == ["x"]


def test_member_order_puts_failed_first_then_oldest() -> None:
    ms = [Member("b", OLD, order=2), Member("a", OLD, order=1), Member("c", OLD, failed=True)]
    assert [m.name for m in ordered(ms, include_failed=True)] == ["c", "a", "b"]
    assert [m.name for m in ordered(ms, include_failed=False)] == ["a", "b"]


def _custom(name: str) -> dict[str, Any]:
    return dict(NEW)


def test_member_definitions_replace_num_new_in_order_and_create_the_rest() -> None:
    old = [("a", OLD), ("b", OLD), ("c", OLD)]
    names = iter(["x", "y"])
    out = member_definitions(old, 4, 2, lambda: next(names), _custom)
    # one new member (x) and one replaced (a)
    assert out == [("a", NEW), ("b", OLD), ("c", OLD), ("x", NEW)]


def test_member_definitions_shrink_from_the_front() -> None:
    old = [("a", OLD), ("b", OLD), ("c", OLD)]
    assert [n for n, _ in member_definitions(old, 2, 0, lambda: "z", _custom)] == ["b", "c"]
    assert member_definitions(old, 0, 0, lambda: "z", _custom) == []


def test_rolling_batch_updates_highest_index_first() -> None:
    existing = [Member(str(i), OLD, order=i) for i in range(4)]
    defs, names = rolling_members(existing, [], target=4, capacity=4, num_new=1, customise=_custom)
    assert names == ["0", "1", "2", "3"]
    assert dict(defs)["3"] == NEW
    assert [n for n, d in defs if d == NEW] == ["3"]


def test_rolling_batch_with_growth_creates_temporary_members() -> None:
    existing = [Member(str(i), OLD, order=i) for i in range(4)]
    defs, _ = rolling_members(existing, [], target=4, capacity=6, num_new=2, customise=_custom)
    got = dict(defs)
    assert set(got) == {"0", "1", "2", "3", "4", "5"}
    assert got["4"] == got["5"] == NEW  # the new members take the batch
    assert all(got[n] == OLD for n in "0123")


def test_rolling_batch_removes_blacklisted_first() -> None:
    existing = [Member(str(i), OLD, order=i) for i in range(3)]
    defs, names = rolling_members(
        existing, ["0"], target=2, capacity=2, num_new=1, customise=_custom
    )
    assert names == ["1", "2"]
    assert dict(defs) == {"1": OLD, "2": NEW}


def test_short_ids_are_stable_and_distinct() -> None:
    assert short_id("seed", 1) == short_id("seed", 1)
    assert short_id("seed", 1) != short_id("seed", 2)
    assert len(short_id("seed", 1)) == 12 and short_id("s", 0).isalnum()


@given(
    size=st.integers(0, 12),
    target=st.integers(0, 12),
    batch=st.integers(1, 5),
    min_in_service=st.integers(0, 14),
)
def test_a_whole_rolling_update_ends_with_every_member_new(
    size: int, target: int, batch: int, min_in_service: int
) -> None:
    """Run every batch of a ResourceGroup rolling update, purely: the group
    ends at the target names, all on the new definition, and no batch takes
    more than its size of old members out of service."""
    from convection.model.groups.rolling import resource_group_batches

    current: list[tuple[str, dict[str, Any]]] = [(str(i), dict(OLD)) for i in range(size)]
    for step in resource_group_batches(target, size, batch, min_in_service):
        existing = [Member(n, d, order=i) for i, (n, d) in enumerate(current)]
        defs, _ = rolling_members(existing, [], target, step.capacity, step.updates, _custom)
        changed = [n for n, d in defs if d == NEW and dict(current).get(n) != NEW]
        assert len(changed) <= step.updates
        kept_old = sum(1 for n, d in defs if d == OLD)
        was_old = sum(1 for _, d in current if d == OLD)
        if target >= size:  # shrinking removes the surplus at once, as Heat does
            assert was_old - kept_old <= batch  # at most a batch leaves service per step
        current = defs
    assert dict(current) == {str(i): NEW for i in range(target)}
