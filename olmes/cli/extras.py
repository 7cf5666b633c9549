"""Which extra of the ``olmes`` package provides a module, read from the installed package's metadata.

The light install (``pip install olmes``) leaves out the extras (``models``: torch, transformers, ...;
``workflow``: snakemake); a command that needs one says which to install instead of a traceback.
The extras are defined once, in ``pyproject.toml``; this reads them back from the metadata pip wrote.
"""

from __future__ import annotations

import re
from importlib import metadata

_NAME = re.compile(r"[A-Za-z0-9._-]+")
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def extra_modules() -> list[tuple[str, str]]:
    """(import name, extra) of each requirement of an extra, in the metadata's order.

    A distribution's import name is taken to be its name with ``-`` as ``_`` (true of every extra's
    requirement today: torch, transformers, accelerate, gguf, safetensors, tqdm, snakemake, ...);
    an extra's ``olmes[...]`` (one extra including another) is left out.
    """
    try:
        requirements = metadata.requires("olmes") or []
    except metadata.PackageNotFoundError:
        return []
    found = []
    for requirement in requirements:
        extra = _EXTRA.search(requirement)
        name = _NAME.match(requirement).group()
        if extra and name != "olmes":
            found.append((name.replace("-", "_").lower(), extra.group(1)))
    return found


def extra_providing(module: str) -> str | None:
    """The first extra whose requirements hold the distribution imported as ``module``, if any."""
    top = module.split(".")[0].lower()
    return next((extra for name, extra in extra_modules() if name == top), None)


def install_hint(command: str, error: ModuleNotFoundError) -> str | None:
    """One line saying what to install when ``command`` failed on a module of an extra; else None."""
    extra = extra_providing(error.name or "")
    if extra is None:
        return None
    return (
        f'olmes {command} needs {error.name}, which this install leaves out: pip install "olmes[{extra}]" '
        f'(in a clone: pip install -e ".[{extra}]")'
    )
