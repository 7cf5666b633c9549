"""A chart's first state as SVG, drawn when the site is built, so a chart page shows its chart at first
paint instead of after the chart libraries have loaded, compiled and drawn it (about a second).

vl-convert runs the same vega and vega-lite in an embedded JavaScript engine; vega's SVG writer
escapes every text and attribute. The SVG goes into the page unescaped, and its text comes from
dataset and store names, so :func:`checked_svg` also refuses anything but the plain drawing elements
and attributes vega writes: no script, no event handler, no link. The page loads the chart libraries
only when a reader moves onto a chart (its tooltips) or picks a model (``site.js``).
"""

from __future__ import annotations

import functools
import html
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import altair as alt

from olmes.core.errors import OlmesError

VEGA_LITE_VERSION = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
"""The vega-lite version altair writes specs for (major.minor), which vl-convert draws them with."""
SVG_NS = "{http://www.w3.org/2000/svg}"
ELEMENTS = frozenset(
    {"svg", "g", "path", "line", "rect", "text", "tspan", "title", "desc", "defs", "clipPath"}
)
"""What vega's SVG writer draws with; anything else in a chart's SVG is refused."""
_SAFE_URL = re.compile(r"url\(#[\w-]+\)")


MEASURE_FONT = "DejaVu Sans"
"""The font the build measures a chart's text with (shipped in ``olmes/site/fonts/``, so every machine
measures alike): the sans-serif of Linux browsers, and wider than the system fonts of the others (SF,
Segoe UI, Roboto), so a label drawn by a reader's browser fits the space the build measured for it;
the SVG names the chart's own fonts. The chart drawn live by vega measures in the browser."""
FONTS = Path(__file__).parent / "fonts"


@functools.cache
def _registered_fonts() -> None:
    import vl_convert

    vl_convert.register_font_directory(str(FONTS))


def static_svg(spec: dict, chart_id: str) -> str:
    """The SVG vega draws for the vega-lite ``spec`` (a dict with its data inlined), its text measured
    in :data:`MEASURE_FONT` and shown in the spec's font; checked."""
    import vl_convert

    _registered_fonts()
    config = spec.get("config", {})
    measured = {**spec, "config": {**config, "font": MEASURE_FONT}}
    try:
        svg = vl_convert.vegalite_to_svg(measured, vl_version=VEGA_LITE_VERSION)
    except ValueError as error:
        reason = str(error).splitlines()[0]
        raise OlmesError(f"chart {chart_id}: vl-convert could not draw it: {reason}") from error
    if "font" in config:
        svg = svg.replace(f'font-family="{MEASURE_FONT}"', f'font-family="{html.escape(config["font"])}"')
    return checked_svg(svg, chart_id)


def checked_svg(svg: str, chart_id: str) -> str:
    """``svg`` if it is one ``<svg>`` element of :data:`ELEMENTS` only, with no event-handler attribute
    and no reference but to its own ids; else an :class:`OlmesError` (the site is not built)."""
    try:
        root = ET.fromstring(svg)
    except ET.ParseError as error:
        raise OlmesError(f"chart {chart_id}: its SVG does not parse ({error})") from error
    if root.tag != f"{SVG_NS}svg":
        raise OlmesError(f"chart {chart_id}: its SVG's root is <{root.tag}>, not <svg>")
    for element in root.iter():
        tag = element.tag.removeprefix(SVG_NS)
        if tag not in ELEMENTS:
            raise OlmesError(f"chart {chart_id}: its SVG has a <{tag}> element, which a chart never draws")
        for name, value in element.attrib.items():
            local = name.rsplit("}", 1)[-1].lower()
            reference = "url(" in value and not _SAFE_URL.fullmatch(value)
            if local.startswith("on") or local == "href" or reference:
                raise OlmesError(f"chart {chart_id}: its SVG has the attribute {local}={value!r} on <{tag}>")
    return svg
