"""Every setting, CLI command and protocol method is documented (house style, point 9)."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest

from kbls.cli import build_parser
from kbls.config import Config
from kbls.daemon.host import SharedDaemon
from kbls.lsp.server import make_server
from kbls.protocol import schema

DOCS = Path(__file__).resolve().parents[2] / "docs"
README = DOCS.parent / "README.md"


def _keys(struct: type, prefix: str = "") -> list[str]:
    out = []
    for field in msgspec.structs.fields(struct):
        out.append(prefix + field.name)
        if isinstance(field.type, type) and issubclass(field.type, msgspec.Struct):
            out.extend(_keys(field.type, prefix + field.name + "."))
    return out


@pytest.mark.parametrize("key", _keys(Config))
def test_every_config_key_is_in_the_configuration_doc(key: str) -> None:
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    assert re.search(rf"^\s*{re.escape(key.rsplit('.', 1)[-1])}:", text, re.M), key


def _commands() -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return sorted(sub.choices or ())


@pytest.mark.parametrize("command", _commands())
def test_every_cli_command_is_in_the_readme(command: str) -> None:
    assert f"kbls {command}" in README.read_text(encoding="utf-8")


@pytest.mark.parametrize("method", [*schema.METHODS, *schema.NOTIFICATIONS])
def test_every_custom_method_is_in_the_protocol_doc(method: str) -> None:
    text = (DOCS / "protocol.md").read_text(encoding="utf-8")
    assert f"## `{method}`" in text
    if method in schema.METHODS:  # and the server answers it
        server = make_server(SharedDaemon(watch=False))
        assert method in server.protocol.fm.features, method
    else:
        sources = (DOCS.parent / "server" / "kbls" / "lsp").glob("*.py")
        assert any(f'"{method}"' in path.read_text(encoding="utf-8") for path in sources), method
