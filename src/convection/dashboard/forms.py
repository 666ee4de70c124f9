"""What a dashboard form sends: read within limits, checked for CSRF, and
turned into the stack service's inputs.

Forms are plain ``application/x-www-form-urlencoded`` posts (a template is
pasted, or loaded from a file by the page's script, into a text field), so
no multipart parser is needed. A body is refused before it is read when
its declared length is over the limit, and as soon as it passes the limit
otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qs

from fastapi import Request

from convection.common import InvalidInput, LimitExceeded, Limits
from convection.hot import Document, load
from convection.model import StackInputs
from convection.service import StackPatch

#: Fields a form may have (a template, an environment, parameters...).
MAX_FIELDS = 64
#: Lines of ``key=value`` parameters.
MAX_PARAMETERS = 500


@dataclass(frozen=True, slots=True)
class Form:
    fields: dict[str, str]

    def get(self, name: str, default: str = "") -> str:
        return self.fields.get(name, default)

    def flag(self, name: str) -> bool:
        return self.fields.get(name, "") in ("on", "true", "1", "yes")


class FormTooLarge(LimitExceeded):
    pass


async def read_form(request: Request, limit: int) -> Form:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise FormTooLarge.single(f"The form ({declared} bytes) exceeds {limit} bytes.")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise FormTooLarge.single(f"The form exceeds {limit} bytes.")
        chunks.append(chunk)
    text = b"".join(chunks).decode("utf-8", errors="replace")
    try:
        parsed = parse_qs(text, keep_blank_values=True, max_num_fields=MAX_FIELDS)
    except ValueError:
        raise InvalidInput.single(f"A form has at most {MAX_FIELDS} fields.") from None
    return Form({k: v[-1] for k, v in parsed.items()})


def form_limit(limits: Limits) -> int:
    """A template and an environment, each at most the template limit."""
    return 2 * limits.max_template_size + 64 * 1024


def update_inputs(form: Form, limits: Limits) -> StackInputs | StackPatch:
    """An update's inputs: with ``existing`` (Heat's PATCH) the stored
    template, environment, files and parameters are kept unless given;
    without it a template is required, as for ``stack update``."""
    template = _document(form.get("template"), "template", limits)
    environment = _document(form.get("environment"), "environment", limits)
    environments = (environment,) if environment is not None else ()
    parameters = parameter_lines(form.get("parameters"))
    if form.flag("existing"):
        return StackPatch(template=template, environments=environments, parameters=parameters)
    if template is None:
        raise InvalidInput.single("template: a template is required (or tick 'keep existing').")
    return StackInputs(template=template, environments=environments, parameters=parameters)


def parameter_lines(text: str) -> dict[str, str]:
    """``key=value`` per line, as ``--parameter`` takes them; blank lines
    and ``#`` comments are skipped."""
    out: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        key, sep, value = stripped.partition("=")
        if not sep or not key.strip():
            raise InvalidInput.single(
                f"parameters:{number}: expected key=value, got {stripped[:80]!r}"
            )
        out[key.strip()] = value.strip()
        if len(out) > MAX_PARAMETERS:
            raise LimitExceeded.single(f"parameters: at most {MAX_PARAMETERS} lines.")
    return out


def _document(text: str, name: str, limits: Limits) -> Document | None:
    if not text.strip():
        return None
    size = len(text.encode("utf-8"))
    if size > limits.max_template_size:
        raise LimitExceeded.single(
            f"The {name} ({size} bytes) exceeds the maximum of {limits.max_template_size} bytes."
        )
    return load(text, name, limits=limits)
