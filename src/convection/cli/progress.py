"""``--wait``: run the embedded engine here and show the operation's progress.

Without a server, whoever waits does the work: the engine coroutine runs on
this process's event loop, next to a loop that polls the store a few times
a second and draws what it sees. The engine stops once every stack waited
on has settled (any rollback included), or when the user presses Ctrl-C:

* the first Ctrl-C asks the engine to stop. Nothing new starts, running
  jobs record their outcome, and the traversal stays IN_PROGRESS in the
  store, so ``convection engine`` or another ``--wait`` resumes it;
* a second Ctrl-C abandons the running jobs too; their leases lapse and the
  next engine runs them again (jobs are idempotent).

On a terminal the display is live (Rich): counts by state, the resources in
flight, failures with their reasons, elapsed time. Anywhere else it prints
heatclient's event log lines, which read well in CI logs.

Against a server (``--url``) the server runs the engine: the same loop
polls the API and draws the same progress, with a
:class:`~convection.cli.remote.watch.ServerWatch` where the engine was; it
backs off while nothing changes, and Ctrl-C only stops the watching.

The loop itself (:func:`watch`) knows neither stacks nor executions: a
:class:`Poller` says what a poll sees and when it has all settled, a view
draws it. Stacks' are here; workflow executions' are in
:mod:`convection.cli.execution_wait`.
"""

from __future__ import annotations

import signal
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from convection.cli.remote.watch import Runner, ServerWatch, backoff

if TYPE_CHECKING:
    # asyncio is imported where a wait runs: every stack command imports
    # this module, and most never wait.
    import asyncio

    from convection.cli.context import StackReading, StackService

#: Bounds of the polling interval (seconds); it grows when a poll is slow,
#: so drawing never takes more than about a fifth of the engine's loop.
MIN_POLL, MAX_POLL = 0.25, 2.0
#: In-flight resources shown by the live display.
SHOWN_IN_FLIGHT = 12


@dataclass(frozen=True, slots=True)
class Target:
    """A stack waited on, and the status it must end in."""

    stack_id: str
    name: str
    #: The status that counts as success (``CREATE_COMPLETE``).
    expect: str


@dataclass(slots=True)
class Frame:
    """What one poll saw."""

    elapsed: float
    stacks: list[dict[str, Any]]
    resources: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: Stack id -> resources waiting at a hook (``Stacks.hook_poll``).
    hooks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    stopping: bool = False


@dataclass(frozen=True, slots=True)
class WaitResult:
    targets: tuple[Target, ...]
    #: Each target as ``Stacks.show`` returns it, at the end.
    stacks: list[dict[str, Any]]
    interrupted: bool

    def failed(self) -> list[dict[str, Any]]:
        """Stacks that did not end as expected (a rollback is a failure)."""
        return [
            s
            for t, s in zip(self.targets, self.stacks, strict=True)
            if s["stack_status"] != t.expect
        ]

    def exit_code(self) -> int:
        if self.interrupted:
            return 130
        return 1 if self.failed() else 0


def in_progress(stack: dict[str, Any]) -> bool:
    return str(stack["stack_status"]).endswith("_IN_PROGRESS")


def event_line(event: dict[str, Any]) -> str:
    """heatclient's ``event_log_formatter`` line."""
    when = str(event.get("event_time") or "").replace("T", " ")
    return (
        f"{when} [{event['resource_name']}]: {event['resource_status']}  "
        f"{event.get('resource_status_reason') or ''}"
    ).rstrip()


class EventFeed:
    """A stack's events after a marker, fetched incrementally.

    Each poll asks ``Stacks.events`` for what came after the last event it
    saw (Heat's event ``marker``), so a long wait costs O(new events) per
    poll, not O(every event)."""

    def __init__(
        self, stacks: StackReading, project: str, stack_id: str, *, resource: str | None = None
    ) -> None:
        self._stacks = stacks
        self._project = project
        self._stack_id = stack_id
        self._resource = resource
        self._marker: str | None = None

    def skip_existing(self) -> EventFeed:
        """Start after the events already recorded (call before an operation)."""
        last = self._stacks.events(
            self._project, self._stack_id, resource_name=self._resource, sort_dir="desc", limit=1
        )
        self._marker = last[0]["id"] if last else None
        return self

    def poll(self) -> list[dict[str, Any]]:
        found = self._stacks.events(
            self._project, self._stack_id, resource_name=self._resource, marker=self._marker
        )
        if found:
            self._marker = found[-1]["id"]
        return found


