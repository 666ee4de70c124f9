"""std.email against a real SMTP server (aiosmtpd) on loopback, built as
Mistral's SendEmailAction builds the message."""

from __future__ import annotations

import email
import socket
from collections.abc import Iterator
from email.message import Message
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import Envelope, Session

from convection.workflows import Failure, Success, default_registry

from .conftest import CTX, run


class Inbox:
    def __init__(self) -> None:
        self.envelopes: list[Envelope] = []

    async def handle_DATA(self, server: Any, session: Session, envelope: Envelope) -> str:
        self.envelopes.append(envelope)
        return "250 Message accepted for delivery"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed: nothing listens there until used


@pytest.fixture
def smtp() -> Iterator[tuple[str, Inbox]]:
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        yield f"127.0.0.1:{controller.port}", inbox
    finally:
        controller.stop()


def send(params: dict[str, Any]) -> Any:
    return run(default_registry().lookup("std.email")().run(CTX, params))


def parsed(envelope: Envelope) -> Message:
    content = envelope.content
    assert isinstance(content, bytes)
    return email.message_from_bytes(content)


def decoded(header: str) -> str:
    return str(email.header.make_header(email.header.decode_header(header)))


def test_plain_message_and_envelope(smtp: tuple[str, Inbox]) -> None:
    server, inbox = smtp
    outcome = send({
        "from_addr": "wf@example.com",
        "to_addrs": ["a@example.com", "b@example.com"],
        "cc_addrs": ["c@example.com"],
        "bcc_addrs": ["d@example.com"],
        "reply_to": ["ops@example.com"],
        "subject": "Déploiement fini",
        "body": "All done.",
        "smtp_server": server,
    })  # fmt: skip
    assert outcome == Success(None)
    [env] = inbox.envelopes
    assert env.mail_from == "wf@example.com"
    assert env.rcpt_tos == ["c@example.com", "d@example.com", "a@example.com", "b@example.com"]
    msg = parsed(env)
    assert decoded(msg["Subject"]) == "Déploiement fini"
    assert msg["To"] == "a@example.com, b@example.com"
    assert msg["cc"] == "c@example.com"
    assert "d@example.com" not in env.content.decode()  # type: ignore[union-attr]
    assert msg["Reply-To"] == "ops@example.com"
    assert msg.get_content_type() == "text/plain"
    assert msg.get_payload(decode=True) == b"All done."


def test_defaults_and_html_alternative(smtp: tuple[str, Inbox]) -> None:
    server, inbox = smtp
    assert send({"from_addr": "wf@x", "to_addrs": ["a@x"], "smtp_server": server}) == Success(None)
    msg = parsed(inbox.envelopes[0])
    assert msg["Subject"] == "=?utf-8?q?=3CNo_subject=3E?="  # a UTF-8 Header, as Mistral's
    assert decoded(msg["Subject"]) == "<No subject>"
    assert msg.get_payload(decode=True) == b"<No body>"
    send({
        "from_addr": "wf@x", "to_addrs": ["a@x"], "smtp_server": server,
        "body": "plain", "html_body": "<b>rich</b>",
    })  # fmt: skip
    msg = parsed(inbox.envelopes[1])
    assert msg.get_content_type() == "multipart/alternative"
    parts = [(p.get_content_type(), p.get_payload(decode=True)) for p in msg.get_payload()]  # type: ignore[union-attr]
    assert parts == [("text/plain", b"plain"), ("text/html", b"<b>rich</b>")]


def test_a_server_that_does_not_answer_fails_in_mistrals_words() -> None:
    outcome = send({
        "from_addr": "wf@x", "to_addrs": ["a@x"], "smtp_server": f"127.0.0.1:{free_port()}",
        "smtp_password": "hunter2", "timeout": 5,
    })  # fmt: skip
    assert isinstance(outcome, Failure)
    assert outcome.error.startswith("Failed to send an email message: ")
    assert "hunter2" not in outcome.error


def test_a_password_requires_starttls(smtp: tuple[str, Inbox]) -> None:
    """A server without STARTTLS never receives the password (nor the mail)."""
    server, inbox = smtp
    outcome = send({
        "from_addr": "wf@x", "to_addrs": ["a@x"], "smtp_server": server,
        "smtp_password": "hunter2",
    })  # fmt: skip
    assert isinstance(outcome, Failure)
    assert "STARTTLS" in outcome.error and "hunter2" not in outcome.error
    assert inbox.envelopes == []
