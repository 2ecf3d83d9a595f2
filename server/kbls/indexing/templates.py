"""Template markup in notes: Hugo shortcodes (`{{< tabpane text=true >}}`, `{{% param vers %}}`),
Liquid tags (`{% include x.html %}`) and `{{ … }}` expressions, taken out of a block's text
before it is matched by words or embedded.

The markup is noise to both signals: `tabpane text=true` is in 152 pages of the OpenTelemetry
docs, so its words tie unrelated pages together lexically and pull their vectors towards each
other. What the author wrote for a reader stays: the text between an opening and a closing
shortcode is not touched, and a shortcode's quoted arguments (`{{% tab "Linux/macOS" %}}`,
`header="Maven (pom.xml)"`, `name="otel.javaagent.logging"`) are kept as words. In a code
block only Hugo's shortcodes go (`otelcol_{{% param vers %}}_linux_amd64.tar.gz` is rendered
with the version there): `{{ .Values.image }}` in a Helm example is the example.
"""

from __future__ import annotations

import re

#: `{{< … >}}` / `{{% … %}}` (Hugo shortcodes, their `/closing` forms and `{{</* … */>}}`
#: escapes), then Liquid `{% … %}` and `{{ … }}`; none spans a blank line.
_SHORTCODE = (
    r"\{\{<(?:[^>\n]|>(?!\}\})|\n(?!\s*\n))*?>\}\}"
    r"|\{\{%(?:[^%\n]|%(?!\}\})|\n(?!\s*\n))*?%\}\}"
)
_SHORTCODES = re.compile(_SHORTCODE)
_TEMPLATE = re.compile(
    _SHORTCODE + r"|\{%(?:[^%\n]|%(?!\})|\n(?!\s*\n))*?%\}" r"|\{\{(?:[^}\n]|\}(?!\})|\n(?!\s*\n))*?\}\}"
)
#: an inline code span (its delimiters kept by the split).
_INLINE_CODE = re.compile(r"(`+[^`\n]*`+)")
#: arguments of a shortcode that are text for a reader: quoted positional ones and these keys.
_QUOTED = re.compile(r'(?:^|\s)(?:(?:header|title|caption|alt|name)=)?"([^"\n]*)"')


def _spoken(markup: str) -> str:
    """The words a reader would see of one template tag: its quoted arguments, else nothing."""
    inner = markup[3:-3] if markup.startswith(("{{<", "{{%")) else markup[2:-2]
    values = (match.group(1).strip() for match in _QUOTED.finditer(inner))
    return " ".join(value for value in values if value and not value.startswith(("/", "http")))


def has_templates(text: str) -> bool:
    """Whether `text` may hold template markup (a cheap test before the pattern)."""
    return "{{" in text or "{%" in text


def strip_templates(text: str, code: bool = False) -> str:
    """`text` without template markup (of a `code` block: without Hugo shortcodes only); a
    tag's quoted text arguments stay in its place. Lines keep their count (a removed tag
    spanning lines leaves its newlines), so a chunk's line range still points at its lines."""
    if not has_templates(text):
        return text

    def replace(match: re.Match[str]) -> str:
        markup = match.group(0)
        return _spoken(markup) + "\n" * markup.count("\n")

    if code:
        return _SHORTCODES.sub(replace, text)
    # Inline code is an example, as a code block is: `{{ page.title }}` in a sentence stays.
    parts = _INLINE_CODE.split(text)
    return "".join(part if i % 2 else _TEMPLATE.sub(replace, part) for i, part in enumerate(parts))
