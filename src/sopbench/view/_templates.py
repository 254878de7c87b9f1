"""The templates shared by the viewer and the HTML report, and the escaping rule they keep.

The rule: everything a model, a user simulator or a task wrote is text, never markup. Templates are
rendered with autoescaping on for every file (no ``|safe`` on such text); the only markup inserted
as is is what this package builds itself with every text escaped (the SVG graphs). Pages also carry
a Content-Security-Policy that allows no inline script, so even a missed escape could not run one.
"""

from __future__ import annotations

from pathlib import Path

import jinja2

__all__ = ["CONTENT_SECURITY_POLICY", "STATIC_DIR", "stylesheet", "template_environment"]

STATIC_DIR = Path(__file__).with_name("static")

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)

_ENVIRONMENT: jinja2.Environment | None = None


def template_environment() -> jinja2.Environment:
    """The jinja2 environment of this package's templates: autoescaping everywhere, undefined names
    are errors (a misspelt field must not render as nothing)."""
    global _ENVIRONMENT
    if _ENVIRONMENT is None:
        _ENVIRONMENT = jinja2.Environment(
            loader=jinja2.PackageLoader("sopbench.view", "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
    return _ENVIRONMENT


def stylesheet() -> str:
    """The pages' CSS, for a self-contained file that inlines it (the HTML report)."""
    return (STATIC_DIR / "viewer.css").read_text(encoding="utf-8")