def _owned(events: list[dict[str, Any]], stack_name: str) -> list[dict[str, Any]]:
    """With several stacks waited on, name resources ``stack.resource`` (as
    heatclient names those of nested stacks)."""
    return [
        e
        if e["resource_name"] == stack_name
        else {**e, "resource_name": f"{stack_name}.{e['resource_name']}"}
        for e in events
    ]


class View(Protocol):
    needs_events: bool
    needs_resources: bool

    def show(self, frame: Frame) -> None: ...

    def close(self, frame: Frame) -> None: ...

    def abort(self) -> None:
        """Leave the terminal usable when the wait ends in an error."""


class PlainView:
    """Event lines, then ``Stack NAME STATUS`` (as heatclient's ``--wait``)."""

    needs_events = True
    needs_resources = False

    def __init__(self, console: Console) -> None:
        self._console = console
        self._told_stop = False

    def show(self, frame: Frame) -> None:
        for e in frame.events:
            self._console.print(event_line(e), markup=False, highlight=False)
        if frame.stopping and not self._told_stop:
            self._told_stop = True
            self._console.print("Stopping: running jobs finish recording their outcome.")

    def abort(self) -> None:
        pass

    def close(self, frame: Frame) -> None:
        """``frame`` has been shown already; only the verdict is left."""
        for s in frame.stacks:
            self._console.print(
                f"Stack {s['stack_name']} {s['stack_status']}", markup=False, highlight=False
            )


class LiveView:
    """A live summary redrawn on every poll; a final summary stays behind."""

    needs_events = False
    needs_resources = True

    def __init__(self, console: Console) -> None:
        self._console = console
        from rich.live import Live

        self._live = Live(console=console, auto_refresh=False, transient=True)
        self._live.start()

    def show(self, frame: Frame) -> None:
        self._live.update(Group(*_live_parts(frame)), refresh=True)

    def abort(self) -> None:
        self._live.stop()

    def close(self, frame: Frame) -> None:
        self._live.stop()
        for s in frame.stacks:
            style = _style(s)
            line = Text.assemble(
                (f"Stack {s['stack_name']} ", "bold"),
                (s["stack_status"], style),
                f"  ({frame.elapsed:.1f}s)",
            )
            self._console.print(line)
            for failure in _failures(frame.resources.get(s["id"], [])):
                self._console.print(failure)


def _live_parts(frame: Frame) -> list[RenderableType]:
    parts: list[RenderableType] = []
    for s in frame.stacks:
        rows = frame.resources.get(s["id"], [])
        parts.append(
            Text.assemble(
                (f"{s['stack_name']} ", "bold"),
                (s["stack_status"], _style(s)),
                f"  {frame.elapsed:.1f}s",
            )
        )
        counts = Counter(r["resource_status"] for r in rows)
        parts.append(Text("  " + " · ".join(f"{k} {n}" for k, n in sorted(counts.items()))))
        flight = [r for r in rows if r["resource_status"].endswith("_IN_PROGRESS")]
        if flight:
            table = Table("Resource", "Type", "Status", box=None, padding=(0, 2))
            for r in flight[:SHOWN_IN_FLIGHT]:
                table.add_row(r["resource_name"], r["resource_type"], r["resource_status"])
            if len(flight) > SHOWN_IN_FLIGHT:
                table.add_row(f"... and {len(flight) - SHOWN_IN_FLIGHT} more", "", "")
            parts.append(table)
        parts.extend(_failures(rows))
        parts.extend(_waiting(s, frame.hooks.get(s["id"], [])))
    if frame.stopping:
        parts.append(Text("Stopping: running jobs finish (Ctrl-C again to abandon them)."))
    return parts


def _waiting(stack: dict[str, Any], hooks: Sequence[dict[str, Any]]) -> list[Text]:
    """Resources stopped at a hook: nothing moves until someone clears them."""
    return [
        Text.assemble(
            ("  ⏸ ", "yellow"),
            (h["resource_name"], "bold"),
            f" waits at {h['hook_type']}: convection stack hook clear "
            f"{stack['stack_name']} {h['resource_name']} --{h['hook_type']}",
        )
        for h in hooks
    ]


