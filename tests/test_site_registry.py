"""The site's page registry: every page is one of it, and every template reads its page's view and the
frame every page shares, nothing else (no registry of tasks or methods as a template global)."""

from __future__ import annotations

import typing

import jinja2
import jinja2.meta

from olmes.site import registry
from olmes.site.build import environment

FORMATTING = {"version", "DAGGER", "PARTIAL_MARK", "MISSING", "TABLE_OPEN_ROWS"}
"""The globals every template may use: how values are written (marks, the olmes version, how many rows a
long table shows at first); no data and no registry."""


def _names(env: jinja2.Environment, template: str) -> set[str]:
    """The names ``template`` reads from its context: those it neither sets nor imports (jinja counts a
    name set or a macro defined inside an ``if``, or imported outside the block that uses it, as read
    from the context too)."""
    tree = env.parse(env.loader.get_source(env, template)[0])
    assigned = {
        name.name
        for node in tree.find_all((jinja2.nodes.Assign, jinja2.nodes.AssignBlock))
        for name in [node.target, *node.target.find_all(jinja2.nodes.Name)]
        if isinstance(name, jinja2.nodes.Name)
    }
    imported = {
        name if isinstance(name, str) else name[1]
        for node in tree.find_all(jinja2.nodes.FromImport)
        for name in node.names
    }
    macros = {node.name for node in tree.find_all(jinja2.nodes.Macro)}
    return jinja2.meta.find_undeclared_variables(tree) - assigned - imported - macros


def _fields(view) -> set[str]:
    """The fields of the record a view returns (its return annotation, a TypedDict)."""
    record = typing.get_type_hints(view)["return"]
    return set(record.__required_keys__ | record.__optional_keys__)


def test_no_registry_is_a_template_global():
    env = environment()
    assert not {"TASKS", "METHODS", "NORMALIZATIONS", "tasks_by_norm"} & set(env.globals)
    assert set(env.globals) - set(jinja2.defaults.DEFAULT_NAMESPACE) == FORMATTING
    assert not {"display_name", "identity", "provenance"} & set(env.filters)  # no lookup into the site's data


def test_each_template_reads_only_its_view_and_the_frame():
    env = environment()
    shared = set(registry.Frame.__required_keys__) | FORMATTING
    for frame_template in ("base.html", "macros.html"):
        assert _names(env, frame_template) <= shared, frame_template
    templates = set()
    for entry in registry.PAGES:
        unknown = _names(env, entry.template) - _fields(entry.view) - shared
        assert not unknown, f"{entry.template} reads {sorted(unknown)}, not in its view"
        templates.add(entry.template)
    assert templates | {"base.html", "macros.html"} == set(env.list_templates(extensions=["html"]))


def test_the_registry_has_a_family_for_models_reported_models_and_tasks():
    families = {entry.template: entry for entry in registry.PAGES if isinstance(entry, registry.PageFamily)}
    assert {"model.html", "reported.html", "task.html", "subjects.html", "training.html"} == set(families)
    assert families["subjects.html"].title is not None  # in the navigation, each under its task's name
    assert all(
        families[name].title is None for name in ("model.html", "reported.html", "task.html", "training.html")
    )
