"""std.email, as Mistral's ``SendEmailAction`` (``mistral/actions/std_actions.py``).

The message is built as Mistral builds it: plain text, or
multipart/alternative when ``html_body`` is given; ``Subject`` and
``Reply-To`` as UTF-8 headers; ``To`` and ``cc`` joined with ", "; the
envelope goes to cc + bcc + to. With ``smtp_password`` the client says
EHLO, STARTTLS, EHLO and logs in as ``from_addr`` (RFC 2487), else it sends
in the clear. ``smtp_server`` is ``host`` or ``host:port``. Any SMTP or
socket error fails the action with ``Failed to send an email message: <e>``.

One difference: STARTTLS verifies the server's certificate against the
system's trust store (``SSL_CERT_FILE`` to add one). Mistral's smtplib call
verifies nothing, so its ``smtp_password`` goes to whoever answers.

smtplib blocks, so the exchange runs in a thread; it is short and bounded
by ``timeout``.
"""

from __future__ import annotations

import asyncio
import smtplib
import ssl
from collections.abc import Mapping, Sequence
from email.header import Header
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from typing import Any, ClassVar, Final

from convection.workflows.actions.base import (
    ActionContext,
    ActionPlugin,
    Failure,
    InputParam,
    Outcome,
    Success,
    arguments,
)

DEFAULT_TIMEOUT: Final = 60.0
_ADDRS: Final = ("array", "string", "null")


def _addresses(value: Any) -> list[str]:
    if not value:
        return []
    return [value] if isinstance(value, str) else [str(v) for v in value]


def build_message(args: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The message text and the envelope's recipients."""
    body = args["body"] or "<No body>"
    message: MIMEText | MIMEMultipart
    if not args["html_body"]:
        message = MIMEText(body, _charset="utf-8")
    else:
        message = MIMEMultipart("alternative")
        message.attach(MIMEText(body, "plain", _charset="utf-8"))
        message.attach(MIMEText(args["html_body"], "html", _charset="utf-8"))
    to, cc = _addresses(args["to_addrs"]), _addresses(args["cc_addrs"])
    message["Subject"] = Header(args["subject"] or "<No subject>", "utf-8").encode()
    message["From"] = args["from_addr"]
    message["Reply-To"] = Header(", ".join(_addresses(args["reply_to"]))).encode()
    message["To"] = ", ".join(to)
    if cc:
        message["cc"] = ", ".join(cc)
    return message.as_string(), [*cc, *_addresses(args["bcc_addrs"]), *to]


def _send(args: Mapping[str, Any], text: str, recipients: Sequence[str]) -> None:
    with smtplib.SMTP(args["smtp_server"], timeout=float(args["timeout"])) as smtp:
        if args["smtp_password"] is not None:
            smtp.ehlo()
            smtp.starttls(context=ssl.create_default_context())
            smtp.ehlo()
            smtp.login(args["from_addr"], args["smtp_password"])
        smtp.sendmail(args["from_addr"], list(recipients), text)


class Email(ActionPlugin):
    name: ClassVar[str] = "std.email"
    description: ClassVar[str] = "Sends an email through an SMTP server; its result is null."
    input_schema: ClassVar[Mapping[str, InputParam]] = {
        "from_addr": InputParam("string", required=True, description="The sender."),
        "to_addrs": InputParam(("array", "string"), required=True, description="Recipients."),
        "smtp_server": InputParam("string", required=True, description="host or host:port."),
        "reply_to": InputParam(_ADDRS, description="Reply-To addresses."),
        "cc_addrs": InputParam(_ADDRS, description="Copied recipients."),
        "bcc_addrs": InputParam(_ADDRS, description="Blind-copied recipients."),
        "smtp_password": InputParam(
            ("string", "null"), secret=True, description="Log in as from_addr, over STARTTLS."
        ),
        "subject": InputParam(("string", "null"), description="'<No subject>' if not given."),
        "body": InputParam(("string", "null"), description="'<No body>' if not given."),
        "html_body": InputParam(("string", "null"), description="An HTML alternative."),
        "timeout": InputParam(
            "number", default=DEFAULT_TIMEOUT, description="Seconds (Convection's)."
        ),
    }

    async def run(self, ctx: ActionContext, params: Mapping[str, Any]) -> Outcome:
        args = arguments(self, params)
        text, recipients = build_message(args)
        try:
            await asyncio.to_thread(_send, args, text, recipients)
        except (smtplib.SMTPException, OSError) as exc:
            return Failure(f"Failed to send an email message: {exc}")
        return Success(None)


ACTIONS: Final[tuple[type[ActionPlugin], ...]] = (Email,)