def _style(stack: dict[str, Any]) -> str:
    status = str(stack["stack_status"])
    if status.endswith("_FAILED"):
        return "red"
    return "yellow" if in_progress(stack) else "green"


def _failures(rows: Sequence[dict[str, Any]]) -> list[Text]:
    return [
        Text.assemble(
            ("  ✗ ", "red"),
            (r["resource_name"], "bold"),
            ": ",
            str(r.get("resource_status_reason") or ""),
        )
        for r in rows
        if r["resource_status"].endswith("_FAILED")
    ]


def make_view(console: Console) -> View:
    return LiveView(console) if console.is_terminal else PlainView(console)


def wait_for(
    stacks: StackService,
    project: str,
    targets: Sequence[Target],
    console: Console,
    *,
    feeds: dict[str, EventFeed] | None = None,
) -> WaitResult:
    """Run the engine here until every target settles, or Ctrl-C.

    ``feeds`` are event feeds made (and marked) before the operations
    started, so only their events are shown; a target without one shows its
    events from the beginning."""
    view = make_view(console)
    feeds = dict(feeds or {})
    for t in targets:
        feeds.setdefault(t.stack_id, EventFeed(stacks, project, t.stack_id))
    poller = _StackPoller(stacks, project, tuple(targets), view, feeds)
    frame, interrupted = watch(stacks.engine, poller, view)
    view.close(frame)
    return WaitResult(tuple(targets), frame.stacks, interrupted)


F = TypeVar("F")
F_contra = TypeVar("F_contra", contravariant=True)


class Poller(Protocol[F]):
    """What a wait polls: one :class:`Watch` serves stacks and workflow
    executions alike, each with its own poller and views."""

    def poll(self, elapsed: float, stopping: bool) -> F:
        """What the store (or server) shows now; ``stopping`` once Ctrl-C
        asked the engine here to stop."""
        ...

    def settled(self, frame: F) -> bool:
        """Whether everything waited on has ended: the engine may stop."""
        ...

    def changed(self, frame: F) -> bool:
        """Whether ``frame`` saw anything the previous poll had not (only
        asked against a server, to back off while nothing moves)."""
        ...


class Shows(Protocol[F_contra]):
    """The part of a view that :func:`watch` draws with."""

    def show(self, frame: F_contra) -> None: ...

    def abort(self) -> None: ...


def watch(runner: Runner, poller: Poller[F], view: Shows[F]) -> tuple[F, bool]:
    """Run ``runner`` (the engine, or a :class:`ServerWatch`) on a new event
    loop next to ``poller``, showing each frame on ``view`` until the engine
    stops (settled, or Ctrl-C); the last frame and whether Ctrl-C stopped it.
    The view is aborted if the wait ends in an error; closing it is the
    caller's (it knows the verdict)."""
    import asyncio

    try:
        return asyncio.run(Watch(runner, poller, view).run())
    except BaseException:
        view.abort()
        raise


@dataclass(slots=True)
class StopSwitch:
    """Ctrl-C: the first press asks the engine to stop (running jobs record
    their outcome), the second cancels it (their leases lapse instead)."""

    requested: bool = False
    engine: asyncio.Future[None] | None = None

    def press(self) -> None:
        if self.requested and self.engine is not None:
            self.engine.cancel()
        self.requested = True


