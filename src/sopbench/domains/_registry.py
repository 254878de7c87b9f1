"""Finding domains: built-in ones and third-party ones, through the ``sopbench.domains`` entry point."""

from __future__ import annotations

from importlib.metadata import entry_points

from ._mechanism import Domain

_registered: dict[str, Domain] = {}
PUBLISHED_DOMAINS = ("bank", "dmv", "healthcare", "online_market", "university", "library", "hotel")


def register_domain(domain: Domain, *, replace: bool = False) -> Domain:
    """Make ``domain`` available by name (``get_domain``, the CLI). Returns it, so it can decorate."""
    if domain.name in _registered and not replace and _registered[domain.name] is not domain:
        raise ValueError(f"a domain named {domain.name!r} is already registered")
    _registered[domain.name] = domain
    return domain


def unregister_domain(name: str) -> Domain | None:
    """Forget the domain registered as ``name`` (a test's or a notebook's own); returns it, or None if
    none was. A published or entry-point domain comes back the next time it is asked for."""
    return _registered.pop(name, None)


def _discover() -> None:
    for entry in entry_points(group="sopbench.domains"):
        if entry.name in _registered:
            continue
        domain = entry.load()
        if not isinstance(domain, Domain):
            raise TypeError(f"entry point sopbench.domains:{entry.name} is not a Domain ({entry.value})")
        _registered.setdefault(domain.name, domain)


class UnknownDomain(KeyError):
    """A domain name that no registered domain has (a ``KeyError``, naming the known ones)."""


def get_domain(name: str) -> Domain:
    """The domain called ``name``; raises ``KeyError`` listing the known ones."""
    if name not in _registered:
        if name in PUBLISHED_DOMAINS:
            import importlib

            importlib.import_module(f"sopbench.domains.{name}")
        else:
            _discover()
    if name not in _registered:
        raise UnknownDomain(f"unknown domain {name!r}; known: {', '.join(domain_names())}")
    return _registered[name]


def domain_names() -> list[str]:
    _discover()
    return sorted(_registered)