class Watch(Generic[F]):
    """The loop of a wait: the engine coroutine, and a poll every
    :func:`interval` that decides when the engine may stop."""

    def __init__(self, runner: Runner, poller: Poller[F], view: Shows[F]) -> None:
        self.runner = runner
        self.poller = poller
        self.view = view
        self.stop = StopSwitch()
        self.settled = False
        self.started = time.monotonic()
        #: A server does the work: nothing here to stop, polls to spare.
        self.remote = isinstance(runner, ServerWatch)
        self.quiet_polls = 0

    def until(self) -> bool:
        """The engine's stop condition: read from the last poll, so the
        engine's loop never waits on an extra query."""
        return self.stop.requested or self.settled

    async def run(self) -> tuple[F, bool]:
        import asyncio

        engine = asyncio.ensure_future(self.runner.run(until=self.until))
        self.stop.engine = engine
        restore = on_signals((signal.SIGINT,), self.stop.press)
        try:
            while True:
                began = time.monotonic()
                stopping = self.stop.requested and not self.remote
                frame = self.poller.poll(time.monotonic() - self.started, stopping)
                self.settled = self.poller.settled(frame)
                self.view.show(frame)
                if engine.done():
                    break
                spent = time.monotonic() - began
                await asyncio.wait({engine}, timeout=self.interval(spent, frame))
        finally:
            restore()
        failure = None if engine.cancelled() else engine.exception()
        if failure is not None:  # a bug in the engine: let main() report it
            raise failure
        return frame, self.stop.requested

    def interval(self, spent: float, frame: F) -> float:
        """Seconds to the next poll: a few times what the last one took;
        against a server, longer after each poll that saw nothing new."""
        base = min(MAX_POLL, max(MIN_POLL, 4 * spent))
        if not self.remote:
            return base
        self.quiet_polls = 0 if self.poller.changed(frame) else self.quiet_polls + 1
        return backoff(base, self.quiet_polls, MAX_POLL)


class _StackPoller:
    """The stacks a ``stack ... --wait`` waits on: their status, and what
    the view needs (resources and hooks, or new events)."""

    def __init__(
        self,
        stacks: StackReading,
        project: str,
        targets: tuple[Target, ...],
        view: View,
        feeds: dict[str, EventFeed],
    ) -> None:
        self.stacks = stacks
        self.project = project
        self.targets = targets
        self.view = view
        self.feeds = feeds
        self.seen: tuple[Any, ...] = ()

    def settled(self, frame: Frame) -> bool:
        return not any(in_progress(s) for s in frame.stacks)

    def changed(self, frame: Frame) -> bool:
        seen = (
            tuple(s["stack_status"] for s in frame.stacks),
            tuple(r["resource_status"] for rows in frame.resources.values() for r in rows),
            tuple(len(h) for h in frame.hooks.values()),
        )
        changed = bool(frame.events) or seen != self.seen
        self.seen = seen
        return changed

    def poll(self, elapsed: float, stopping: bool) -> Frame:
        frame = Frame(
            elapsed=elapsed,
            stacks=[self.stacks.show(self.project, t.stack_id) for t in self.targets],
            stopping=stopping,
        )
        if self.view.needs_resources:
            for t in self.targets:
                frame.resources[t.stack_id] = self.stacks.resources(self.project, t.stack_id)
                frame.hooks[t.stack_id] = self.stacks.hook_poll(self.project, t.stack_id)
        if self.view.needs_events:
            for t in self.targets:
                events = self.feeds[t.stack_id].poll()
                frame.events.extend(_owned(events, t.name) if len(self.targets) > 1 else events)
        return frame


def on_signals(
    signals: Sequence[signal.Signals], handler: Callable[[], None]
) -> Callable[[], None]:
    """Route ``signals`` to ``handler`` on the running loop; returns the undo.

    Where the loop cannot take signals (not the main thread, Windows), the
    default behaviour stays: Ctrl-C raises KeyboardInterrupt."""
    import asyncio

    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    for sig in signals:
        try:
            loop.add_signal_handler(sig, handler)
        except (NotImplementedError, RuntimeError, ValueError):
            continue
        installed.append(sig)

    def restore() -> None:
        for sig in installed:
            loop.remove_signal_handler(sig)

    return restore


def resume_hint(result: WaitResult, command: str) -> str:
    """How to pick the work up again after Ctrl-C; ``command`` is
    ``convection`` with this run's global flags."""
    names = " ".join(s["stack_name"] for s in result.stacks if in_progress(s))
    lines = [
        "Interrupted. What was running has been recorded; the operation is still in progress",
        "and resumes where it stopped. To resume it:",
    ]
    if names:
        lines.append(f"  {command} stack wait {names}")
    lines.append(f"  {command} engine --until-idle")
    return "\n".join(lines)


def rewatch_hint(result: WaitResult, command: str) -> str:
    """After Ctrl-C against a server: only the watching stopped."""
    names = " ".join(s["stack_name"] for s in result.stacks if in_progress(s))
    lines = ["Stopped watching. The server goes on with the operation."]
    if names:
        lines += ["To watch it again:", f"  {command} stack wait {names}"]
    return "\n".join(lines)
